#!/usr/bin/env bash
# Issue 34 on the H200: live dpor proves the sequential warmup of the queue-fed
# tools/pipelines/train_queue_torch.py (its Queue, Barrier and Event as steps of their own), and
# racelab check of that pipeline says the lazy variant fails and the sequential one is proven.
# Results: docs/results/queue-proof-h200-2026-12-04/.
#   tools/gpu/queue-proofs.sh OUT [dpor|check]   (one device call each: about 170 s and 320 s)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/queue-proofs.sh OUT [dpor|check]}
what=${2:-dpor}
mkdir -p "$out"
RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# Inductor compiles in the calling thread (docs/live.md, "Real torch on the CPU, in CI").
export TORCHINDUCTOR_COMPILE_THREADS=1
racelab=build/gpu/harness/racelab
start=$(date +%s)
if [ "$what" = dpor ]; then
  timeout 280 "$racelab" live python --interpose torch-2.11 --dict __main__._attention_kernels \
    --strategy dpor --executions 20000 --hang-timeout 90 --time-limit 240 --out "$out/q" \
    tools/pipelines/train_queue_torch.py -- --warmup sequential --batches 1 \
    > "$out/queue-b1-dpor.log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> "$out/queue-b1-dpor.log"
  cp "$out/q/report.json" "$out/queue-b1-dpor-report.json"
else
  # One batch gives each drafter nothing to race on (one of them takes it): the lazy variant
  # runs two batches, so that both drafters compile.
  timeout 440 "$racelab" check --interpose torch-2.11 --dict __main__._attention_kernels \
    --no-memory --executions 6 --proof-executions 2000 --native-runs 1 --hang-timeout 90 \
    --time-limit 200 --out "$out/queue" --variant "--warmup none --batches 2" \
    --variant "--warmup sequential --batches 1" tools/pipelines/train_queue_torch.py \
    > "$out/queue-check.log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" >> "$out/queue-check.log"
  cp "$out/queue/check.json" "$out/queue-check.json"
  cp "$out"/queue/*/proof/report.json "$out/queue-check-sequential-proof-report.json" 2>/dev/null
fi

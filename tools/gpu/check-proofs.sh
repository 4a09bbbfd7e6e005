#!/usr/bin/env bash
# Issue 34 on the H200: racelab check proving and looking natively, with real torch 2.11.
#  1. drafter_torch.py, 2 drafters: the lazy variant fails under control, the sequential warmup is
#     proven by the dpor proof after the hunt;
#  2. train_queue_torch.py with chunked SDPA and no warmup (F13: the first SDPA calls of two
#     drafters race on the lazily initialised priority order inside native code, so the
#     checkpoint's recompute disagrees with its forward): control never reaches the
#     CheckpointError; the native runs see it, and the variant fails in those words, never
#     "clean" or "proven";
#  3. train_queue_torch.py's sequential warmup proven by live dpor (its Queue, Barrier and Event are
#     steps of their own: docs/live.md, "Proofs"; the acceptance asks for at most 60 s), and
#     racelab check of the same pipeline: the lazy variant fails, the sequential one is proven.
#   tools/gpu/check-proofs.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/check-proofs.sh OUT}
mkdir -p "$out"
RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
racelab=build/gpu/harness/racelab
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/machine.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, sys.version)' >> "$out/machine.txt" 2>&1
start=$(date +%s)
timeout 240 "$racelab" check --interpose torch-2.11 --no-memory --executions 2 \
  --proof-executions 200 --hang-timeout 90 --time-limit 150 --out "$out/drafter" \
  --variant "--warmup none" --variant "--warmup sequential" \
  tools/pipelines/drafter_torch.py -- --drafters 2 > "$out/drafter.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$out/drafter.log"
start=$(date +%s)
timeout 300 "$racelab" check --interpose torch-2.11 --dict __main__._attention_kernels --no-memory \
  --no-prove --executions 2 --native-runs 2 --hang-timeout 90 --time-limit 120 --out "$out/chunked" \
  --variant "--attention sdpa_chunked --warmup none" \
  tools/pipelines/train_queue_torch.py -- --batches 24 --max-len 2048 --dim 512 --heads 8 \
  > "$out/chunked.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$out/chunked.log"
start=$(date +%s)
timeout 300 "$racelab" live python --interpose torch-2.11 --dict __main__._attention_kernels \
  --strategy dpor --executions 20000 --hang-timeout 90 --time-limit 240 --out "$out/queue-dpor" \
  tools/pipelines/train_queue_torch.py -- --warmup sequential > "$out/queue-dpor.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$out/queue-dpor.log"
cp "$out/queue-dpor/report.json" "$out/queue-dpor-report.json" 2>/dev/null
start=$(date +%s)
timeout 420 "$racelab" check --interpose torch-2.11 --dict __main__._attention_kernels --no-memory \
  --executions 2 --proof-executions 20000 --native-runs 1 --hang-timeout 90 --time-limit 300 \
  --out "$out/queue" --variant "--warmup none" --variant "--warmup sequential" \
  tools/pipelines/train_queue_torch.py > "$out/queue.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s" >> "$out/queue.log"
# What the files say, for the results page.
for f in drafter chunked queue; do
  cp "$out/$f/check.json" "$out/$f-check.json" 2>/dev/null
done
tail -n 30 "$out"/drafter.log "$out"/chunked.log "$out"/queue-dpor.log "$out"/queue.log

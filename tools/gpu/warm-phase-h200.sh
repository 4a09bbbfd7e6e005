#!/usr/bin/env bash
# Issue 36 on the H200: the warm phase from racelab's capture on the user-style pipeline
# (tools/pipelines/train_queue_torch.py: two nn.Module drafters on cuda:0, AdamW, a queue feed,
# the sequential warmup on main). Expected: flex padded is stable from the first step with both
# drafters running, chunked SDPA is not stable (late growth, named), a 2-batch run is not
# measured. Writes the stats JSON and alloc report's output of each run under OUT (flat).
#   tools/gpu/warm-phase-h200.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/warm-phase-h200.sh OUT}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! [ -x build/gpu/harness/racelab ] || [ "${BUILD:-1}" = 1 ]; then
  RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
fi
racelab=build/gpu/harness/racelab
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, sys; print(torch.__version__, sys.version)'; } > "$out/machine.txt" 2>&1
work=$(mktemp -d)
# RUNS="flex_compiled:48:a flex_compiled:48:b" repeats a run (attention:batches[:tag]).
for v in ${RUNS:-flex_compiled:48 sdpa_chunked:48 flex_compiled:2}; do
  IFS=: read -r attention batches tag <<< "$v"
  name=$attention-$batches${tag:+-$tag}
  timeout "${RUN_LIMIT:-150}" "$racelab" live python --uncontrolled --interpose torch-2.11 \
    --alloc "$work/$name/alloc" --out "$work/$name/plain" tools/pipelines/train_queue_torch.py -- \
    --attention "$attention" --warmup sequential --batches "$batches" --max-len 4096 --dim 512 \
    --heads 8 > "$work/$name.capture.log" 2>&1
  { tail -n 4 "$work/$name.capture.log"
    echo "\$ racelab alloc report snap_train_queue_torch.cuda0.pickle --expect stable"
    (cd "$work/$name/alloc" && "$OLDPWD/$racelab" alloc report snap_*.pickle --expect stable)
    echo "exit $?"; } > "$out/$name.report.txt" 2>&1
  cp "$work/$name/alloc/stats_train_queue_torch.cuda0.json" "$out/$name.stats.json" 2>/dev/null
  cat "$out/$name.report.txt"
done

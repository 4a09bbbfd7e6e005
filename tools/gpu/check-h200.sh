#!/usr/bin/env bash
# Issue 22 on the H200: racelab check on the user-style pipeline (tools/pipelines/train_queue_torch.py:
# nn.Module drafters, AdamW, a queue feed; flex_attention padded vs chunked SDPA; warmup none vs
# sequential). Expected: lazy flex compile fails (deadlock or fx_trace_error), the sequential
# warmup is clean; chunked is not stable, flex padded is. Writes everything under OUT.
#   tools/gpu/check-h200.sh OUT [build]   # "build": only build racelab (a separate call)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/check-h200.sh OUT [build]}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "${2:-}" = build ] || ! [ -x build/gpu/harness/racelab ]; then
  RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
  [ "${2:-}" = build ] && { tail -n 3 "$out/build.log"; exit 0; }
fi
racelab=build/gpu/harness/racelab
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/machine.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, sys.version)' >> "$out/machine.txt" 2>&1
args=(--batches "${BATCHES:-24}" --max-len "${MAX_LEN:-2048}" --dim 512 --heads 8)
variants=(--variant "--attention flex_compiled --warmup none" --variant "--attention flex_compiled --warmup sequential"
          --variant "--attention sdpa_chunked --warmup none" --variant "--attention sdpa_chunked --warmup sequential")
timeout "${LIMIT:-560}" "$racelab" check --interpose torch-2.11 --dict __main__._attention_kernels \
  --hang-timeout 90 --strategy "${STRATEGY:-random}" --executions "${EXECUTIONS:-4}" \
  --time-limit "${RUN_LIMIT:-120}" --out "$out/check" "${variants[@]}" \
  tools/pipelines/train_queue_torch.py -- "${args[@]}" \
  > "$out/check.log" 2>&1
echo "exit $?" >> "$out/check.log"
cat "$out/check.log"

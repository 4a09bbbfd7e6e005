#!/usr/bin/env bash
# Issue 18 on the H200: the user-style queue-fed pipeline (tools/pipelines/train_queue_torch.py)
# under racelab live python with real torch 2.11: lazy compile must reach the deadlock or the FX
# tracing error, the sequential warmup must be clean over 10 executions, and nothing may hang or
# be lost control of. Writes everything under OUT.
#   tools/gpu/train-queue.sh OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/train-queue.sh OUT}
mkdir -p "$out"
RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail "$out/build.log"; exit 1; }
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
racelab=build/gpu/harness/racelab
script=tools/pipelines/train_queue_torch.py
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/machine.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, sys.version)' >> "$out/machine.txt" 2>&1
# A natural run first (no racelab): the script works, and what it does on its own.
timeout 80 python3 "$script" --warmup none > "$out/natural-lazy.log" 2>&1; echo "exit $?" >> "$out/natural-lazy.log"
common=(--interpose torch-2.11 --dict __main__._attention_kernels --hang-timeout 90 --cycle-confirm-ms 2000)
timeout 170 "$racelab" live python "${common[@]}" --strategy random --executions 15 --time-limit 130 \
  --expect deadlock --out "$out/lazy" "$script" -- --warmup none > "$out/lazy.log" 2>&1
echo "exit $?" >> "$out/lazy.log"
timeout 140 "$racelab" live python "${common[@]}" --strategy pct --executions 10 --time-limit 110 \
  --out "$out/sequential" "$script" -- --warmup sequential > "$out/sequential.log" 2>&1
echo "exit $?" >> "$out/sequential.log"
tail -n 8 "$out"/*.log

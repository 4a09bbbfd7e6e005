#!/usr/bin/env bash
# Issue 34 on the H200: live dpor on the real torch 2.11 pipelines (the torch-2.11 table's point
# declarations), against bounded dfs. Builds racelab (RACELAB_TORCH=OFF: live python needs no
# LibTorch workload), then runs each case in priority order within BUDGET seconds, shortening or
# skipping the last ones; every case's --out folder and log are packed into OUT/NAME.tgz.
#   docs/results/live-dpor-h200-2026-12-04/run.sh OUT [BUDGET_S]
set -uo pipefail
cd "$(dirname "$0")/../../.."
out=${1:?usage: run.sh OUT [BUDGET_S]}
budget=${2:-540}
start=$(date +%s)
work=/tmp/live-dpor
rm -rf "$work"; mkdir -p "$out" "$work"
sum=$work/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  python3 -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
  echo "cores $(nproc)"; git log -1 --format='tree at %h %s'; } > "$work/machine.txt" 2>&1
cp "$work/machine.txt" "$out/"
t0=$(date +%s)
RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" > "$sum"
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
racelab=$PWD/build/gpu/harness/racelab
common=(--interpose torch-2.11 --executions 1000000 --hang-timeout 90 --cycle-confirm-ms 2000)
case_() {  # NAME PLANNED_TIME_LIMIT RACELAB_ARGS...
  local name=$1 tl=$2; shift 2
  local left=$(( budget - ($(date +%s) - start) ))
  (( tl > left - 45 )) && tl=$(( left - 45 ))
  if (( tl < 20 )); then echo "$name: skipped, ${left} s of the budget left" >> "$sum"; return; fi
  echo "+ racelab live python ${common[*]} --time-limit $tl --out $name $*" > "$work/$name.log"
  local t=$(date +%s.%N)
  timeout $(( tl + 40 )) "$racelab" live python "${common[@]}" --time-limit "$tl" \
    --out "$work/$name" "$@" >> "$work/$name.log" 2>&1
  local rc=$?
  local wall=$(python3 -c "import time; print(round(time.time() - $t, 1))")
  echo "exit $rc, wall ${wall} s" >> "$work/$name.log"
  { echo "== $name: exit $rc, wall ${wall} s, --time-limit $tl"; tail -n 12 "$work/$name.log"; } >> "$sum"
  tar czf "$out/$name.tgz" -C "$work" "$name" "$name.log"
  cp "$sum" "$out/summary.txt"
}
drafter=tools/pipelines/drafter_torch.py
queue=tools/pipelines/train_queue_torch.py
case_ d2-seq-dpor 90 --strategy dpor $drafter -- --drafters 2 --warmup sequential
case_ d4-seq-dpor 90 --strategy dpor $drafter -- --drafters 4 --warmup sequential
case_ queue-seq-dpor 90 --strategy dpor --dict __main__._attention_kernels $queue -- --warmup sequential
case_ d2-none-dpor 60 --strategy dpor $drafter -- --drafters 2 --warmup none
case_ d2-seq-dfs 60 --strategy dfs $drafter -- --drafters 2 --warmup sequential
cp "$sum" "$out/summary.txt"
cat "$sum"

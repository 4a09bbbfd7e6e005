#!/usr/bin/env bash
# Issue 34 on the H200, on the current tree: the live proofs and searches the acceptance asks for,
# each a named case, run in the order given within BUDGET seconds (a case's time limit shrinks to
# what is left, less 120 s for torch's import, CUDA's start and the report; one that would get
# under 20 s is skipped and says so). Builds racelab with the
# Python bridge only (RACELAB_TORCH=OFF: live python needs no LibTorch workload) unless
# build/gpu has it. Every case's --out folder and log are packed into OUT/NAME.tgz; OUT/summary.txt
# holds each case's exit, wall time and last lines.
#   tools/gpu/issue34-h200.sh OUT BUDGET_S CASE...
# With RACELAB_STACKS_EVERY=S in the environment, every Python process (racelab's coordinator and
# workers, the native runs) writes its threads' stacks every S seconds next to the case's folder,
# NAME-stacks/stacks-PID.txt (tools/gpu/stackdump/sitecustomize.py): what a process waits on.
# BUDGET_S must be at most the device time the call really has (the run tool's limit_s, less the
# start): a case given more is killed with the call, and only its log, copied every 10 s, is left.
# Cases:
#   d2-seq, d4-seq     live dpor, drafter_torch.py with 2 / 4 drafters, sequential warmup
#   queue-seq          live dpor, train_queue_torch.py, sequential warmup, its default 4 batches
#   queue-seq-b1       the same with one batch
#   queue-seq-b2, queue-seq-b2-jobs   two batches, in one process and over 8 worker processes
#   queue-seq-jobs     queue-seq over 8 worker processes (--jobs 8, docs/live.md "Many processes")
#   queue-seq-jobsN    the same over N (queue-seq-jobs12: 12)
#   d2-none-all        live dpor --all-findings, drafter_torch.py, 2 drafters, no warmup
#   d2-none-deadlock   live dpor --expect deadlock, drafter_torch.py, 2 drafters, no warmup
#   check-queue        racelab check of train_queue_torch.py: lazy (2 batches), sequential (1 batch)
#   check-queue-jobs   the same with its default 4 batches, the proof over 12 processes (--proof-jobs)
#   cost-native        tools/gpu/queue_cost.py: an execution's time without racelab, by batches,
#                      with and without torch._dynamo.reset() between runs
#   cost-live-1, cost-live-13   live dpor of train_queue_torch.py (sequential, 4 batches) cut at 1
#                      and 13 executions: racelab's time per execution is the difference / 12
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/issue34-h200.sh OUT BUDGET_S CASE...}
budget=${2:?usage: tools/gpu/issue34-h200.sh OUT BUDGET_S CASE...}
shift 2
start=$(date +%s)
work=/tmp/issue34
rm -rf "$work"; mkdir -p "$out" "$work"
sum=$work/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv
  python3 -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0])'
  echo "cores $(nproc)"; git log -1 --format='tree at %h %s' 2>/dev/null; } > "$work/machine.txt" 2>&1
cp "$work/machine.txt" "$out/"
export PYTHONUNBUFFERED=1
# Inductor compiles in the calling thread (docs/live.md, "Real torch on the CPU, in CI").
export TORCHINDUCTOR_COMPILE_THREADS=1
# The embedded interpreter does not know a virtual environment torch may live in.
export PYTHONPATH=$(python3 -c 'import site; print(":".join(site.getsitepackages()))')
[ -n "${RACELAB_STACKS_EVERY:-}" ] && export PYTHONPATH="$PWD/tools/gpu/stackdump:$PYTHONPATH"
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! [ -x build/gpu/harness/racelab ]; then
  t0=$(date +%s)
  RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s" > "$sum"
fi
racelab=$PWD/build/gpu/harness/racelab
# A cold compile takes longer than the default hang timeout; live python's default cap is 10
# executions, which would cut a proof short.
base=(live python --interpose torch-2.11 --hang-timeout 90 --cycle-confirm-ms 2000)
live=("${base[@]}" --executions 1000000)
drafter=tools/pipelines/drafter_torch.py
queue=tools/pipelines/train_queue_torch.py
qdict=(--dict __main__._attention_kernels)

run_() {  # NAME TIME_LIMIT RACELAB_ARGS... (the args may hold @OUT@ and @TL@)
  local name=$1 tl=$2; shift 2
  local left=$(( budget - ($(date +%s) - start) ))
  (( tl > left - 120 )) && tl=$(( left - 120 ))
  if (( tl < 20 )); then echo "== $name: skipped, ${left} s of the budget left" >> "$sum"; cp "$sum" "$out/"; return; fi
  local args=() a
  for a in "$@"; do a=${a//@OUT@/$work/$name}; args+=("${a//@TL@/$tl}"); done
  echo "+ racelab ${args[*]}" > "$work/$name.log"
  local t=$(date +%s.%N)
  export RACELAB_STACKS_DIR=$work/$name-stacks
  # What the case printed so far reaches OUT every 10 s: a call that runs out of device time
  # still brings back how far its case came.
  ( while sleep 10; do cp "$work/$name.log" "$out/$name.log" 2>/dev/null; done ) &
  local copier=$!
  timeout $(( tl + 120 )) "$racelab" "${args[@]}" >> "$work/$name.log" 2>&1
  local rc=$?
  kill "$copier" 2>/dev/null; wait "$copier" 2>/dev/null
  cp "$work/$name.log" "$out/$name.log"
  local wall=$(python3 -c "import time; print(round(time.time() - $t, 1))")
  echo "exit $rc, wall ${wall} s" >> "$work/$name.log"
  { echo "== $name: exit $rc, wall ${wall} s, time limit $tl"; tail -n 14 "$work/$name.log"; } >> "$sum"
  tar czf "$out/$name.tgz" -C "$work" "$name" "$name.log" $([ -d "$work/$name-stacks" ] && echo "$name-stacks") 2>/dev/null
  cp "$sum" "$out/summary.txt"
}

for c in "$@"; do
  case $c in
    d2-seq) run_ "$c" 60 "${live[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor $drafter -- --drafters 2 --warmup sequential ;;
    d4-seq) run_ "$c" 60 "${live[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor $drafter -- --drafters 4 --warmup sequential ;;
    queue-seq) run_ "$c" 180 "${live[@]}" "${qdict[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor $queue -- --warmup sequential ;;
    queue-seq-b2) run_ "$c" 100 "${live[@]}" "${qdict[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor $queue -- --warmup sequential --batches 2 ;;
    queue-seq-b2-jobs) run_ "$c" 150 "${live[@]}" "${qdict[@]}" --jobs 8 --time-limit @TL@ --out @OUT@ --strategy dpor $queue -- --warmup sequential --batches 2 ;;
    queue-seq-jobs) run_ "$c" 240 "${live[@]}" "${qdict[@]}" --jobs 8 --time-limit @TL@ --out @OUT@ --strategy dpor $queue -- --warmup sequential ;;
    queue-seq-jobs[0-9]*) run_ "$c" 200 "${live[@]}" "${qdict[@]}" --jobs "${c#queue-seq-jobs}" --time-limit @TL@ --out @OUT@ --strategy dpor $queue -- --warmup sequential ;;
    queue-seq-b1) run_ "$c" 90 "${live[@]}" "${qdict[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor $queue -- --warmup sequential --batches 1 ;;
    d2-none-all) run_ "$c" 240 "${live[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor --all-findings $drafter -- --drafters 2 --warmup none ;;
    d2-none-deadlock) run_ "$c" 120 "${live[@]}" --time-limit @TL@ --out @OUT@ --strategy dpor --expect deadlock $drafter -- --drafters 2 --warmup none ;;
    check-queue) run_ "$c" 300 check --interpose torch-2.11 "${qdict[@]}" --no-memory --executions 6 \
        --proof-executions 20000 --native-runs 1 --hang-timeout 90 --time-limit @TL@ --out @OUT@ \
        --variant "--warmup none --batches 2" --variant "--warmup sequential --batches 1" $queue ;;
    check-queue-jobs) run_ "$c" 300 check --interpose torch-2.11 "${qdict[@]}" --no-memory --executions 6 \
        --proof-executions 20000 --proof-jobs 12 --native-runs 1 --hang-timeout 90 --time-limit @TL@ \
        --out @OUT@ --variant "--warmup none" --variant "--warmup sequential" $queue ;;
    cost-native)
      { echo "+ python3 tools/gpu/queue_cost.py 6"; t=$(date +%s)
        timeout 300 python3 tools/gpu/queue_cost.py 6; echo "exit $?, wall $(( $(date +%s) - t )) s"; } \
        > "$work/$c.log" 2>&1
      { echo "== $c"; grep '^==\|^exit' "$work/$c.log"; } >> "$sum"; cp "$work/$c.log" "$out/"; cp "$sum" "$out/summary.txt" ;;
    cost-live-1) run_ "$c" 120 "${base[@]}" "${qdict[@]}" --out @OUT@ --strategy dpor --executions 1 $queue -- --warmup sequential ;;
    cost-live-13) run_ "$c" 120 "${base[@]}" "${qdict[@]}" --out @OUT@ --strategy dpor --executions 13 $queue -- --warmup sequential ;;
    *) echo "issue34-h200.sh: unknown case '$c'" >&2; exit 2 ;;
  esac
done
cp "$sum" "$out/summary.txt"
cat "$sum"

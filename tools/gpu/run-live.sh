#!/usr/bin/env bash
# The live runs on a GPU machine (docs/results/live-torch-h200.md, docs/results/live-alloc-h200.md):
# builds racelab against the wheel's LibTorch, then
#   1. lazy compile, 2 drafters on one GPU: search for the deadlock, replay its schedule 3 times;
#   2. the warmups: sequential forward+backward (expected clean over many executions), sequential
#      forward-only, sequential at another length (recompiles in the drafters), lock_first_forward;
#   3. allocator capture of fused, chunked and dense attention, each reported and replayed.
# Usage: tools/gpu/run-live.sh OUTDIR [torch] [alloc]   (default both; writes OUTDIR/live.log,
# OUTDIR/live-results.tar.gz and OUTDIR/live-alloc-traces.tar.gz)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/run-live.sh OUTDIR [torch] [alloc]}
shift
parts=" ${*:-torch alloc} "
mkdir -p "$out/work"
log="$out/live.log"
tools/gpu/build.sh racelab >"$out/work/build.log" 2>&1 || { tail -30 "$out/work/build.log"; exit 3; }
export LD_LIBRARY_PATH=$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rl=build/gpu/harness/racelab
step() {  # step NAME COMMAND...: runs and logs one command with its exit code
  local name=$1; shift
  { echo; echo "## $name"; echo "\$ racelab ${*:2}" | sed "s|$out/work|OUT|g"; } >>"$log"
  local t0=$(date +%s%N)
  timeout 300 "$@" >>"$log" 2>&1
  local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "exit $rc, wall $((ms / 1000)).$(printf %03d $((ms % 1000))) s" >>"$log"
  return $rc
}
{ echo "# racelab live runs"; date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'; } >"$log"
common=(--device cuda --hang-timeout 5)
if [[ $parts == *" torch "* ]]; then
# 1. The deadlock, found and replayed.
for seed in 1 2 3; do
  step "lazy compile, 2 drafters, pct seed $seed" $rl live torch "${common[@]}" --drafters 2 \
    --warmup none --strategy pct --seed $seed --executions 200 --expect deadlock \
    --out "$out/work/lazy-$seed"
done
for k in 1 2 3; do
  step "replay of the seed-1 schedule ($k)" $rl live torch --replay "$out/work/lazy-1/schedule-deadlock.json" \
    --hang-timeout 5 --out "$out/work/replay-$k"
done
step "lazy compile, 4 drafters, random" $rl live torch "${common[@]}" --drafters 4 --warmup none \
  --strategy random --executions 200 --expect deadlock --out "$out/work/lazy4"
# 2. Warmups.
step "sequential warmup forward+backward, pct" $rl live torch "${common[@]}" --drafters 2 \
  --warmup sequential --strategy pct --executions 200 --out "$out/work/seq-pct"
step "sequential warmup forward+backward, random, 4 drafters" $rl live torch "${common[@]}" \
  --drafters 4 --warmup sequential --strategy random --executions 100 --out "$out/work/seq-rand"
step "sequential warmup forward only, pct" $rl live torch "${common[@]}" --drafters 2 \
  --warmup sequential --no-warmup-backward --strategy pct --executions 100 --out "$out/work/seq-fwd"
step "sequential warmup at L=128, training at L=192, random" $rl live torch "${common[@]}" \
  --drafters 2 --warmup sequential --warmup-seq-len 128 --seq-lens 192 --strategy random \
  --executions 1000 --expect deadlock --out "$out/work/seq-shape"
step "replay of the warmup-shape schedule" $rl live torch \
  --replay "$out/work/seq-shape/schedule-deadlock.json" --hang-timeout 5 --out "$out/work/seq-shape-replay"
step "lock_first_forward" $rl live torch "${common[@]}" --drafters 2 --warmup lock_first_forward \
  --strategy pct --executions 200 --out "$out/work/lockfwd"
step "lock_first_step" $rl live torch "${common[@]}" --drafters 2 --warmup lock_first_step \
  --strategy pct --executions 100 --out "$out/work/lockstep"
fi
if [[ $parts == *" alloc "* ]]; then
# 3. Allocator capture.
for att in fused chunked dense; do
  step "live alloc $att" $rl live alloc --attention $att --iterations 150 --out "$out/work/alloc"
  step "replay --compare $att" $rl alloc replay --compare "$out/work/alloc/snap_live_${att}_1.pickle"
done
fi
tar -C "$out/work" -czf "$out/live-results.tar.gz" --exclude='*.pickle' . 2>/dev/null
[ -d "$out/work/alloc" ] && tar -C "$out/work/alloc" -czf "$out/live-alloc-traces.tar.gz" . 2>/dev/null
cat "$log"

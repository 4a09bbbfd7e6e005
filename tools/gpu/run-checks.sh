#!/usr/bin/env bash
# The GPU checks and measurements (docs/results/live-gpu-checks.md): the gpu-labelled test
# (tests/live/gpu_live.sh), racelab's overhead on real LibTorch steps, and the controlled-switch
# benchmarks, on a GPU machine with nothing to download.
#   tools/gpu/run-checks.sh OUTDIR   (writes OUTDIR/checks.log and OUTDIR/overhead-*.json)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/run-checks.sh OUTDIR}
mkdir -p "$out"
log="$out/checks.log"
RACELAB_BENCH=ON tools/gpu/build.sh racelab racelab_bench racelab_live_overhead >"$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 3; }
export LD_LIBRARY_PATH=$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rl=build/gpu/harness/racelab
{ echo "# racelab GPU checks"; date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nproc; python3 -c 'import torch; print("torch", torch.__version__)'; } >"$log"
echo "## tests/live/gpu_live.sh (CTest live.gpu)" >>"$log"
tests/live/gpu_live.sh "$rl" >>"$log" 2>&1; echo "exit $?" >>"$log"
echo "## overhead, small step" >>"$log"
ov=build/gpu/bench/racelab_live_overhead
$ov --device cuda --steps 60 --out "$out/ov-small" >>"$log" 2>&1
cp "$out/ov-small/overhead.json" "$out/overhead-small.json"
echo "## overhead, fixture-sized step" >>"$log"
$ov --device cuda --steps 30 --hidden 2048 --heads 16 --seq-lens 2048 \
  --out "$out/ov-large" >>"$log" 2>&1
cp "$out/ov-large/overhead.json" "$out/overhead-large.json"
echo "## controlled switch benchmarks" >>"$log"
build/gpu/bench/racelab_bench --benchmark_filter='Switch|ExecutionThreads' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true >>"$log" 2>&1
cat "$log"

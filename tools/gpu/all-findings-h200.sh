#!/usr/bin/env bash
# Issue 34 on the H200: one live dpor search of real torch 2.11 without a warmup, going on past
# each deadlock in a fresh process (--all-findings, docs/live.md "Every kind in one search"), to
# see whether it reaches both kinds the model reaches for the setting (deadlock, fx_trace_error).
# Builds racelab with the Python bridge only (no LibTorch workload) when build/gpu has none.
#   tools/gpu/all-findings-h200.sh OUT [DRAFTERS] [LIMIT]
# LIMIT: seconds of search (default 480; a search cut short by it says so, with what it found).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/all-findings-h200.sh OUT [DRAFTERS] [LIMIT]}
drafters=${2:-2}
limit=${3:-480}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! [ -x build/gpu/harness/racelab ]; then
  RACELAB_TORCH=OFF tools/gpu/build.sh racelab >"$out/build.log" 2>&1 || { tail "$out/build.log"; exit 3; }
fi
# The embedded interpreter does not know the virtual environment torch lives in.
export PYTHONPATH=$(python3 -c 'import site; print(":".join(site.getsitepackages()))')
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__)'; } >"$out/machine.txt" 2>&1
# A cold compile takes longer than the default hang timeout.
build/gpu/harness/racelab live python --strategy dpor --all-findings --hang-timeout 90 \
  --executions 1000000 --time-limit "$limit" --out "$out/lazy-$drafters" \
  tools/pipelines/drafter_torch.py -- --drafters "$drafters" --warmup none >"$out/lazy-$drafters.log" 2>&1
echo "exit $?" >>"$out/lazy-$drafters.log"
cat "$out/lazy-$drafters.log"

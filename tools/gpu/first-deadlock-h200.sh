#!/usr/bin/env bash
# Issue 21 on the H200: executions to the first deadlock of live searches on real torch 2.11, per
# strategy (random, pct, pos, surw), over the same seeds, for lazy-2 and lazy-4
# (tools/bench/first_deadlock_live.py on tools/pipelines/drafter_torch.py). Builds racelab with the
# Python bridge only (no LibTorch workload) when build/gpu has none.
#   tools/gpu/first-deadlock-h200.sh OUT CASE SEEDS CAP [LIMIT]
# LIMIT: seconds for the whole measurement (default 560; what ran by then is in OUT).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/first-deadlock-h200.sh OUT CASE SEEDS CAP [LIMIT]}
case=${2:?case: lazy-2 or lazy-4}
seeds=${3:?seeds}
cap=${4:?cap}
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
timeout "${5:-560}" python3 tools/bench/first_deadlock_live.py --racelab build/gpu/harness/racelab \
  --mode torch --seeds "$seeds" --first-seed "${FIRST_SEED:-1}" --cap "$cap" --cases "$case" --hang-timeout 90 --time-limit 150 \
  --strategies ${STRATEGIES:-random pct pos surw} --out "$out/$case" >"$out/$case.log" 2>&1
echo "exit $?" >>"$out/$case.log"
cat "$out/$case.log"

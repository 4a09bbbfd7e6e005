#!/usr/bin/env bash
# The conformance table on a GPU machine (docs/conformance.md): builds racelab with the embedded
# Python bridge against the wheel's CPython and pybind11, then runs tools/conformance.py on real
# torch 2.11 (tools/pipelines/drafter_torch.py, interposition data/interpose/torch-2.11.json).
#   tools/gpu/conformance.sh OUTDIR   (writes OUTDIR/conformance.md and OUTDIR/conformance.log)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/conformance.sh OUTDIR}
mkdir -p "$out"
tools/gpu/build.sh racelab >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 3; }
export LD_LIBRARY_PATH=$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The embedded interpreter does not know the virtual environment torch lives in.
export PYTHONPATH=$(python3 -c 'import site; print(":".join(site.getsitepackages()))')
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__)'; } >"$out/conformance.log"
python3 tools/conformance.py --racelab build/gpu/harness/racelab --mode torch --hang-timeout 60 \
  --search-executions 50 --clean-executions 10 --out "$out/runs" \
  --markdown "$out/conformance.md" >>"$out/conformance.log" 2>&1
echo "exit $?" >>"$out/conformance.log"
cat "$out/conformance.log"

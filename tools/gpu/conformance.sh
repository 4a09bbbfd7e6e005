#!/usr/bin/env bash
# The conformance table on a GPU machine (docs/conformance.md): builds racelab with the embedded
# Python bridge against the wheel's CPython and pybind11, then runs tools/conformance.py on real
# torch 2.11 (tools/pipelines/drafter_torch.py, interposition data/interpose/torch-2.11.json).
#   tools/gpu/conformance.sh OUTDIR [CASE...]   (default: every one-GPU case)
# writes OUTDIR/rows/*.json, the live reports, OUTDIR/conformance.md and OUTDIR/conformance.log.
# All cases take about nine minutes after the build; name cases to split them over calls, and
# join the rows with tools/conformance.py --table-from DIR...
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/conformance.sh OUTDIR [CASE...]}
shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1
tools/gpu/build.sh racelab >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 3; }
export LD_LIBRARY_PATH=$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The embedded interpreter does not know the virtual environment torch lives in.
export PYTHONPATH=$(python3 -c 'import site; print(":".join(site.getsitepackages()))')
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__)'; } >"$out/machine.txt"
only=$(IFS=,; echo "$*")
# Hang timeout 90 s: a cold compile; a deadlock is reported 2 s after its cycle stops moving.
python3 tools/conformance.py --racelab build/gpu/harness/racelab --mode torch --out "$out" \
  ${only:+--only "$only"} --hang-timeout 90 --cycle-confirm-ms 2000 --search-executions 30 \
  --clean-executions 10 --time-limit 150 --follow --markdown "$out/conformance.md" \
  >"$out/conformance.log" 2>&1
echo "exit $?" >>"$out/conformance.log"
cat "$out/conformance.log"

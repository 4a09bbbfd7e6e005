#!/usr/bin/env bash
# Replays a live schedule under rr: `rr record --chaos` of `racelab live torch --replay SCHEDULE`,
# then prints the `rr replay` command that steps through it in gdb, as often as needed.
# Where rr cannot record (racelab doctor says why), exits 2 with the reason; the schedule replay
# itself (racelab live torch --replay SCHEDULE) needs no rr.
#   tools/rr-repro.sh SCHEDULE [OUTDIR]
set -euo pipefail
schedule=${1:?usage: tools/rr-repro.sh SCHEDULE [OUTDIR]}
out=${2:-racelab-out/rr}
racelab=${RACELAB:-$(dirname "$0")/../build/ci/harness/racelab}
exec "$racelab" live torch --replay "$schedule" --out "$out" --rr

#!/usr/bin/env bash
# dpor across --jobs: executions, classes, redundant executions and seconds of one scenario for
# each number of jobs, with the speed-up over one job, from one run on one machine.
#
#   bench/dpor_jobs.sh RACELAB SCENARIO [JOBS...]      (default jobs: 1 2 4 8 16)
#   RACELAB_TIME_LIMIT=600 bench/dpor_jobs.sh ...        (seconds per run; default none)
#
# One job is dpor unsplit; more jobs split it (docs/scale.md): the classes must be the same on
# every line of an exhausted run, and the script says so. A split runs stateless and without
# symmetry reduction, so every line does (--stateless --no-symmetry): docs/performance.md compares
# the state cache and symmetry apart.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: bench/dpor_jobs.sh RACELAB SCENARIO [JOBS...]" >&2
  exit 2
fi
racelab=$1
scenario=$2
shift 2
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(1 2 4 8 16)
limit=${RACELAB_TIME_LIMIT:-0}
echo "scenario $scenario on $(nproc) cores; dpor, unbounded"
printf '%6s %14s %12s %10s %10s %9s  %s\n' jobs executions classes redundant seconds speedup stop
base=""
classes_seen=""
for j in "${jobs[@]}"; do
  line=$("$racelab" explore "$scenario" --strategy dpor --stateless --no-symmetry --iterations 100000000000 --no-shrink \
    --time-limit "$limit" --jobs "$j" 2>&1 | grep -E "^(exhaustive|cut short)" || true)
  if [[ "$line" =~ ([0-9]+)\ executions,\ ([0-9]+)\ classes,\ ([0-9]+)\ redundant\;\ ([0-9.]+)\ s ]]; then
    ex=${BASH_REMATCH[1]} cl=${BASH_REMATCH[2]} re=${BASH_REMATCH[3]} s=${BASH_REMATCH[4]} stop=exhausted
  elif [[ "$line" =~ after\ ([0-9]+)\ executions.*\;\ ([0-9.]+)\ s ]]; then
    ex=${BASH_REMATCH[1]} cl=- re=- s=${BASH_REMATCH[2]} stop=cut
  else
    echo "unexpected output for --jobs $j: $line" >&2
    exit 1
  fi
  [ -n "$base" ] || base=$s
  speedup=$(python3 -c "print(f'{$base / max($s, 1e-9):.2f}')")
  printf '%6s %14s %12s %10s %10s %9s  %s\n' "$j" "$ex" "$cl" "$re" "$s" "$speedup" "$stop"
  if [ "$stop" = exhausted ]; then
    if [ -n "$classes_seen" ] && [ "$classes_seen" != "$cl" ]; then
      echo "classes differ between jobs: $classes_seen and $cl" >&2
      exit 1
    fi
    classes_seen=$cl
  fi
done

#!/usr/bin/env bash
# Executions to the first deadlock per strategy, over the same seeds: for each scenario and
# strategy, `racelab explore --seed S --no-shrink` for S = 1..SEEDS, and the first execution that
# deadlocked (report.json's finding "execution", 0-based, plus one). A seed that finds none within
# CAP executions counts as not found (and is left out of the median).
# Usage: tools/bench/first-deadlock.sh [RACELAB] [SEEDS] [CAP] [SCENARIO...]
# Default scenarios: scenarios/deadlock/lazy-2-drafters.toml and lazy-4-drafters.toml.
set -euo pipefail
cd "$(dirname "$0")/../.."
racelab=${1:-build/ci/harness/racelab}
seeds=${2:-20}
cap=${3:-100000}
shift 3 2>/dev/null || shift $#
scenarios=("$@")
[ ${#scenarios[@]} -gt 0 ] ||
  scenarios=(scenarios/deadlock/lazy-2-drafters.toml scenarios/deadlock/lazy-4-drafters.toml)
[ -x "$racelab" ] || { echo "no racelab at $racelab (tools/build.sh ci)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
echo "executions to the first deadlock, seeds 1..$seeds, cap $cap executions per seed"
printf '%-18s %-7s %8s %6s %6s %8s %6s\n' scenario strategy median min max mean found
for sc in "${scenarios[@]}"; do
  name=$(basename "$sc" .toml)
  for strategy in random pct pos surw; do
    counts=()
    for seed in $(seq 1 "$seeds"); do
      out="$work/$name-$strategy-$seed"
      # exit 1 is "found a failure": expected here
      "$racelab" explore "$sc" --strategy "$strategy" --seed "$seed" --iterations "$cap" \
        --no-shrink --out "$out" >/dev/null || true
      counts+=("$(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
e = [f['execution'] for f in r['findings'] if f['kind'] == 'deadlock']
print(e[0] + 1 if e else 0)" "$out/report.json")")
    done
    python3 -c "
import statistics, sys
name, strategy, c = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3:]]
found = [x for x in c if x > 0]
if found:
    print('%-18s %-7s %8g %6d %6d %8.1f %3d/%-3d' % (name, strategy, statistics.median(found),
          min(found), max(found), statistics.mean(found), len(found), len(c)))
else:
    print('%-18s %-7s %8s %6s %6s %8s %3d/%-3d' % (name, strategy, '-', '-', '-', '-', 0, len(c)))
" "$name" "$strategy" "${counts[@]}"
  done
done

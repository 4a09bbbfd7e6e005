#!/usr/bin/env bash
# racelab against the Relacy anchor (shared/bench/relacy/pipeline_model.cpp) on the same model:
# 1 GPU, 2 drafters, 2 steps, sequential forward+backward warmup, random strategy, the same number
# of executions; then the lazy case: executions to the first deadlock.
# Usage: tools/bench/compare-relacy.sh [RELACY_SOURCE] [RACELAB] [EXECUTIONS]
# Needs Debian's relacy-dev (apt-get install relacy-dev) and a racelab build (release preferred).
# Besides the wall-clock rates (each side's own timer), the warmup rates by CPU time: user+sys
# seconds of an EXECUTIONS run less those of a 1-execution run (start-up: racelab loads LibTorch),
# CPU_ROUNDS rounds (default 3) with the two sides interleaved, the median round. On a loaded
# machine wall clock mostly measures the load; CPU time is what both sides spent.
# SKIP_LAZY=1 leaves out the lazy (deadlock) part.
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${1:-../shared/bench/relacy/pipeline_model.cpp}
racelab=${2:-build/release/harness/racelab}
n=${3:-100000}
[ -f /usr/include/relacy/relacy.hpp ] || { echo "relacy-dev is not installed (apt-get install relacy-dev)" >&2; exit 2; }
[ -f "$src" ] || { echo "no Relacy anchor at $src" >&2; exit 2; }
[ -x "$racelab" ] || { echo "no racelab at $racelab (tools/build.sh release)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++11 -I/usr/include "$src" -o "$work/relacy_pipeline"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"

relacy_out=$("$work/relacy_pipeline" warmup "$n" | tail -1)
relacy_rate=$(sed -n 's/.*executions_per_s=\([0-9]*\).*/\1/p' <<<"$relacy_out")
"$racelab" explore scenarios/warmup/sequential-forward-backward.toml --strategy random --iterations "$n" \
  --no-shrink --out "$work/racelab" >/dev/null
read -r racelab_rate steps_per_exec < <(python3 -c "
import json; r = json.load(open('$work/racelab/report.json'))
print('%.0f %.1f' % (r['executions'] / r['seconds'], r['steps'] / r['executions']))")
echo "warmup (clean), $n random executions each:"
echo "  relacy:  $relacy_rate executions/s"
echo "  racelab: $racelab_rate executions/s ($steps_per_exec scheduling steps per execution)"
python3 -c "print('  ratio racelab/relacy: %.2fx' % ($racelab_rate / $relacy_rate))"

# User+sys CPU seconds of a command, its output discarded.
cpu() {
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >/dev/null 2>&1 || true
  python3 -c "import sys; u, s = open(sys.argv[1]).read().split()[-2:]; print('%.3f' % (float(u) + float(s)))" "$work/time"
}
relacy_cmd() { cpu "$work/relacy_pipeline" warmup "$1"; }
racelab_cmd() {
  cpu "$racelab" explore scenarios/warmup/sequential-forward-backward.toml --strategy random \
    --iterations "$1" --no-shrink --out "$work/racelab-cpu"
}
rounds=${CPU_ROUNDS:-3}
echo "warmup (clean) by CPU time (user+sys), $n executions less a 1-execution run, $rounds rounds:"
rows=()
for round in $(seq 1 "$rounds"); do
  r1=$(relacy_cmd 1); rn=$(relacy_cmd "$n")
  l1=$(racelab_cmd 1); ln=$(racelab_cmd "$n")
  rows+=("$round $rn $r1 $ln $l1")
done
python3 - "$n" "${rows[@]}" <<'PY'
import statistics, sys
n = int(sys.argv[1])
ratios = []
for row in sys.argv[2:]:
    k, rn, r1, ln, l1 = row.split()
    rn, r1, ln, l1 = map(float, (rn, r1, ln, l1))
    relacy = (n - 1) / max(rn - r1, 1e-3)
    racelab = (n - 1) / max(ln - l1, 1e-3)
    ratios.append((racelab / relacy, relacy, racelab))
    print('  round %s: relacy %.2f - %.2f s = %.0f executions/CPU s; racelab %.2f - %.2f s = %.0f '
          'executions/CPU s; ratio %.2fx' % (k, rn, r1, relacy, ln, l1, racelab, racelab / relacy))
ratio, relacy, racelab = sorted(ratios)[len(ratios) // 2]
print('  median round: relacy %.0f, racelab %.0f executions per CPU second' % (relacy, racelab))
print('  ratio racelab/relacy (CPU time): %.2fx' % ratio)
PY
[ "${SKIP_LAZY:-0}" = 1 ] && exit 0

echo "lazy (deadlock): executions until the first deadlock"
echo "  relacy random: $("$work/relacy_pipeline" lazy "$n" | sed -n 's/.*executions=\([0-9]*\).*/\1/p') (its random scheduler starts from the same state every run; the anchor takes no seed)"
for strategy in random pct; do
  counts=()
  for seed in $(seq 1 100); do
    "$racelab" explore scenarios/deadlock/lazy-2-drafters.toml --strategy "$strategy" --seed "$seed" \
      --iterations 100000 --no-shrink --out "$work/lazy" >/dev/null || true
    counts+=("$(python3 -c "
import json; r = json.load(open('$work/lazy/report.json'))
print(next((f['execution'] + 1 for f in r['findings'] if f['kind'] == 'deadlock'), -1))")")
  done
  python3 -c "
import statistics, sys; c = [int(x) for x in sys.argv[1:]]
found = [x for x in c if x > 0]
print('  racelab %-6s: median %s executions over %d seeds (found in %d, min %d, max %d)' % (
    sys.argv[0] if False else '$strategy', statistics.median(found), len(c), len(found), min(found), max(found)))" "${counts[@]}"
done
echo "  relacy pct:    not available (Relacy has random, context-bound and full search, no PCT)"

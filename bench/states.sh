#!/usr/bin/env bash
# dpor (with symmetry) against the states strategy on every bundled model scenario, one after the
# other in one run: executions, classes or states, and seconds of each (docs/performance.md,
# States).
#   bench/states.sh RACELAB [TIME_LIMIT_S]    e.g. bench/states.sh build/ci/harness/racelab 60
set -euo pipefail
racelab=${1:?usage: bench/states.sh RACELAB [TIME_LIMIT_S]}
limit=${2:-60}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$(dirname "$0")/.."
echo "machine: $(nproc) cores; date: $(date -u +%F); time limit ${limit} s"
printf '%-30s %14s %10s %8s %14s %10s %8s\n' scenario "dpor execs" classes s "states execs" states s
for f in scenarios/{deadlock,recompile,sdpa,warmup}/*.toml bench/scenarios/*.toml; do
  row=()
  for strategy in dpor states; do
    line=$("$racelab" explore "$f" --strategy "$strategy" --iterations 100000000000 \
             --time-limit "$limit" --no-shrink --out "$out/r" 2>/dev/null | tail -1 || true)
    execs=$(sed -nE 's/.*: ([0-9]+) executions, ([0-9]+) (classes|states).*/\1/p; s/.* after ([0-9]+) executions.*/\1 (cut)/p' <<<"$line" | head -1)
    count=$(sed -nE 's/.* ([0-9]+) (classes|states)[,;].*/\1/p' <<<"$line" | head -1)
    secs=$(sed -nE 's/.*; ([0-9.]+) s .*/\1/p' <<<"$line" | head -1)
    row+=("${execs:-?}" "${count:--}" "${secs:-?}")
  done
  printf '%-30s %14s %10s %8s %14s %10s %8s\n' "$(basename "$f" .toml)" "${row[@]}"
done

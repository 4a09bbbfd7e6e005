#!/usr/bin/env bash
# Two proving searches on every bundled model scenario, one after the other in one run:
# executions, classes (stateless dpor) or states (states, dpor with its state cache), and seconds
# of each. bench/dpor_symmetry.sh, bench/states.sh and bench/dpor_states.sh call it
# (docs/performance.md).
#   bench/provers.sh RACELAB TIME_LIMIT_S "FLAGS A" "FLAGS B"
#   e.g. bench/provers.sh build/ci/harness/racelab 60 "--strategy dpor" "--strategy states"
set -euo pipefail
racelab=${1:?usage: bench/provers.sh RACELAB TIME_LIMIT_S "FLAGS A" "FLAGS B"}
limit=${2:?time limit}
flags=("${3:?flags A}" "${4:?flags B}")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$(dirname "$0")/.."
echo "machine: $(nproc) cores; date: $(date -u +%F); time limit ${limit} s"
echo "A: ${flags[0]}; B: ${flags[1]}"
printf '%-30s %14s %10s %8s %14s %10s %8s\n' scenario "execs (A)" count s "execs (B)" count s
for f in scenarios/{deadlock,recompile,sdpa,warmup}/*.toml bench/scenarios/*.toml; do
  row=()
  for fl in "${flags[@]}"; do
    # shellcheck disable=SC2086  # the flags are words
    line=$("$racelab" explore "$f" $fl --iterations 100000000000 --time-limit "$limit" \
             --no-shrink --out "$out/r" 2>/dev/null | tail -1 || true)
    execs=$(sed -nE 's/.*: ([0-9]+) executions[ ,].*/\1/p; s/.* after ([0-9]+) executions.*/\1 (cut)/p' <<<"$line" | head -1)
    count=$(sed -nE 's/.* ([0-9]+) (classes|states)[,;].*/\1/p' <<<"$line" | head -1)
    secs=$(sed -nE 's/.*; ([0-9.]+) s .*/\1/p' <<<"$line" | head -1)
    row+=("${execs:-?}" "${count:--}" "${secs:-?}")
  done
  printf '%-30s %14s %10s %8s %14s %10s %8s\n' "$(basename "$f" .toml)" "${row[@]}"
done

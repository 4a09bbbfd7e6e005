#!/usr/bin/env bash
# The proving searches side by side, in one run (docs/performance.md, "The proving searches side
# by side"): optimal dpor (wakeup trees, stateless), source-set dpor (stateless), dpor's state
# cache from the first execution (--cache-after 0), dpor as it runs by default (stateless for
# kDporStatelessFirst executions, then the cache if the space is not exhausted) and dfs within 2
# preemptions, on lazy-2-drafters, lazy-4-drafters, sequential-forward-backward and two GPUs with
# two lazy drafters each. Executions, sleep-set blocked executions, classes or states, and seconds
# of each; "(cut)" where the time limit stopped it.
#   bench/dpor_optimal.sh RACELAB [TIME_LIMIT_S]    e.g. bench/dpor_optimal.sh build/ci/harness/racelab 60
set -euo pipefail
racelab=${1:?usage: bench/dpor_optimal.sh RACELAB [TIME_LIMIT_S]}
limit=${2:-60}
racelab=$(readlink -f "$racelab")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$(dirname "$0")/.."
# Two GPUs, two lazy drafters each: lazy-2-drafters on two devices, one step each.
sed -e 's/^name = .*/name = "two-gpus-two-drafters"/' -e 's/^devices = 1/devices = 2/' \
  -e 's/^steps = 2/steps = 1/' scenarios/deadlock/lazy-2-drafters.toml >"$out/two-gpus-two-drafters.toml"
searches=("--strategy dpor --stateless" "--strategy dpor --stateless --source-sets"
          "--strategy dpor --cache-after 0" "--strategy dpor" "--strategy dfs --max-preemptions 2")
names=("optimal" "source sets" "state cache" "dpor default" "dfs (2)")
echo "machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); date: $(date -u +%F); time limit ${limit} s"
echo "racelab: $("$racelab" --version)"
printf '%-28s %-13s %16s %8s %10s %10s %8s\n' scenario search executions blocked classes states s
for f in scenarios/deadlock/lazy-2-drafters.toml scenarios/deadlock/lazy-4-drafters.toml \
         scenarios/warmup/sequential-forward-backward.toml "$out/two-gpus-two-drafters.toml"; do
  for i in "${!searches[@]}"; do
    # shellcheck disable=SC2086  # the flags are words
    line=$("$racelab" explore "$f" ${searches[$i]} --iterations 100000000000 --time-limit "$limit" \
             --no-shrink --out "$out/r" 2>/dev/null | tail -1 || true)
    execs=$(sed -nE 's/.*: ([0-9]+) executions[ ,;].*/\1/p; s/.* after ([0-9]+) executions.*/\1 (cut)/p' <<<"$line" | head -1)
    blocked=$(sed -nE 's/.* ([0-9]+) (redundant|sleep-set blocked)[,;)].*/\1/p' <<<"$line" | head -1)
    classes=$(sed -nE 's/.* ([0-9]+) classes[,;].*/\1/p' <<<"$line" | head -1)
    states=$(sed -nE 's/.* ([0-9]+) states[,;]?.*/\1/p' <<<"$line" | head -1)
    secs=$(sed -nE 's/.*; ([0-9.]+) s .*/\1/p' <<<"$line" | head -1)
    printf '%-28s %-13s %16s %8s %10s %10s %8s\n' "$(basename "$f" .toml)" "${names[$i]}" \
      "${execs:-?}" "${blocked:--}" "${classes:--}" "${states:--}" "${secs:-?}"
  done
done

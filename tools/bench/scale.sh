#!/usr/bin/env bash
# Measures what splitting an exploration costs and gains, in one run on this machine:
# --jobs 1 against --jobs 2 (and nproc), and 4 shards run one after another plus the merge against
# one unsharded run. Usage: tools/bench/scale.sh [RACELAB]   (default build/ci/harness/racelab)
set -euo pipefail
cd "$(dirname "$0")/../.."
racelab=${1:-build/ci/harness/racelab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null || [ $? -eq 1 ]; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "date: $(date -u +%F)"
# Lazy compile with one drafter on each of three GPUs, and two on each: bounded spaces of tens of
# millions of executions whose first subtree alone holds more than the cap. The bundled scenarios
# prove with dpor; these runs measure bounded DFS, so they ask for it.
dfs="--strategy dfs --max-preemptions 2"
sed -e 's/devices = 2/devices = 3/' scenarios/deadlock/lazy-one-drafter-per-gpu.toml >"$work/3x1.toml"
sed -e 's/devices = 2/devices = 3/' -e 's/drafters_per_device = 1/drafters_per_device = 2/' \
  scenarios/deadlock/lazy-one-drafter-per-gpu.toml >"$work/3x2.toml"
# The report without what may differ between two runs (seconds, the output directory).
same() { diff -q <(jq -S 'del(.seconds)' "$1/report.json" | sed "s|$1||g") \
  <(jq -S 'del(.seconds)' "$2/report.json" | sed "s|$2||g") >/dev/null && echo same || echo DIFFERENT; }
printf '%-58s %9s %9s %8s %7s\n' "exploration" "jobs=1 s" "jobs=2 s" "speed-up" "reports"
run() {  # name, then the explore arguments
  local name=$1; shift
  local a b
  a=$(secs "$racelab" explore "$@" --no-shrink --jobs 1 --out "$work/j1")
  b=$(secs "$racelab" explore "$@" --no-shrink --jobs 2 --out "$work/j2")
  printf '%-58s %9.2f %9.2f %7.2fx %7s\n' "$name" "$a" "$b" "$(echo "$a / $b" | bc -l)" \
    "$(same "$work/j1" "$work/j2")"
}
run "sequential-forward-backward (DFS, exhaustive)" scenarios/warmup/sequential-forward-backward.toml $dfs --iterations 2000000
run "lock-first-forward (DFS, exhaustive)" scenarios/warmup/lock-first-forward.toml $dfs --iterations 2000000
run "lock-first-forward (DFS, cap 300000)" scenarios/warmup/lock-first-forward.toml $dfs --iterations 300000
run "3 GPUs x 2 drafters, lazy (DFS, cap 300000)" "$work/3x2.toml" $dfs --iterations 300000
run "3 GPUs x 1 drafter, lazy (DFS, cap 500000)" "$work/3x1.toml" $dfs --iterations 500000
run "lazy-2-drafters (PCT, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --iterations 200000
run "lazy-2-drafters (random, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --strategy random --iterations 200000
run "lazy-2-drafters (pos, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --strategy pos --iterations 200000
run "lazy-2-drafters (surw, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --strategy surw --iterations 200000
echo
printf '%-58s %9s %12s %9s %9s\n' "sharding (4 shards, run one after another)" "one run s" "sum shards s" "merge s" "overhead"
shard() {
  local name=$1; shift
  local one total=0 m t
  one=$(secs "$racelab" explore "$@" --out "$work/one")
  for k in 0 1 2 3; do
    t=$(secs "$racelab" explore "$@" --shard "$k/4" --out "$work/s$k")
    total=$(echo "$total + $t" | bc)
  done
  m=$(secs "$racelab" merge "$work/s0" "$work/s1" "$work/s2" "$work/s3" --out "$work/merged")
  printf '%-58s %9.2f %12.2f %9.2f %8.1f%%\n' "$name" "$one" "$total" "$m" "$(echo "($total + $m - $one) * 100 / $one" | bc -l)"
}
shard "sequential-forward-backward (DFS, exhaustive)" scenarios/warmup/sequential-forward-backward.toml $dfs --iterations 2000000
shard "lazy-2-drafters (PCT, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --iterations 200000

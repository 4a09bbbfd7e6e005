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
printf '%-58s %9s %9s %7s\n' "exploration" "jobs=1 s" "jobs=2 s" "speed-up"
run() {  # name, then the explore arguments
  local name=$1; shift
  local a b
  a=$(secs "$racelab" explore "$@" --jobs 1 --out "$work/j1")
  b=$(secs "$racelab" explore "$@" --jobs 2 --out "$work/j2")
  printf '%-58s %9.2f %9.2f %6.2fx\n' "$name" "$a" "$b" "$(echo "$a / $b" | bc -l)"
}
run "sequential-forward-backward (DFS, exhaustive)" scenarios/warmup/sequential-forward-backward.toml
run "lazy-2-drafters (PCT, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --iterations 200000
run "lazy-2-drafters (random, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --strategy random --iterations 200000
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
shard "sequential-forward-backward (DFS, exhaustive)" scenarios/warmup/sequential-forward-backward.toml
shard "lazy-2-drafters (PCT, 200000 executions)" scenarios/deadlock/lazy-2-drafters.toml --iterations 200000

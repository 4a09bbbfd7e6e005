#!/usr/bin/env bash
# Two racelab binaries on the same dpor explorations, interleaved (a, b, a, b, ...), by CPU time
# (user + system from /usr/bin/time: on a shared machine the wall clock is mostly waiting for a
# CPU). For a refactor that must stay within noise (docs/performance.md, "S28 within noise").
# Each case runs ROUNDS times (default 3) on each binary; prints every run (executions and CPU
# seconds), then per case the median CPU time of each binary and b/a. Both binaries must run the
# same number of executions: a difference is reported and the exit status is 1.
#   bench/dpor_ab.sh RACELAB_A RACELAB_B [ROUNDS]
set -euo pipefail
usage="usage: bench/dpor_ab.sh RACELAB_A RACELAB_B [ROUNDS]"
a=$(readlink -f "${1:?$usage}")
b=$(readlink -f "${2:?$usage}")
rounds=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$(dirname "$0")/.."
# Two GPUs, two lazy drafters each (as bench/dpor_optimal.sh makes it).
sed -e 's/^name = .*/name = "two-gpus-two-drafters"/' -e 's/^devices = 1/devices = 2/' \
  -e 's/^steps = 2/steps = 1/' scenarios/deadlock/lazy-2-drafters.toml >"$out/two-gpus-two-drafters.toml"
cases=("$out/two-gpus-two-drafters.toml|--strategy dpor --stateless"
       "scenarios/deadlock/lazy-4-drafters.toml|--strategy dpor"
       "scenarios/deadlock/lazy-2-drafters.toml|--strategy dpor --stateless")
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "machine: $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); date: $(date -u +'%F %H:%M') UTC"
echo "a: $a ($("$a" --version))"
echo "b: $b ($("$b" --version))"
status=0
for c in "${cases[@]}"; do
  f=${c%%|*}
  flags=${c#*|}
  name=$(basename "$f" .toml)
  : >"$out/a.cpu"
  : >"$out/b.cpu"
  for ((r = 1; r <= rounds; r++)); do
    for bin in a b; do
      exe=$a
      [[ $bin == b ]] && exe=$b
      # shellcheck disable=SC2086  # the flags are words
      /usr/bin/time -f '%U %S' -o "$out/time" "$exe" explore "$f" $flags \
        --iterations 100000000000 --no-shrink --out "$out/r" >"$out/log" 2>&1 || true
      cpu=$(tail -1 "$out/time" | awk '{printf "%.2f", $1 + $2}')
      execs=$(sed -nE 's/.*: ([0-9]+) executions[ ,;].*/\1/p' "$out/log" | tail -1)
      echo "$cpu" >>"$out/$bin.cpu"
      echo "${execs:-?}" >>"$out/$bin.execs"
      printf '%-24s %-30s round %d %s: %10s executions %8s s cpu\n' "$name" "$flags" "$r" "$bin" \
        "${execs:-?}" "$cpu"
    done
  done
  if [[ $(sort -u "$out/a.execs" "$out/b.execs" | wc -l) != 1 ]]; then
    echo "$name: the binaries ran different numbers of executions"
    status=1
  fi
  rm -f "$out/a.execs" "$out/b.execs"
  ma=$(median <"$out/a.cpu")
  mb=$(median <"$out/b.cpu")
  printf '%-24s %-30s median cpu a %s s, b %s s, b/a %s\n' "$name" "$flags" "$ma" "$mb" \
    "$(awk -v a="$ma" -v b="$mb" 'BEGIN {if (a > 0) printf "%.3f", b / a; else print "n/a"}')"
done
exit $status

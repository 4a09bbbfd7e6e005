#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang, ASan, UBSan) and runs each for a bounded number
# of inputs, starting from a copy of its seed corpus. A crash leaves the input under
# build/fuzz/crashes/, prints the sanitizer's report and the input (base64, so that a CI log alone
# is enough to reproduce it) and fails; keep the input under tests/fuzz/regressions/<target>/ once
# fixed.
# The mutations follow FUZZ_SEED (default 1), so that CI's result does not depend on luck: the same
# tree gives the same inputs. Explore further with other seeds, e.g.
#   for s in $(seq 2 50); do FUZZ_SEED=$s tools/test-fuzz.sh 20000 15 || break; done
# Usage: tools/test-fuzz.sh [RUNS] [SECONDS]   (default 20000 inputs, at most 60 s per target)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20000}
seconds=${2:-60}
seed=${FUZZ_SEED:-1}
tools/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build build/fuzz --target fuzz_pickle fuzz_scenario fuzz_schedule -j "$(nproc)"
mkdir -p build/fuzz/crashes
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for target in pickle scenario schedule; do
  work=build/fuzz/corpus-$target
  log=build/fuzz/$target.log
  rm -rf "$work" && cp -r "tests/fuzz/corpus/$target" "$work"
  echo "fuzz_$target: $runs inputs, at most $seconds s, seed $seed"
  "build/fuzz/tests/fuzz/fuzz_$target" "$work" -runs="$runs" -max_total_time="$seconds" -seed="$seed" \
    -rss_limit_mb=4096 -artifact_prefix="build/fuzz/crashes/$target-" -print_final_stats=1 \
    > "$log" 2>&1 || true
  grep -E "^(Done|stat::number_of_executed_units)" "$log" || true
  if ls build/fuzz/crashes/"$target"-* >/dev/null 2>&1; then
    echo "fuzz_$target found a crash (seed $seed); the end of its log:" >&2
    grep -v -E "^#[0-9]+" "$log" | tail -n 60 >&2
    for f in build/fuzz/crashes/"$target"-*; do
      echo "the input, $f, in base64 (base64 -d > input):" >&2
      base64 "$f" | head -c 20000 >&2
      echo >&2
    done
    exit 1
  fi
done

#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz: clang, ASan, UBSan) and runs each for a bounded number
# of inputs, starting from a copy of its seed corpus. A crash leaves the input under
# build/fuzz/crashes/ and fails; keep it under tests/fuzz/regressions/<target>/ once fixed.
# Usage: tools/test-fuzz.sh [RUNS] [SECONDS]   (default 20000 inputs, at most 60 s per target)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20000}
seconds=${2:-60}
tools/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build build/fuzz --target fuzz_pickle fuzz_scenario fuzz_schedule -j "$(nproc)"
mkdir -p build/fuzz/crashes
for target in pickle scenario schedule; do
  work=build/fuzz/corpus-$target
  rm -rf "$work" && cp -r "tests/fuzz/corpus/$target" "$work"
  echo "fuzz_$target: $runs inputs, at most $seconds s"
  "build/fuzz/tests/fuzz/fuzz_$target" "$work" -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=4096 \
    -artifact_prefix="build/fuzz/crashes/$target-" -print_final_stats=1 2>&1 | grep -E "^(Done|stat::number_of_executed_units|==)" || true
  if ls build/fuzz/crashes/"$target"-* >/dev/null 2>&1; then
    echo "fuzz_$target found a crash: $(ls build/fuzz/crashes/"$target"-*)" >&2
    exit 1
  fi
done

#!/usr/bin/env bash
# The unit, model and live tests built with AddressSanitizer, UndefinedBehaviorSanitizer and
# LeakSanitizer (preset asan: clang, which compiles them about three times faster than g++ does
# with these sanitizers; it leaves the benchmarks out). test_model.scenarios is left out
# here: it checks every bundled dpor proof against exhaustive dfs within 2 preemptions (millions
# of executions), over ten minutes under ASan; test_model.pipeline runs the same model code under
# it. So is test_model.dpor-dfs (dpor against exhaustive dfs on two GPUs, minutes without ASan), and
# test_model.dpor (dpor on the bundled scenarios, 77 s under ASan): test_sched.dpor runs dpor's code
# under it. scale.examples (every sharding example, run shard by
# shard) checks orchestration, not memory safety, and runs in the plain build (tools/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset asan >/dev/null
cmake --build build/asan -j "$(nproc)"
# The README's commands (whole explorations, allocator replays) run in tools/test.sh; under ASan
# they would take minutes of CI's half hour. One test per core, as tools/test.sh runs them: serially,
# this ctest took 512 s of a 28-minute CI run.
# test_sched.dpor checks dpor against brute force on 10 of its 40 random programs here (the named
# programs and the corpus all run).
RACELAB_SKIP_README_COMMANDS=1 RACELAB_DPOR_PROGRAMS=10 \
ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  ctest --preset asan -j "$(nproc)" -E "^(test_model\.(scenarios|dpor-dfs|dpor)|scale\.examples)$" "$@"

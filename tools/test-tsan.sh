#!/usr/bin/env bash
# The tests labelled `tsan` (real OS threads under racelab's control) built with ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset tsan >/dev/null
cmake --build build/tsan --target test_sched test_live -j "$(nproc)"
TSAN_OPTIONS="halt_on_error=1" ctest --preset tsan "$@"

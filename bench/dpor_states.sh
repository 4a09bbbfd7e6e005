#!/usr/bin/env bash
# Stateless dpor (A, one execution per interleaving class) against dpor with its state cache (B,
# dpor_cache.h) on every bundled model scenario (docs/performance.md, dpor's state cache).
#   bench/dpor_states.sh RACELAB [TIME_LIMIT_S]    e.g. bench/dpor_states.sh build/ci/harness/racelab 120
set -euo pipefail
exec "$(dirname "$0")/provers.sh" "${1:?usage: bench/dpor_states.sh RACELAB [TIME_LIMIT_S]}" \
  "${2:-60}" "--strategy dpor --stateless" "--strategy dpor"

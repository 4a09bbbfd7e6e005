#!/usr/bin/env bash
# Stateless dpor with symmetry (A) against the states strategy (B) on every bundled model scenario
# (docs/performance.md, States).
#   bench/states.sh RACELAB [TIME_LIMIT_S]    e.g. bench/states.sh build/ci/harness/racelab 60
set -euo pipefail
exec "$(dirname "$0")/provers.sh" "${1:?usage: bench/states.sh RACELAB [TIME_LIMIT_S]}" \
  "${2:-60}" "--strategy dpor --stateless" "--strategy states"

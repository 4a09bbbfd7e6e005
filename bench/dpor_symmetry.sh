#!/usr/bin/env bash
# Stateless dpor without (A) and with (B) symmetry reduction on every bundled model scenario
# (docs/performance.md, Symmetry).
#   bench/dpor_symmetry.sh RACELAB [TIME_LIMIT_S]    e.g. bench/dpor_symmetry.sh build/ci/harness/racelab 60
set -euo pipefail
exec "$(dirname "$0")/provers.sh" "${1:?usage: bench/dpor_symmetry.sh RACELAB [TIME_LIMIT_S]}" \
  "${2:-60}" "--strategy dpor --stateless --no-symmetry" "--strategy dpor --stateless"

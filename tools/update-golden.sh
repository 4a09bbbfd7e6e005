#!/usr/bin/env bash
# Rewrites the golden fixtures of the README's commands (tests/data/golden/readme) and of the
# verdict suite (tests/data/golden/suite-mini) from the
# racelab of build/ci: run it when a change to what a README command prints or writes is meant,
# and review the diff (git diff tests/data/golden) as part of the change. The normaliser is
# tests/cli/golden.py, the same one the test (test_cli.readme) compares with.
set -euo pipefail
cd "$(dirname "$0")/.."
for set in readme suite-mini; do
  flock /tmp/racelab-cli.lock env RACELAB_UPDATE_GOLDEN=1 python3 tests/cli/readme_golden.py \
    build/ci/harness/racelab "$PWD" build/ci/tests/data/alloc "$set"
done

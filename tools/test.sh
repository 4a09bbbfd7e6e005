#!/usr/bin/env bash
# Quick start 2: the whole test suite. Builds racelab (warnings as errors), checks formatting and
# runs every CTest test. GPU tests skip themselves, with a message, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh ci
tools/format.sh --check
# Through PATH where tools/build.sh put it there, as the README runs it.
if [[ "$(readlink -f "$(command -v racelab || true)")" == "$PWD/build/ci/harness/racelab" ]]; then
  racelab --version
else
  build/ci/harness/racelab --version
fi
build/ci/harness/racelab doctor
ctest --preset ci -j "$(nproc)" "$@"

#!/usr/bin/env bash
# Quick start 2: the whole test suite. Builds racelab (warnings as errors), checks formatting and
# runs every CTest test. GPU tests skip themselves, with a message, where there is no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh ci
tools/format.sh --check
build/ci/harness/racelab --version
build/ci/harness/racelab doctor
ctest --preset ci -j "$(nproc)" "$@"

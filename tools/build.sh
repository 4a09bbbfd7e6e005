#!/usr/bin/env bash
# Configures and builds racelab with a CMake preset (default: ci, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-ci}"
tools/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"

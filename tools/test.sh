#!/usr/bin/env bash
# Quick start 2: the whole test suite. Builds racelab (warnings as errors), checks formatting and
# runs every CTest test. GPU tests skip themselves, with a message, where there is no GPU.
# Beside the build it installs torch 2.11.0 for the live cases on real torch
# (tools/install-torch.sh: once per machine, into /opt/racelab/torch-2.11.0; seconds after).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
tools/install-deps.sh  # python3-venv first: the torch install below makes a virtual environment
tools/install-torch.sh >build/install-torch.log 2>&1 &
torch_install=$!
tools/build.sh ci
tools/format.sh --check
if ! wait "$torch_install"; then
  cat build/install-torch.log >&2
  echo "racelab: tools/install-torch.sh failed (above): the live.torch tests need it" >&2
  exit 1
fi
tail -n 1 build/install-torch.log
# Through PATH where tools/build.sh put it there, as the README runs it.
if [[ "$(readlink -f "$(command -v racelab || true)")" == "$PWD/build/ci/harness/racelab" ]]; then
  racelab --version
else
  build/ci/harness/racelab --version
fi
build/ci/harness/racelab doctor --python "$(tail -n 1 build/install-torch.log)"
ctest --preset ci -j "$(nproc)" "$@"

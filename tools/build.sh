#!/usr/bin/env bash
# Configures and builds racelab with a CMake preset (default: ci, warnings as errors).
#   tools/build.sh [PRESET] [TARGET...]   e.g. tools/build.sh ci racelab (only the command)
# After a ci build it puts racelab on PATH: a symlink /usr/local/bin/racelab -> build/ci/harness/racelab
# where /usr/local/bin is writable (root on Debian), else it prints the one line to add it.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-ci}"
shift || true
targets=()
for t in "$@"; do targets+=(--target "$t"); done
tools/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" "${targets[@]}"

bin="$PWD/build/$preset/harness/racelab"
if [[ "$preset" == ci && -x "$bin" ]]; then
  link=/usr/local/bin/racelab
  if [[ "$(readlink "$link" 2>/dev/null)" == "$bin" ]]; then
    :  # already there
  elif [[ -w "$(dirname "$link")" ]] && ln -sfn "$bin" "$link" 2>/dev/null; then
    echo "racelab is on PATH: $link -> $bin"
  else
    echo "racelab is at $bin; to run it as racelab, add its directory to PATH:"
    echo "  export PATH=\"$(dirname "$bin"):\$PATH\""
  fi
fi

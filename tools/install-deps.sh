#!/usr/bin/env bash
# Installs what racelab needs to build and test on Debian 12, as root, idempotently: packages that
# are already present are not touched, and apt-get runs only when something is missing.
set -euo pipefail
packages=(cmake ninja-build g++ make libcli11-dev libspdlog-dev libfmt-dev catch2
          libtomlplusplus-dev nlohmann-json3-dev clang-format python3 chromium libbenchmark-dev clang
          libtorch-dev rr python3-dev pybind11-dev python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "racelab: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

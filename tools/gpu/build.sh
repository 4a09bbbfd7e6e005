#!/usr/bin/env bash
# Builds racelab on a GPU machine against the PyTorch wheel's LibTorch (CUDA, NVRTC), with nothing
# to download: the wheel, nvcc, cmake, ninja, g++, Catch2, CLI11, spdlog, fmt and nlohmann-json are
# on the machine; toml++ is not, so Debian's libtomlplusplus3 and libtomlplusplus-dev packages are
# carried in .gpu-deps/ (apt-get download them there) and unpacked beside the tree.
#
#   tools/gpu/build.sh [TARGET...]   # default: racelab -> build/gpu/harness/racelab
#   RACELAB_BENCH=ON tools/gpu/build.sh racelab racelab_bench   # with the benchmarks
#   RACELAB_TORCH=OFF tools/gpu/build.sh    # without the LibTorch workload (racelab live python
#                                           # needs none; builds in a fraction of the time)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD/.gpu-deps/root
if ! [ -e /usr/include/toml++/toml.h ] && ! [ -e "$root/usr/include/toml++/toml.h" ]; then
  shopt -s nullglob
  debs=(.gpu-deps/libtomlplusplus*.deb)
  if [ ${#debs[@]} -eq 0 ]; then
    echo "tools/gpu/build.sh: toml++ is missing: put Debian's libtomlplusplus3 and" \
      "libtomlplusplus-dev .deb files in .gpu-deps/ (apt-get download ...)" >&2
    exit 2
  fi
  for d in "${debs[@]}"; do dpkg -x "$d" "$root"; done
fi
torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
# The wheel's pybind11 headers and the machine's CPython for the embedded Python bridge.
torch_include=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "include"))')
python_exe=$(python3 -c 'import sys; print(sys.executable)')
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake -S . -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_PREFIX_PATH="$torch_prefix;$root/usr;$root/usr/lib/x86_64-linux-gnu/cmake" \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCUDAToolkit_ROOT=/usr/local/cuda \
  -DRACELAB_PYBIND11_INCLUDE="$torch_include" -DPython3_EXECUTABLE="$python_exe" \
  -DRACELAB_BENCH="${RACELAB_BENCH:-OFF}" -DRACELAB_TORCH="${RACELAB_TORCH:-ON}" >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(racelab)
cmake --build build/gpu -j "$(nproc)" --target "${targets[@]}"

#!/usr/bin/env bash
# Installs the pinned PyTorch that racelab's live cases run against on the CPU (issue 40), once per
# machine, into a virtual environment outside the clone:
#   tools/install-torch.sh            -> /opt/racelab/torch-2.11.0 (torch 2.11.0, the H200's)
#   RACELAB_TORCH_VERSION=2.12.0 tools/install-torch.sh   -> /opt/racelab/torch-2.12.0
# It prints the environment's directory on its last line. An environment that is there and
# complete (its stamp names the version and its python imports that torch) is reused in a second;
# one that is not (an install cut short) is removed and made again. The wheel is PyPI's default
# build for Linux, a CUDA one (several GB with its nvidia-* libraries): it imports, compiles and
# runs on the CPU, and it is the H200's build, so the code racelab interposes is the same.
#
# The environment is made from the Python racelab embeds (RACELAB_PYTHON, default /usr/bin/python3,
# the one CMake links against), so that its site-packages fit the embedded interpreter:
# `racelab live python --python /opt/racelab/torch-2.11.0 ...` (docs/live.md, "Which Python").
set -euo pipefail
version="${RACELAB_TORCH_VERSION:-2.11.0}"
venv="${RACELAB_TORCH_VENV:-/opt/racelab/torch-$version}"
python="${RACELAB_PYTHON:-/usr/bin/python3}"
stamp="$venv/.racelab-torch"
# What is installed, the stamp's content: a change here makes the environment again. numpy only
# quiets torch's "Failed to initialize NumPy" warning at import.
requirements=("torch==$version" "numpy==2.4.6")

complete() {
  [[ -f "$stamp" && "$(cat "$stamp")" == "${requirements[*]}" ]] &&
    "$venv/bin/python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$version')" \
      2>/dev/null
}

mkdir -p "$(dirname "$venv")"
# One installer at a time per environment (two CI jobs on one machine wait for each other).
exec 9>"$venv.lock"
flock 9
if complete; then
  echo "$venv"
  exit 0
fi

if [[ -e "$venv" ]]; then
  echo "racelab: $venv is incomplete (an install cut short?): making it again" >&2
  rm -rf "$venv"
fi
echo "racelab: installing torch $version into $venv (once per machine; several GB)" >&2
start=$SECONDS
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --no-input "${requirements[@]}" >&2
# Inductor's CPU code generation compiles C++ with the system's g++ (tools/install-deps.sh); the
# import check below is what makes the environment complete.
"$venv/bin/python" -c "import torch; print('racelab: torch', torch.__version__, 'imports')" >&2
echo "${requirements[*]}" >"$stamp"
complete || {
  echo "racelab: $venv: torch $version does not import after the install" >&2
  exit 1
}
echo "racelab: torch $version installed in $((SECONDS - start)) s, $(du -sh "$venv" | cut -f1)" >&2
echo "$venv"

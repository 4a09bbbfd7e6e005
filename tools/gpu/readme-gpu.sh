#!/usr/bin/env bash
# Runs the README's GPU block (the commands after "On a GPU machine") as written, on a GPU machine
# with the PyTorch wheel, with racelab's three executables on PATH. The block's upper-case words are
# filled in: MODEL_SCHEDULE.json is the model's lazy-2 deadlock schedule (racelab explore), the
# --follow line's SCRIPT.py -- ARGS is drafter_torch.py with 2 drafters and no warmup, the allocator
# capture's is train_queue_torch.py with flex and the sequential warmup at the memory check's size,
# and DIR is OUT/mem. Each command's line, exit status, seconds and output go to OUT/readme-gpu.log
# (the output whole in OUT/cmd-N.log).
#   tools/gpu/readme-gpu.sh OUT [N...]   # N: the commands to run, 1-based (default: all)
# Results: docs/results/readme-gpu-h200/.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/readme-gpu.sh OUT [N...]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# build.sh unpacks toml++ beside the tree; a later call that carries .gpu-deps anew needs it again.
if ! [ -e /usr/include/toml++/toml.h ]; then
  for d in .gpu-deps/libtomlplusplus*.deb; do
    [ -e .gpu-deps/root/usr/lib/x86_64-linux-gnu/libtomlplusplus.so.3 ] || dpkg -x "$d" .gpu-deps/root
  done
fi
if ! [ -x build/gpu/harness/racelab-torch ] || ! [ -x build/gpu/harness/racelab-python ]; then
  start=$(date +%s)
  tools/gpu/build.sh racelab racelab_python racelab_torch > "$out/build.log" 2>&1 ||
    { tail -n 30 "$out/build.log"; exit 1; }
  echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/readme-gpu.log"
fi
export PATH="$PWD/build/gpu/harness:$PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/machine.txt" 2>&1
python3 -c 'import torch, sys; print(torch.__version__, sys.version)' >> "$out/machine.txt" 2>&1

# The block, one command per element (a trailing backslash continues a line).
mapfile -t commands < <(python3 - <<'PY'
import re
text = open("README.md").read()
start = text.index("On a GPU machine")
block = text[text.index("```sh\n", start) + 6:]
block = block[:block.index("```")]
cmd = ""
for line in block.splitlines():
    cmd += line
    if cmd.endswith("\\"):
        cmd = cmd[:-1]
        continue
    if cmd.strip():
        print(re.sub(r"\s+", " ", cmd).strip())
    cmd = ""
PY
)
model=$out/model/schedules/lazy-2-drafters.deadlock.json
if ! [ -f "$model" ]; then
  racelab explore scenarios/deadlock/lazy-2-drafters.toml --out "$out/model" > "$out/model.log" 2>&1
fi
follow_args="tools/pipelines/drafter_torch.py -- --drafters 2 --warmup none"
alloc_args="tools/pipelines/train_queue_torch.py -- --attention flex_compiled --warmup sequential"
alloc_args+=" --batches 24 --max-len 2048 --dim 512 --heads 8"
wanted=("$@")
for i in "${!commands[@]}"; do
  n=$((i + 1))
  if [ ${#wanted[@]} -gt 0 ] && [[ " ${wanted[*]} " != *" $n "* ]]; then continue; fi
  c=${commands[$i]}
  c=${c//MODEL_SCHEDULE.json/$model}
  c=${c//--alloc DIR SCRIPT.py -- ARGS/--alloc $out/mem $alloc_args}
  c=${c//SCRIPT.py -- ARGS/$follow_args}
  c=${c//DIR\//$out/mem/}
  c=${c//--junit memory.xml/--junit $out/memory.xml}
  start=$(date +%s)
  echo "\$ $c" > "$out/cmd-$n.log"
  # The README's lines end with a comment: eval keeps it a comment.
  timeout "${LIMIT:-560}" bash -c "$c" >> "$out/cmd-$n.log" 2>&1
  rc=$?
  {
    echo "== $n: ${commands[$i]}"
    echo "exit $rc after $(( $(date +%s) - start )) s"
    grep -v '^\$ ' "$out/cmd-$n.log" | tail -n "${TAIL:-25}"
    echo
  } | tee -a "$out/readme-gpu.log"
done

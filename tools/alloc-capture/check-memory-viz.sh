#!/usr/bin/env bash
# Opens racelab-written snapshots with PyTorch's own memory_viz tool (needs torch; run on the GPU
# machine, no GPU needed). Left out: 'memory' and 'segments' download flamegraph.pl, and
# 'compare' reads only the old list-of-segments format (it fails on PyTorch's own snapshots too).
# Usage: check-memory-viz.sh OUTDIR SNAPSHOT.pickle...
set -euo pipefail
out=${1:?usage: check-memory-viz.sh OUTDIR SNAPSHOT...}; shift
python3 -c "import torch; print('torch', torch.__version__)"
for f in "$@"; do
  name=$(basename "$(dirname "$f")")_$(basename "$f" .pickle)
  python3 -m torch.cuda._memory_viz trace_plot "$f" -o "$out/$name.trace.html"
  python3 -m torch.cuda._memory_viz segment_plot "$f" -o "$out/$name.segments.html"
  python3 -m torch.cuda._memory_viz stats "$f" | head -3
  python3 -m torch.cuda._memory_viz trace "$f" | tail -3
  ls -la "$out/$name".*
done

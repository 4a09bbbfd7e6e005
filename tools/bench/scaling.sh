#!/usr/bin/env bash
# Exploration cost per execution and per scheduling step against devices x drafters and steps.
# Usage: tools/bench/scaling.sh [RACELAB]   (default build/release/harness/racelab)
set -euo pipefail
cd "$(dirname "$0")/../.."
racelab=${1:-build/release/harness/racelab}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); date: $(date -u +%F)"
printf '%-9s %5s %8s %11s %12s %10s %10s\n' "devices" "steps" "threads" "executions" "steps/exec" "us/exec" "ns/step"
for shape in "1 2 2" "4 2 2" "8 4 2" "16 8 2" "64 8 2" "1 2 8" "8 4 8"; do
  set -- $shape
  d=$1 p=$2 s=$3
  iterations=$(( 2000000 / (d * p * s * 30 + 50) + 20 ))
  cat >"$work/s.toml" <<TOML
name = "scale-${d}x${p}-s${s}"
[pipeline]
devices = $d
drafters_per_device = $p
steps = $s
attention = "flex_compiled"
seq_len = 1024
[warmup]
mode = "sequential"
backward = true
[explore]
strategy = "random"
iterations = $iterations
TOML
  "$racelab" explore "$work/s.toml" --no-shrink --out "$work/o" >/dev/null || true
  python3 - "$d" "$p" "$s" "$work/o/report.json" <<'PY'
import json, sys
d, p, s, path = sys.argv[1:]
r = json.load(open(path))
threads = int(d) * int(p) + int(d) + 1
print('%-9s %5s %8d %11d %12.0f %10.1f %10.0f' % (d + 'x' + p, s, threads, r['executions'], r['steps'] / r['executions'],
      r['seconds'] * 1e6 / r['executions'], r['seconds'] * 1e9 / r['steps']))
PY
done

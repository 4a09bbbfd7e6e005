#!/usr/bin/env bash
# The streaming snapshot reader against today's tree reader on memory_viz pickles of real size
# (docs/performance.md, Reading snapshots of 1 GB). Writes, with Python's pickler
# (bench/memory_viz_pickle.py: torch's shape, frames as context="alloc", stacks="python" records
# them), a pickle of SIZE_MB at protocols 4 and 5, and one of SMALL_MB at protocol 5; reads each
# with both readers (bench/pickle_read.cc: read, then replay every device) under /usr/bin/time -v,
# and prints throughput, peak RSS and the trace and replay digests, which must be equal. The tree
# reader runs with its address space capped at TREE_CAP_MB (it needs many times the file's size),
# and says so where the cap stops it.
#   bench/alloc_pickle_stream.sh PICKLE_READ [SIZE_MB] [SMALL_MB] [WORKDIR] [TREE_CAP_MB]
#   e.g. bench/alloc_pickle_stream.sh build/release/bench/racelab_pickle_read 1024 64 /tmp/pickles
set -euo pipefail
reader=${1:?usage: bench/alloc_pickle_stream.sh PICKLE_READ [SIZE_MB] [SMALL_MB] [WORKDIR] [TREE_CAP_MB]}
size_mb=${2:-1024}
small_mb=${3:-64}
work=${4:-/tmp/racelab-pickle-stream}
cap_mb=${5:-8192}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"

make() {  # OUT SIZE_MB PROTOCOL
  [ -s "$1" ] || python3 "$here/memory_viz_pickle.py" "$1" "$2" --protocol "$3" >/dev/null
}

run() {  # KIND FILE [CAP_MB]
  local log="$work/time.log" line rss status=0
  if [ -n "${3:-}" ]; then
    line=$( (ulimit -v $(($3 * 1024)); /usr/bin/time -v "$reader" "$1" "$2") 2>"$log") || status=$?
  else
    line=$(/usr/bin/time -v "$reader" "$1" "$2" 2>"$log") || status=$?
  fi
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
  # CPU seconds and MB per CPU second: the wall clock depends on what else the machine runs.
  cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$log")
  if [ "$status" -ne 0 ]; then
    printf '%-7s %s: did not finish (exit %s, cap %s MB, peak RSS %s MB): %s\n' "$1" \
      "$(basename "$2")" "$status" "${3:-none}" "$((rss / 1024))" "$(grep -v '^\s' "$log" | head -1)"
    return
  fi
  printf '%-7s %s: %s cpu %s s (%s MB/s of CPU) peak RSS %s MB\n' "$1" "$(basename "$2")" "$line" \
    "$cpu" "$(awk -v b="$(stat -c %s "$2")" -v c="$cpu" 'BEGIN {printf "%.1f", b / 1e6 / c}')" \
    "$((rss / 1024))"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {print int($2/1024/1024)}' /proc/meminfo) GiB; $(python3 --version); date: $(date -u +%F)"
small="$work/snap_${small_mb}mb_p5.pickle"
make "$small" "$small_mb" 5
run tree "$small"
run stream "$small"
for protocol in 4 5; do
  big="$work/snap_${size_mb}mb_p${protocol}.pickle"
  make "$big" "$size_mb" "$protocol"
  run tree "$big" "$cap_mb"
  run stream "$big"
done

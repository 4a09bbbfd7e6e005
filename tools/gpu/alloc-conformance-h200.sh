#!/usr/bin/env bash
# Issue 39 on the H200, in one device call:
#  1. the allocator conformance sequences (tools/alloc-capture/sequences.py): each sequence under
#     the default settings and each non-default one it exercises, one process per run, four at a
#     time, recorded with _record_memory_history (no racelab needed: they run while racelab builds);
#  2. the cost of recording frames (sequences.py --overhead);
#  3. racelab built on the machine (RACELAB_TORCH=OFF), then the user-style pipeline
#     (tools/pipelines/train_queue_torch.py, two drafters, sequential warmup, 48 batches) captured
#     with `racelab live python --uncontrolled --alloc` (frames recorded) for chunked SDPA and
#     flex, side by side, and alloc report run on each capture.
# Everything lands in OUT as a few archives; replay, whatif and the tables are made on the CPU
# from them (tools/alloc-capture/conformance.py, docs/results/alloc-conformance-h200/).
#   tools/gpu/alloc-conformance-h200.sh OUT
#   ONLY=placement CAPTURES=0 tools/gpu/alloc-conformance-h200.sh OUT   # one sequence, no captures
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/alloc-conformance-h200.sh OUT}
mkdir -p "$out"
export LD_LIBRARY_PATH="$PWD/.gpu-deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
work=$(mktemp -d)
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, sys; print(torch.__version__, sys.version)'; nproc; } > "$out/machine.txt" 2>&1
start=$(date +%s)

# 1 and 2: the sequences, then the overhead, in the background (SEQUENCES=0 skips them).
mkdir -p "$work/seq"
[ "${SEQUENCES:-1}" = 1 ] && (
  python3 tools/alloc-capture/sequences.py --list | awk -F '\t' -v only="${ONLY:-}" \
    'only == "" || $1 == only' | tr '\t' '|' |
    xargs -P 4 -d '\n' -n 1 bash -c 'IFS="|" read -r s c f <<< "$1"
      PYTORCH_CUDA_ALLOC_CONF="$c" timeout 120 python3 tools/alloc-capture/sequences.py \
        --sequence "$s" --out "$0" > "$0/log_${s}__$(echo "$c" | tr -c "a-zA-Z0-9\n" _).txt" 2>&1 \
        || echo "FAILED: $s [$c]"' "$work/seq"
  [ -z "${ONLY:-}" ] && { timeout 120 python3 tools/alloc-capture/sequences.py --overhead \
    --out "$work/seq" > "$work/seq/log_overhead.txt" 2>&1 || echo "FAILED: overhead"; }
  echo "sequences done after $(( $(date +%s) - start )) s"
) > "$work/sequences.log" 2>&1 &
seq_pid=$!
[ "${SEQUENCES:-1}" = 1 ] || seq_pid=
# 3: racelab, then the captures side by side (RUNS="flex_compiled:r1 flex_compiled:r2 ..." repeats
# one: attention[:tag]).
if [ "${CAPTURES:-1}" = 1 ]; then
  RACELAB_TORCH=OFF tools/gpu/build.sh racelab > "$work/build.log" 2>&1
  build_rc=$?
else
  echo "CAPTURES=0: no build, no captures" > "$work/build.log"
  build_rc=1
fi
tail -n 3 "$work/build.log" > "$out/build-tail.txt"
echo "build exit $build_rc after $(( $(date +%s) - start )) s" | tee -a "$out/build-tail.txt"
racelab=$PWD/build/gpu/harness/racelab
mkdir -p "$work/cap"
cap_pids=()
if [ "$build_rc" = 0 ]; then
  for run in ${RUNS:-sdpa_chunked flex_compiled}; do
    IFS=: read -r attention tag <<< "$run"
    v=$attention${tag:+-$tag}
    (
      t0=$(date +%s)
      timeout "${RUN_LIMIT:-240}" "$racelab" live python --uncontrolled --interpose torch-2.11 \
        --alloc "$work/cap/$v/alloc" --out "$work/cap/$v/plain" tools/pipelines/train_queue_torch.py -- \
        --attention "$attention" --warmup sequential --batches 48 --max-len 4096 --dim 512 --heads 8 \
        > "$work/cap/$v.capture.log" 2>&1
      echo "capture exit $? in $(( $(date +%s) - t0 )) s" >> "$work/cap/$v.capture.log"
      (cd "$work/cap/$v/alloc" && "$racelab" alloc report snap_*.pickle --out ../report) \
        > "$work/cap/$v.report.txt" 2>&1
    ) &
    cap_pids+=($!)
  done
  wait "${cap_pids[@]}"
fi
[ -n "$seq_pid" ] && wait "$seq_pid"
cat "$work/sequences.log"
echo "all done after $(( $(date +%s) - start )) s"
tar -C "$work" -czf "$out/sequences.tar.gz" seq
tar -C "$work" -czf "$out/captures.tar.gz" cap
cp "$work/build.log" "$out/build.log" 2>/dev/null
ls -la "$out"
for f in "$work"/cap/*.report.txt; do
  echo "== $f"; tail -n 1 "${f%.report.txt}.capture.log"; head -n 1 "$f" | cut -c1-300
done
grep -h '"vs_off"' -B3 "$work/seq/overhead.json" 2>/dev/null | head -20

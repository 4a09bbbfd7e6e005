#!/usr/bin/env bash
# Live dpor over worker processes (racelab live --jobs N, docs/live.md "Many processes") against
# one process, in one run: the queue-fed stand-in pipeline (tests/live/pipelines/train_queue.py,
# sequential warmup, BATCHES batches, default 4: 256 interleaving classes) with each execution
# made WAIT_S seconds longer (bench/live/slow_train_queue.py, default 0.1), so that executions cost
# something and N workers overlap even on 2 cores. Prints each search's executions, classes,
# executions run and seconds, and the ratio of the two times; the two searches must agree on the
# executions and classes (exit 1 otherwise).
#   bench/live_jobs.sh RACELAB [JOBS]
set -euo pipefail
racelab=$(readlink -f "${1:?usage: bench/live_jobs.sh RACELAB [JOBS]}")
jobs=${2:-8}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export PYTHONPATH="$PWD/tools/pipelines"
run() {  # NAME ARGS...
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  "$racelab" live python --interpose standin --strategy dpor --executions 100000 \
    --dict __main__._attention_cache --out "$out/$name" "$@" bench/live/slow_train_queue.py -- \
    --warmup sequential --batches "${BATCHES:-4}" > "$out/$name.log" 2>&1 || true
  python3 - "$out/$name" "$t0" "$name" <<'PY'
import json, sys, time
rep = json.load(open(sys.argv[1] + "/report.json"))
d = rep.get("dpor") or {}
print(f"{sys.argv[3]}: {rep['executions']} executions, {d.get('classes')} classes, "
      f"exhausted {rep.get('exhausted')}, {rep.get('strategy')}, "
      f"{time.time() - float(sys.argv[2]):.2f} s")
PY
}
one=$(run one); echo "$one"
many=$(run "jobs$jobs" --jobs "$jobs"); echo "$many"
python3 - "$one" "$many" <<'PY'
import re, sys
def parse(line):
    ex, cl = re.search(r": (\d+) executions, (\d+) classes", line).groups()
    return int(ex), int(cl), float(re.search(r"([\d.]+) s$", line).group(1))
a, b = parse(sys.argv[1]), parse(sys.argv[2])
print(f"--jobs over one process: {a[2] / b[2]:.2f}x as fast")
sys.exit(0 if a[:2] == b[:2] else 1)
PY

#!/usr/bin/env bash
# Live dpor against live dfs (default bound 2), in one run (docs/performance.md, "Live dpor"):
# executions, seconds and the verdict of each on the stand-in pipeline (sequential warmup and none,
# 2 and 3 drafters on one device), on the queue-fed stand-in pipeline tests/live/pipelines/
# train_queue.py (sequential warmup, 1 and 2 batches) and on tests/live/pipelines/user_pool.py
# (fixed and --bug), and dpor's executions as a share of dfs's. Then, with --load N, the determinism check of issue 34:
# each search RUNS times (default 10) beside N CPU-bound processes, and whether every run of it
# ran the same number of executions (STRATEGIES="dpor" in the environment: dpor's alone).
#   bench/live_dpor.sh RACELAB [TIME_LIMIT_S] [--load N [RUNS]]
set -euo pipefail
racelab=${1:?usage: bench/live_dpor.sh RACELAB [TIME_LIMIT_S] [--load N [RUNS]]}
limit=${2:-120}
racelab=$(readlink -f "$racelab")
load=0
runs=10
if [[ "${3:-}" == "--load" ]]; then
  load=${4:?--load N}
  runs=${5:-10}
fi
out=$(mktemp -d)
busy=()
trap 'kill "${busy[@]}" 2>/dev/null || true; rm -rf "$out"' EXIT
cd "$(dirname "$0")/.."
standin=tools/pipelines/drafter_standin.py
user=tests/live/pipelines/user_pool.py
queue=tests/live/pipelines/train_queue.py
# The queue-fed pipeline's cache is the user's own dict (its docstring).
export PYTHONPATH=tools/pipelines
# name | interpose | script | script args (the queue-fed cases add --dict, below)
cases=("standin 2 sequential|standin|$standin|--warmup sequential --drafters 2"
       "standin 3 sequential|standin|$standin|--warmup sequential --drafters 3"
       "standin 2 none|standin|$standin|--warmup none --drafters 2"
       "queue-fed 1 batch seq|standin|$queue|--warmup sequential --batches 1"
       "queue-fed 2 batches seq|standin|$queue|--warmup sequential --batches 2"
       "user_pool|none|$user|"
       "user_pool --bug|none|$user|--bug")
run() {  # strategy interpose script args -> "executions seconds verdict"
  local strategy=$1 interpose=$2 script=$3 args=$4 code=0 extra=()
  [[ $script == "$queue" ]] && extra=(--dict __main__._attention_cache)
  # shellcheck disable=SC2086  # the script's arguments are words
  "$racelab" live python --interpose "$interpose" --strategy "$strategy" --executions 1000000 \
    --time-limit "$limit" --out "$out/r" "${extra[@]}" "$script" -- $args >"$out/log" 2>&1 ||
    code=$?
  python3 - "$out/r/report.json" "$code" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
kinds = [f["kind"] for f in r.get("findings", [])]
verdict = kinds[0] if kinds else ("proven" if r.get("exhausted") else "cut short")
print(r["executions"], f'{r["seconds"]:.2f}', verdict, f'exit={sys.argv[2]}', r["settle"]["decisions"])
PY
}
echo "machine: $(nproc) cores; date: $(date -u +%F); time limit ${limit} s; $("$racelab" --version)"
if (( load == 0 )); then
  printf '%-24s %-6s %12s %9s %-16s %s\n' case search executions s verdict "dpor/dfs"
  for c in "${cases[@]}"; do
    IFS='|' read -r name interpose script args <<<"$c"
    read -r de ds dv dx _ <<<"$(run dpor "$interpose" "$script" "$args")"
    read -r fe fs fv fx _ <<<"$(run dfs "$interpose" "$script" "$args")"
    printf '%-24s %-6s %12s %9s %-16s\n' "$name" dpor "$de" "$ds" "$dv $dx"
    printf '%-24s %-6s %12s %9s %-16s %s\n' "" dfs "$fe" "$fs" "$fv $fx" \
      "$(python3 -c "print(f'{100 * $de / $fe:.1f}%')")"
  done
  exit 0
fi
for ((i = 0; i < load; i++)); do
  python3 -c 'while True: pass' &
  busy+=($!)
done
echo "beside $load CPU-bound processes, $runs runs each"
printf '%-24s %-6s %-34s %-8s %s\n' case search "distinct executions:verdict" same "settled decisions per run"
for c in "standin 2 sequential|standin|$standin|--warmup sequential --drafters 2" \
         "standin 2 none|standin|$standin|--warmup none --drafters 2" \
         "queue-fed 2 batches seq|standin|$queue|--warmup sequential --batches 2" \
         "user_pool|none|$user|"; do
  IFS='|' read -r name interpose script args <<<"$c"
  for strategy in ${STRATEGIES:-dpor dfs}; do
    counts=() settled=()
    for ((k = 0; k < runs; k++)); do
      read -r e _ v _ s <<<"$(run "$strategy" "$interpose" "$script" "$args")"
      counts+=("$e:$v")
      settled+=("$s")
    done
    same=$(printf '%s\n' "${counts[@]}" | sort -u | wc -l)
    printf '%-24s %-6s %-34s %-8s %s\n' "$name" "$strategy" \
      "$(printf '%s\n' "${counts[@]}" | sort -u | tr '\n' ' ')" \
      "$([[ $same == 1 ]] && echo yes || echo "NO")" "${settled[*]}"
  done
done

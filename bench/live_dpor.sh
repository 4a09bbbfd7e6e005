#!/usr/bin/env bash
# Live dpor against live dfs (default bound 2), in one run (docs/performance.md, "Live dpor"):
# executions, seconds and the verdict of each on the stand-in pipeline (sequential warmup and none,
# 2 and 3 drafters on one device), on the queue-fed stand-in pipeline tests/live/pipelines/
# train_queue.py (sequential warmup, 1 and 2 batches) and on tests/live/pipelines/user_pool.py
# (fixed and --bug), and dpor's executions as a share of dfs's. Then, with --load N, the determinism check of issue 34:
# each search RUNS times (default 10) beside N CPU-bound processes, and whether every run of it
# ran the same number of executions (STRATEGIES="dpor" in the environment: dpor's alone;
# "dpor-all": dpor --all-findings, whose verdict is every kind found, each at its execution).
# CASES="REGEX" in the environment keeps the cases whose name matches it (grep -E), in both modes.
# A dfs cut short by the time limit ran fewer executions than its full search would: its count is
# a lower bound, and dpor's share of it is printed as an upper bound ("<= 0.12%").
# EXECUTIONS in the environment caps each search (default 1000000).
# --kinds instead: the finding kinds live dpor reaches without a warmup (--all-findings, so that
# it searches on past every failure: report.json's kinds_found) on the stand-in and the queue-fed
# pipeline (one device, two drafters) and on the stand-in with one drafter on each of two
# devices, each beside the kinds the model's dpor reaches for the same setting
# (scenarios/deadlock/lazy-2-drafters.toml, lazy-one-drafter-per-gpu.toml). Evidence kinds
# (duplicate_compile, compile_after_warmup) are the model's alone.
#   bench/live_dpor.sh RACELAB [TIME_LIMIT_S] [--load N [RUNS] | --kinds]
set -euo pipefail
usage="usage: bench/live_dpor.sh RACELAB [TIME_LIMIT_S] [--load N [RUNS] | --kinds]"
racelab=${1:?$usage}
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
       "queue-fed 2 batches none|standin|$queue|--warmup none --batches 2"
       "user_pool|none|$user|"
       "user_pool --bug|none|$user|--bug")
if [[ -n "${CASES:-}" ]]; then
  kept=()
  for c in "${cases[@]}"; do
    grep -Eq -- "$CASES" <<<"${c%%|*}" && kept+=("$c")
  done
  (( ${#kept[@]} )) || { echo "bench/live_dpor.sh: CASES='$CASES' matches no case" >&2; exit 2; }
  cases=("${kept[@]}")
fi
run() {  # strategy interpose script args -> "executions seconds verdict"
  local strategy=$1 interpose=$2 script=$3 args=$4 code=0 extra=()
  [[ $script == "$queue" ]] && extra=(--dict __main__._attention_cache)
  if [[ $strategy == dpor-all ]]; then
    strategy=dpor
    extra+=(--all-findings)
  fi
  # shellcheck disable=SC2086  # the script's arguments are words
  "$racelab" live python --interpose "$interpose" --strategy "$strategy" \
    --executions "${EXECUTIONS:-1000000}" \
    --time-limit "$limit" --out "$out/r" "${extra[@]}" "$script" -- $args >"$out/log" 2>&1 ||
    code=$?
  python3 - "$out/r/report.json" "$code" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
kinds = [f["kind"] for f in r.get("findings", [])]
verdict = kinds[0] if kinds else ("proven" if r.get("exhausted") else "cut-short")
if "kinds_found" in r:  # --all-findings: every kind, at its execution
    found = "+".join(f'{k["kind"]}@{k["execution"]}' for k in r["kinds_found"])
    verdict = (found or "proven") if r.get("exhausted") else "cut-short"
print(r["executions"], f'{r["seconds"]:.2f}', verdict, f'exit={sys.argv[2]}', r["settle"]["decisions"])
PY
}
echo "machine: $(nproc) cores; date: $(date -u +%F); time limit ${limit} s; $("$racelab" --version)"
if [[ "${3:-}" == "--kinds" ]]; then
  printf '%-30s %-46s %s\n' subject search "kinds reached"
  # name | script | args | the model's scenario for the same setting
  for c in "stand-in, 2 drafters|$standin|--warmup none --drafters 2|deadlock/lazy-2-drafters" \
           "queue-fed, 2 batches|$queue|--warmup none --batches 2|deadlock/lazy-2-drafters" \
           "stand-in, 1 drafter x 2 GPUs|$standin|--warmup none --drafters 2 --gpus 2|deadlock/lazy-one-drafter-per-gpu"; do
    IFS='|' read -r name script args model <<<"$c"
    extra=()
    [[ $script == "$queue" ]] && extra=(--dict __main__._attention_cache)
    # shellcheck disable=SC2086  # the script's arguments are words
    "$racelab" live python --interpose standin --strategy dpor --all-findings \
      --executions "${EXECUTIONS:-1000000}" --time-limit "$limit" --out "$out/k" "${extra[@]}" \
      "$script" -- $args >"$out/log" 2>&1 || true
    "$racelab" explore "scenarios/$model.toml" --strategy dpor --iterations 100000000 \
      --time-limit "$limit" --no-shrink --out "$out/m" >"$out/mlog" 2>&1 || true
    python3 - "$out/k/report.json" "$out/m/report.json" "$name" "${model#*/}" <<'PY'
import json, sys
live, model = (json.load(open(p)) for p in sys.argv[1:3])
# Past a deadlock (its threads stay stuck) the search goes on in a fresh process.
how = (f'exhaustive, {live["executions"]}, {live.get("processes", 1)} processes'
       if live.get("exhausted") else f'cut short at {live["executions"]}')
found = " ".join(f'{k["kind"]}@{k["execution"]}' for k in live.get("kinds_found", []))
print(f'{sys.argv[3]:<30} {"live dpor (" + how + ")":<46} {found}')
how = f'exhaustive, {model["executions"]}' if model.get("exhausted") else f'cut short at {model["executions"]}'
kinds = sorted({f["kind"] for f in model.get("findings", [])})
print(f'{"":<30} {"model " + sys.argv[4] + " (dpor, " + how + ")":<46} {" ".join(kinds)}')
PY
  done
  exit 0
fi
if (( load == 0 )); then
  printf '%-24s %-6s %12s %9s %-16s %s\n' case search executions s verdict "dpor/dfs"
  for c in "${cases[@]}"; do
    IFS='|' read -r name interpose script args <<<"$c"
    read -r de ds dv dx _ <<<"$(run dpor "$interpose" "$script" "$args")"
    read -r fe fs fv fx _ <<<"$(run dfs "$interpose" "$script" "$args")"
    printf '%-24s %-6s %12s %9s %-16s\n' "$name" dpor "$de" "$ds" "$dv $dx"
    ratio=-
    if [[ $dv == proven ]]; then
      # two significant digits below 1% (32 of 175904: 0.018%), one decimal above
      ratio=$(python3 -c "r = 100 * $de / $fe; print(f'{r:.2g}%' if r < 1 else f'{r:.1f}%')")
      # cut short, dfs's count is a lower bound of its full search's: the share an upper bound
      [[ $fv == cut-short ]] && ratio="<= $ratio"
    fi
    printf '%-24s %-6s %12s %9s %-16s %s\n' "" dfs "$fe" "$fs" "$fv $fx" "$ratio"
  done
  exit 0
fi
for ((i = 0; i < load; i++)); do
  python3 -c 'while True: pass' &
  busy+=($!)
done
echo "beside $load CPU-bound processes, $runs runs each"
# same: whether every run took the same executions to the same verdict; a run cut short by the
# time limit stops where the machine's speed put it, so runs cut short are not compared (cut:
# how many were). nondet: the runs that ended with a nondeterministic finding.
printf '%-24s %-6s %-34s %-5s %-4s %-6s %s\n' case search "distinct executions:verdict" same cut nondet \
  "settled decisions per run"
for c in "${cases[@]}"; do
  IFS='|' read -r name interpose script args <<<"$c"
  for strategy in ${STRATEGIES:-dpor dfs}; do
    counts=() settled=()
    for ((k = 0; k < runs; k++)); do
      read -r e _ v _ s <<<"$(run "$strategy" "$interpose" "$script" "$args")"
      counts+=("$e:$v")
      settled+=("$s")
    done
    all=$(printf '%s\n' "${counts[@]}")
    cut=$(grep -c ':cut-short$' <<<"$all" || true)
    nondet=$(grep -c ':nondeterministic$' <<<"$all" || true)
    whole=$(grep -v ':cut-short$' <<<"$all" | sort -u | grep -c . || true)
    case $whole in 0) same=- ;; 1) same=yes ;; *) same=NO ;; esac
    printf '%-24s %-6s %-34s %-5s %-4s %-6s %s\n' "$name" "$strategy" \
      "$(sort -u <<<"$all" | tr '\n' ' ')" "$same" "$cut" "$nondet" "${settled[*]}"
  done
done

#!/usr/bin/env bash
# Conformance by finding kinds on real torch 2.11, one GPU (docs/conformance.md, the H200 section;
# raw results in docs/results/conformance-h200-v2/).
#   tools/gpu/conformance-v2.sh OUTDIR PHASE...
# phases, in the order given:
#   diag     tools/gpu/fx_flag_timeline.py (FX's flag against the table's points) and the lines of
#            the installed torch that the table and the probes rely on
#   f12      tools/gpu/f12_probe.py (eager flex_attention's own trace, F12), plain threads
#   follow   the model's schedule of every kind it reaches, forced live for 3 executions
#            (racelab explore, then racelab live python --follow), $JOBS (3) at a time
#   table    tools/conformance.py --mode torch --follow (search by kinds, replays, follow), its
#            rows split into three groups run side by side, then the table
#   f12live  the F12 pipeline (recompile_limit 1, drafters at lengths past the budget) searched
#            under racelab, FX's flag printed as each execution starts and ends
#   replay   every live schedule in $REPLAY_DIR (default replay/) replayed 3 times
#            (--settle-ms $REPLAY_SETTLE_MS, default 10)
# racelab: .gpu-bin/racelab.gz (a stripped build of an earlier call, carried) when it is there,
# else built (tools/gpu/build.sh, without LibTorch: racelab live python needs none) and written to
# OUTDIR/racelab.gz for the next call. Everything else goes to OUTDIR/results.tar.gz. Settings
# (environment): ONLY (rows), JOBS, TABLE and SCRIPT (another table or pipeline), SUFFIX (of the
# follow directories), DEADLINE (seconds after which no further phase starts), and the timeouts
# and budgets named below.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tools/gpu/conformance-v2.sh OUTDIR PHASE...}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
w=/tmp/conformance-v2
mkdir -p "$w"
log=$out/batch.log
export PYTHONUNBUFFERED=1
t_start=$(date +%s)
note() { echo "[$(( $(date +%s) - t_start )) s] $*" | tee -a "$log"; }
root=$PWD/.gpu-deps/root
for d in .gpu-deps/libtomlplusplus*.deb; do dpkg -x "$d" "$root"; done
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
rl=$PWD/build/gpu/harness/racelab
if [ -n "${RACELAB:-}" ]; then  # a racelab of this machine (the stand-in: TABLE=standin
  rl=$(realpath "$RACELAB")      # SCRIPT=tools/pipelines/drafter_standin.py, phase follow)
elif [ -x "$rl" ]; then
  note "racelab already built"
elif [ -f .gpu-bin/racelab.gz ]; then
  mkdir -p "$(dirname "$rl")" && gunzip -c .gpu-bin/racelab.gz >"$rl" && chmod +x "$rl"
  note "racelab from .gpu-bin/racelab.gz"
else
  note "building racelab"
  RACELAB_TORCH=OFF tools/gpu/build.sh racelab >"$w/build.log" 2>&1 ||
    { tail -30 "$w/build.log" | tee -a "$log"; exit 3; }
  strip -o "$w/racelab.stripped" "$rl" && gzip -c "$w/racelab.stripped" >"$out/racelab.gz"
  note "built"
fi
# The embedded interpreter does not know the virtual environment torch lives in.
export PYTHONPATH=$(python3 -c 'import site; print(":".join(site.getsitepackages()))')
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c 'import sys, torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version.split()[0])'
  cat SNAPSHOT 2>/dev/null || git log -1 --format='tree of commit %h %s' 2>/dev/null || true
} >"$w/machine.txt" 2>&1
# The one-GPU rows: name, scenario, the pipeline's arguments (as `tools/conformance.py --list`
# derives them from the scenarios).
rows=(
  "lazy-2-drafters|deadlock/lazy-2-drafters|--drafters 2 --warmup none"
  "lazy-4-drafters|deadlock/lazy-4-drafters|--drafters 4 --warmup none"
  "per-thread-lock|deadlock/per-thread-lock|--drafters 2 --warmup per_thread_lock"
  "sequential-forward-backward|warmup/sequential-forward-backward|--drafters 2 --warmup sequential"
  "sequential-forward-only|warmup/sequential-forward-only|--drafters 2 --warmup sequential --no-warmup-backward"
  "warmup-other-length|warmup/warmup-other-length|--drafters 2 --warmup sequential --warmup-seq-len 1024 --seq-len 1536"
  "warmup-other-length-static|warmup/warmup-other-length-static|--drafters 2 --warmup sequential --warmup-seq-len 1024 --seq-len 1536 --no-automatic-dynamic"
  "lock-first-forward|warmup/lock-first-forward|--drafters 2 --warmup lock_first_forward"
)
script=${SCRIPT:-tools/pipelines/drafter_torch.py}
live=("$rl" live python --interpose "${TABLE:-torch-2.11}" --hang-timeout 90 --cycle-confirm-ms 2000)
throttle() { while [ "$(jobs -rp | wc -l)" -ge "${JOBS:-3}" ]; do wait -n; done; }
for phase in "$@"; do
  if [ -n "${DEADLINE:-}" ] && [ $(( $(date +%s) - t_start )) -gt "$DEADLINE" ]; then
    note "phase $phase skipped: past DEADLINE ($DEADLINE s)"; continue
  fi
  note "phase $phase"
  case $phase in
    diag)
      timeout 150 python3 tools/gpu/fx_flag_timeline.py >"$w/fx-flag-timeline.txt" 2>&1
      note "fx_flag_timeline exit $?"
      tp=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')
      { for pat in "is_fx_symbolic_tracing:_dynamo/eval_frame.py" "compile_fx_forward(:_inductor/compile_fx.py" \
            "compile_fx_backward(:_inductor/compile_fx.py" "make_fx(:_higher_order_ops/flex_attention.py" \
            "_set_compilation_env:_higher_order_ops/flex_attention.py" \
            "_set_compilation_env:nn/attention/flex_attention.py" "torch.compile(:nn/attention/flex_attention.py" \
            "_is_fx_tracing_flag:fx/_symbolic_trace.py" "_is_fx_tracing_flag:_higher_order_ops/utils.py"; do
          echo "## grep -n '${pat%%:*}' torch/${pat#*:}"; grep -n -F "${pat%%:*}" "$tp/${pat#*:}"; done
        echo "## files that name is_fx_symbolic_tracing"; grep -rl --include=*.py is_fx_symbolic_tracing "$tp" | sed "s|$tp/|torch/|"
      } >"$w/torch-source.txt" 2>&1 ;;
    f12)
      timeout "${F12_TIMEOUT:-200}" python3 tools/gpu/f12_probe.py --iterations "${F12_ITERATIONS:-30}" \
        --time-limit "${F12_TIME_LIMIT:-60}" --phases "${F12_PHASES:-A,B}" \
        >"$w/f12-probe${F12_SUFFIX:-}.txt" 2>&1
      note "f12_probe exit $?"; tail -40 "$w/f12-probe${F12_SUFFIX:-}.txt" | tee -a "$log" ;;
    follow)
      for r in "${rows[@]}"; do
        IFS='|' read -r name scen args <<<"$r"
        [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$name,"* ]] && continue
        "$rl" explore "scenarios/$scen.toml" --out "$w/$name-model" >"$w/$name-model.log" 2>&1
        for kind in deadlock fx_trace_error; do
          sched=$w/$name-model/schedules/$name.$kind.json
          [ -f "$sched" ] || continue
          throttle
          d=$w/$name-follow-$kind${SUFFIX:-}
          mkdir -p "$d"
          ( cmd=("${live[@]}" --out "$d" --follow "$sched" --executions 3 --expect deadlock
                 "$script" -- $args)
            echo "\$ ${cmd[*]}" | sed "s|$rl|racelab|; s|$w|OUT|g" >"$d/follow.log"
            timeout "${FOLLOW_TIMEOUT:-300}" "${cmd[@]}" >>"$d/follow.log" 2>&1; echo "exit $?" >>"$d/follow.log"
            python3 - "$d/report.json" "$kind" "$name${SUFFIX:-}" <<'PY' | tee -a "$log"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"{sys.argv[3]}: follow {sys.argv[2]}: no report ({e})"); sys.exit()
first = [f["execution"] + 1 for f in r["findings"] + [r.get("other_failure") or {}]
         if f.get("kind") == sys.argv[2] and "execution" in f]
print(f"{sys.argv[3]}: follow {sys.argv[2]}: " +
      (f"reproduced in execution {min(first)}" if first else "NOT reproduced") +
      f" of {r['executions']}; kinds seen {r.get('kinds_seen')}")
PY
          ) &
        done
      done
      wait ;;
    table)
      groups=("lazy-2-drafters,sequential-forward-backward,lock-first-forward"
              "lazy-4-drafters,sequential-forward-only,warmup-other-length"
              "per-thread-lock,warmup-other-length-static")
      for g in "${groups[@]}"; do
        timeout "${TABLE_TIMEOUT:-520}" python3 tools/conformance.py --racelab "$rl" --mode torch \
          --out "$w/table" --only "$g" --hang-timeout 90 --cycle-confirm-ms 2000 \
          --search-executions "${SEARCH_EXECUTIONS:-30}" --clean-executions 10 \
          --time-limit "${SEARCH_TIME_LIMIT:-100}" --more-seeds 2 --follow \
          >"$w/table-${g%%,*}.log" 2>&1 &
      done
      wait
      python3 tools/conformance.py --table-from "$w/table" --markdown "$w/conformance.md" >>"$log" 2>&1
      cat "$w"/table-*.log | grep -E "^[a-z0-9-]+: model" | tee -a "$log" ;;
    f12live)
      IFS=';' read -r -a specs <<<"${F12_LIVE_SPECS:-2 1024,1536;3 1024,1536,2048}"
      for spec in "${specs[@]}"; do
        read -r nd lens <<<"$spec"
        d=$w/f12-live-$nd${F12_SUFFIX:-}
        mkdir -p "$d"
        cmd=("$rl" live python --interpose torch-2.11 --strategy random
             --executions "${F12_LIVE_EXECUTIONS:-15}" --expect deadlock --time-limit "${F12_LIVE_TIME_LIMIT:-80}" --hang-timeout 90
             --cycle-confirm-ms 2000 --out "$d" "$PWD/tools/pipelines/drafter_torch.py" -- --drafters "$nd"
             --warmup sequential --seq-len 1024 --drafter-seq-lens "$lens" --recompile-limit 1 --report-fx-flag)
        { echo "\$ ${cmd[*]}" | sed "s|$rl|racelab|; s|$PWD/||g; s|$w|OUT|g"; timeout 150 "${cmd[@]}"; echo "exit $?"; } >"$d/search.log" 2>&1
        note "f12live $nd drafters: $(grep -E '^(deadlock|fx_trace_error|exception|hang|clean|no )' "$d/search.log" | head -3 | tr '\n' ' ')"
      done ;;
    replay)
      for sched in "${REPLAY_DIR:-replay}"/*.json; do
        b=$(basename "$sched" .json)
        for k in 1 2 3; do
          d=$w/replay-$b-$k${REPLAY_SUFFIX:-}
          mkdir -p "$d"
          st=(--settle-ms "${REPLAY_SETTLE_MS:-10}")
          { echo "\$ racelab live python --hang-timeout 90 --cycle-confirm-ms 2000 ${st[*]} --replay $sched"
            timeout 200 "$rl" live python --hang-timeout 90 --cycle-confirm-ms 2000 "${st[@]}" --out "$d" --replay "$sched"
            echo "exit $?"; } >"$d/replay.log" 2>&1
          note "replay $b ($k): $(grep -E '^(deadlock|fx_trace_error|exception|hang|no failure|clean)' "$d/replay.log" | head -1)"
        done
      done ;;
    *) note "unknown phase $phase" ;;
  esac
done
cp "$w/machine.txt" "$out/"
tar -C "$w" -czf "$out/results.tar.gz" --exclude=racelab.stripped . 2>>"$log"
note "done; results.tar.gz $(du -h "$out/results.tar.gz" | cut -f1)"

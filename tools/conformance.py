#!/usr/bin/env python3
"""Model against reality, scenario by scenario, by finding kinds: the conformance table of
docs/conformance.md.

For every one-GPU scenario with a compiled attention, it runs the model (racelab explore) and the
same case live through the embedded Python bridge (racelab live python): on the pure-Python
stand-in (--mode standin, any machine) or on real torch 2.11 (--mode torch, a GPU machine; see
tools/gpu/conformance.sh). A row compares two sets of finding kinds, among those both sides can
observe (COMPARED: the Python bridge sees deadlocks and FX tracing errors, not compiles):

- model kinds: the kinds of the findings of `racelab explore SCENARIO` (report.json);
- live kinds: the failure kinds seen in any execution of the live search. The search runs under
  `--expect deadlock`, which goes on past other failures and stops at a deadlock; when it stopped
  there before it saw every kind the model reaches, it runs again with the next seeds
  (--more-seeds), and the kinds of every execution are pooled. A case the model says deadlocks is
  searched with --strategy (random) and --search-executions; the others with PCT and
  --clean-executions.

The row agrees when the sets are equal. A found deadlock's schedule is replayed 3 times in fresh
processes. --follow forces, for each kind the model reaches, the model's schedule for that kind
(OUT-model/schedules/NAME.KIND.json) on the live run (racelab live python --follow, 3
executions) and says whether it reproduced the kind. --natural N also runs the flagged cases N
times as plain Python (no racelab), to show what an unforced run does.

  tools/conformance.py --racelab build/ci/harness/racelab --mode standin --out racelab-out/conf
  tools/conformance.py --table-from DIR [DIR...] --markdown conformance.md   # rows -> table
  tools/conformance.py --list        # each case's pipeline arguments, derived from its scenario

A case is a scenario file (CASES); the pipeline script's arguments for it are derived from that
file (tools/pipelines/settings.py, script_args: the scenario format's keys and the pipelines'
options have the same names), so a scenario edit changes the live case with it.

Every case's row is also written to OUT/rows/NAME.json, so that runs split over several calls
(--only) make one table with --table-from. Exit 0 when every row agrees.
"""
import argparse, glob, json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "pipelines"))
import settings  # noqa: E402  (tools/pipelines/settings.py: the pipeline settings' names)

# The finding kinds the model and a live python run can both observe. The bridge cannot see
# duplicate_compile or compile_after_warmup (they are inside torch), so they are not compared.
COMPARED = ("deadlock", "fx_trace_error")
# Kinds that are evidence, not failures: never part of the live set.
EVIDENCE = {"duplicate_compile", "compile_after_warmup", "recompile_limit"}
FOLLOW_EXECUTIONS = 3

# The scenarios run, and whether --natural applies. A case's script arguments come from its
# scenario file (case_args), in the scenario format's names (tools/pipelines/settings.py).
CASES = [
    ("scenarios/deadlock/lazy-2-drafters.toml", False),
    ("scenarios/deadlock/lazy-4-drafters.toml", False),
    ("scenarios/deadlock/per-thread-lock.toml", False),
    ("scenarios/warmup/sequential-forward-backward.toml", False),
    ("scenarios/warmup/sequential-forward-only.toml", False),
    ("scenarios/warmup/warmup-other-length.toml", True),
    ("scenarios/warmup/warmup-other-length-static.toml", False),
    ("scenarios/warmup/lock-first-forward.toml", False),
]


def case_args(scenario):
    """The drafter pipeline's arguments for a scenario file (relative to the repository), read
    with tomllib and mapped by settings.script_args: [pipeline] devices, drafters_per_device,
    seq_len, steps, heads, head_dim; [warmup] mode, backward, seq_len; [torch]
    automatic_dynamic."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    with open(os.path.join(ROOT, scenario), "rb") as f:
        return settings.script_args(tomllib.load(f), scenario)


def name_of(scenario):
    return os.path.splitext(os.path.basename(scenario))[0]


def run(cmd, timeout):
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(cmd, 124, e.stdout or "", e.stderr or "")
        if isinstance(r.stdout, bytes):
            r.stdout = r.stdout.decode(errors="replace")
    return r, time.time() - t0


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def live_kinds_of(kinds_seen):
    return sorted(k for k in kinds_seen if k not in EVIDENCE)


def one_case(a, scenario, args, natural_ok, script, interpose):
    name = name_of(scenario)
    out = os.path.join(a.out, name)
    row = {"scenario": name, "mode": a.mode}
    mr, _ = run([a.racelab, "explore", os.path.join(ROOT, scenario), "--out", out + "-model"], 600)
    mrep = load(out + "-model/report.json")
    if mrep is None:
        row["error"] = [f"racelab explore exit {mr.returncode}"] + \
            (mr.stderr + mr.stdout).strip().splitlines()[-2:]
        mrep = {"findings": []}
    model_kinds = sorted({f["kind"] for f in mrep["findings"]} & set(COMPARED))
    row["model_kinds"] = model_kinds
    common = ["--hang-timeout", a.hang_timeout, "--cycle-confirm-ms", a.cycle_confirm_ms]
    live = [a.racelab, "live", "python", "--interpose", interpose] + common
    if "deadlock" in model_kinds:
        budget = ["--strategy", a.strategy, "--executions", str(a.search_executions)]
    else:
        budget = ["--strategy", "pct", "--executions", str(a.clean_executions)]
    budget += ["--expect", "deadlock"]  # on past other failures: every kind is seen
    if a.time_limit:
        budget += ["--time-limit", str(a.time_limit)]
    kinds_seen, executions, seconds, searches = {}, 0, 0.0, []
    rep = None
    for k in range(1 + a.more_seeds):
        sdir = out if k == 0 else f"{out}-seed-{k + 1}"
        seed = [] if k == 0 else ["--seed", str(k + 1)]
        r, secs = run(live[:3] + ["--out", sdir] + live[3:] + budget + seed + [script, "--"] +
                      args, a.process_timeout)
        srep = load(os.path.join(sdir, "report.json"))
        if srep is None:
            row["error"] = [f"live search exit {r.returncode}"] + \
                (r.stderr + r.stdout).strip().splitlines()[-2:]
            break
        if k == 0:
            rep = srep
        searches.append(sdir)
        executions += srep["executions"]
        seconds += srep["seconds"]
        for kind, n in srep.get("kinds_seen", {}).items():
            kinds_seen[kind] = kinds_seen.get(kind, 0) + n
        stopped_at_deadlock = any(f["kind"] == "deadlock" for f in srep["findings"])
        missing = set(model_kinds) - set(kinds_seen)
        if not (stopped_at_deadlock and missing):
            break  # the search ran its budget, or it has seen what the model reaches
    live_kinds = live_kinds_of(kinds_seen)
    row.update(live_kinds=live_kinds, agree=live_kinds == model_kinds and "error" not in row,
               executions=executions, kinds_seen=kinds_seen, searches=len(searches),
               seconds_per_run=seconds / max(executions, 1), runs=executions, hangs=0,
               replays="")
    if rep is not None:
        row["finding"] = next((f["message"] for f in rep["findings"] if f["kind"] == "deadlock"),
                              "")
        row["other"] = rep.get("other_failure", {}).get("message", "") or next(
            (f["message"] for f in rep["findings"] if f["kind"] != "deadlock"), "")
    # The first search's deadlock schedule, replayed in fresh processes. The report names it: an
    # execution that deadlocked after a drafter's FX error has its schedule named after the first
    # failure, schedule-fx_trace_error.json, the name of the other failure's schedule too, which
    # then overwrites it (harness/live.cc write_outputs): such a schedule is not replayed.
    schedule = (rep or {}).get("schedule") or os.path.join(out, "schedule-deadlock.json")
    lost = schedule == ((rep or {}).get("other_failure") or {}).get("schedule")
    if rep is not None and any(f["kind"] == "deadlock" for f in rep["findings"]) and lost:
        row["replays"] = "lost"
        row["hangs"] = kinds_seen.get("deadlock", 0)
    elif rep is not None and any(f["kind"] == "deadlock" for f in rep["findings"]):
        ok = 0
        for k in range(3):
            rr, _ = run([a.racelab, "live", "python", "--out", f"{out}-replay-{k}"] + common +
                        ["--replay", schedule], a.process_timeout)
            ok += rr.returncode == 1 and "deadlock (execution" in rr.stdout
        row["replays"] = f"{ok}/3"
        row["runs"] += 3
        row["hangs"] = kinds_seen.get("deadlock", 0) + ok
    else:
        row["hangs"] = kinds_seen.get("deadlock", 0) + kinds_seen.get("hang", 0)
    if a.follow:
        # Each kind's model schedule, forced on the live run (racelab live python --follow).
        row["follow"] = {}
        for kind in model_kinds:
            msched = os.path.join(out + "-model", "schedules", f"{name}.{kind}.json")
            fdir = f"{out}-follow-{kind}"
            fr, _ = run([a.racelab, "live", "python", "--out", fdir, "--interpose", interpose] +
                        common + ["--follow", msched, "--executions", str(FOLLOW_EXECUTIONS),
                                  "--expect", "deadlock", script, "--"] + args, a.process_timeout)
            frep = load(os.path.join(fdir, "report.json"))
            seen = live_kinds_of(frep.get("kinds_seen", {})) if frep else []
            first = None
            if frep:
                for f in frep["findings"] + [frep.get("other_failure") or {}]:
                    if f.get("kind") == kind:
                        first = f.get("execution")
                        break
            row["follow"][kind] = {"reproduced": kind in seen, "execution": first, "seen": seen,
                                   "executions": frep["executions"] if frep else 0}
            if frep is None:
                row["follow"][kind]["error"] = (fr.stderr + fr.stdout).strip().splitlines()[-2:]
    if a.natural and natural_ok:
        passed = 0
        for _ in range(a.natural):
            nr, _ = run([sys.executable, script] + args, a.natural_timeout)
            passed += nr.returncode == 0
        row["natural"] = f"{passed}/{a.natural} passed"
    shown = ["racelab", "live", "python", "--interpose", interpose] + budget + \
        [os.path.relpath(script, ROOT), "--"] + args
    row["command"] = " ".join(shown)
    os.makedirs(os.path.join(a.out, "rows"), exist_ok=True)
    with open(os.path.join(a.out, "rows", name + ".json"), "w") as f:
        json.dump(row, f, indent=2)
    print(f"{name}: model {{{', '.join(model_kinds)}}}, live {{{', '.join(live_kinds)}}} "
          f"({'agree' if row['agree'] else 'DISAGREE'}) after {row['runs']} run(s)"
          f"{', replays ' + row['replays'] if row.get('replays') else ''}"
          f"{', follow ' + follow_text(row) if row.get('follow') else ''}"
          f"{', natural ' + row['natural'] if row.get('natural') else ''}"
          f"{', error: ' + ' | '.join(row['error']) if row.get('error') else ''}", flush=True)
    return row


def upgrade(r):
    """A row written before conformance by kinds (one verdict per side): its kind sets."""
    if "model_kinds" not in r:
        r["model_kinds"] = ["deadlock"] if r.get("model") == "deadlock" else []
        r["live_kinds"] = live_kinds_of(r.get("kinds_seen", {}))
        r["agree"] = r["live_kinds"] == r["model_kinds"]
        if isinstance(r.get("follow"), str):
            r["follow"] = {"deadlock": {"reproduced": r["follow"] == "deadlock", "execution": 0,
                                        "seen": [r["follow"]]}}
    return r


def kinds_text(kinds):
    return "{" + ", ".join(kinds) + "}"


def follow_text(r):
    parts = []
    for kind, f in sorted(r.get("follow", {}).items()):
        if f.get("reproduced"):
            parts.append(f"{kind}: yes" + (f" (execution {f['execution']})"
                                           if f.get("execution") is not None else ""))
        else:
            parts.append(f"{kind}: no ({', '.join(f.get('seen') or []) or 'clean'})")
    return "; ".join(parts) or "-"


def table(rows):
    rows = [upgrade(r) for r in rows]
    order = [name_of(s) for s, _ in CASES]
    rows = sorted(rows, key=lambda r: order.index(r["scenario"]) if r["scenario"] in order else 99)
    natural = any(r.get("natural") for r in rows)
    follow = any("follow" in r for r in rows)

    def seen(r):
        ks = {k: n for k, n in r.get("kinds_seen", {}).items() if k not in EVIDENCE}
        total = r.get("executions")
        return (", ".join(f"{k} in {n}" for k, n in sorted(ks.items())) or "-") + \
            (f" of {total}" if total and ks else "")

    head = ("| scenario | model kinds | live kinds | agree | runs | live executions with each kind |"
            " replays that deadlock | time per run |"
            + (f" model schedule of each kind followed ({FOLLOW_EXECUTIONS} executions) |"
               if follow else "")
            + (" natural runs (no racelab) |" if natural else "") + " live command |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for r in rows:
        lines.append(f"| {r['scenario']} | {kinds_text(r['model_kinds'])} "
                     f"| {kinds_text(r['live_kinds'])} | {'yes' if r['agree'] else '**no**'} "
                     f"| {r['runs']} | {seen(r)} | {r.get('replays') or '-'} "
                     f"| {r['seconds_per_run']:.2f} s |"
                     + (f" {follow_text(r)} |" if follow else "")
                     + (f" {r.get('natural') or '-'} |" if natural else "")
                     + f" `{r['command']}` |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--racelab")
    p.add_argument("--mode", choices=["standin", "torch"], default="standin")
    p.add_argument("--out")
    p.add_argument("--only", default="", help="comma-separated scenario names")
    p.add_argument("--strategy", default="random", help="strategy of the deadlock searches")
    p.add_argument("--search-executions", type=int, default=1000)
    p.add_argument("--clean-executions", type=int, default=200)
    p.add_argument("--time-limit", type=float, default=0, help="seconds per live search")
    p.add_argument("--hang-timeout", default="2")
    p.add_argument("--cycle-confirm-ms", default="1000")
    p.add_argument("--process-timeout", type=float, default=900)
    p.add_argument("--more-seeds", type=int, default=4,
                   help="searches with seeds 2.. when one stopped at a deadlock before it saw "
                        "every kind the model reaches")
    p.add_argument("--follow", action="store_true",
                   help="also force the model's schedule of each kind it reaches "
                        "(live python --follow)")
    p.add_argument("--natural", type=int, default=0)
    p.add_argument("--natural-timeout", type=float, default=180)
    p.add_argument("--markdown", help="write the table here")
    p.add_argument("--table-from", nargs="*", help="make the table from these OUT directories")
    p.add_argument("--list", action="store_true",
                   help="print each case's scenario and the pipeline arguments derived from it")
    a = p.parse_args()
    if a.list:
        for s, natural in CASES:
            print(f"{name_of(s)}: {' '.join(case_args(s))}" + ("  (--natural)" if natural else ""))
        return
    if a.table_from:
        rows = [json.load(open(f)) for d in a.table_from
                for f in sorted(glob.glob(os.path.join(d, "rows", "*.json")))]
    else:
        if not a.racelab or not a.out:
            p.error("--racelab and --out are needed to run cases")
        script = os.path.join(HERE, "pipelines",
                              "drafter_standin.py" if a.mode == "standin" else "drafter_torch.py")
        interpose = "standin" if a.mode == "standin" else "torch-2.11"
        only = {s for s in a.only.split(",") if s}
        unknown = only - {name_of(s) for s, _ in CASES}
        if unknown:
            p.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
        rows = [one_case(a, s, case_args(s), nat, script, interpose) for s, nat in CASES
                if not only or name_of(s) in only]
    text = table(rows)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    print(text)
    sys.exit(0 if all(r["agree"] for r in rows) else 1)


if __name__ == "__main__":
    main()

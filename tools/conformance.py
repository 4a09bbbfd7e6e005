#!/usr/bin/env python3
"""Model against reality, scenario by scenario: the conformance table of docs/conformance.md.

For every one-GPU scenario with a compiled attention, it runs the model (racelab explore) and the
same case live through the embedded Python bridge (racelab live python): on the pure-Python
stand-in (--mode standin, any machine) or on real torch 2.11 (--mode torch, a GPU machine; see
tools/gpu/conformance.sh). A case the model says deadlocks is searched live until the deadlock is
found, and its schedule is replayed 3 times in fresh processes; a clean case runs
--clean-executions executions. --natural N also runs the flagged cases N times as plain Python
(no racelab), to show what an unforced run does.

  tools/conformance.py --racelab build/ci/harness/racelab --mode standin --out racelab-out/conf
  tools/conformance.py --table-from DIR [DIR...] --markdown conformance.md   # rows -> table

Every case's row is also written to OUT/rows/NAME.json, so that runs split over several calls
(--only) make one table with --table-from.
"""
import argparse, glob, json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# scenario file, the pipeline script's arguments for the same case, whether --natural applies
CASES = [
    ("scenarios/deadlock/lazy-2-drafters.toml", ["--drafters", "2", "--warmup", "none"], False),
    ("scenarios/deadlock/lazy-4-drafters.toml", ["--drafters", "4", "--warmup", "none"], False),
    ("scenarios/deadlock/per-thread-lock.toml", ["--drafters", "2", "--warmup", "per_thread_lock"],
     False),
    ("scenarios/warmup/sequential-forward-backward.toml",
     ["--drafters", "2", "--warmup", "sequential"], False),
    ("scenarios/warmup/sequential-forward-only.toml",
     ["--drafters", "2", "--warmup", "sequential_forward"], False),
    ("scenarios/warmup/warmup-other-length.toml",
     ["--drafters", "2", "--warmup", "sequential", "--warmup-seq-len", "1024", "--seq-len",
      "1536"], True),
    # The same scenario with torch.compile(dynamic=False): every length compiles static.
    ("scenarios/warmup/warmup-other-length.toml",
     ["--drafters", "2", "--warmup", "sequential", "--warmup-seq-len", "1024", "--seq-len",
      "1536", "--dynamic", "false"], False),
    ("scenarios/warmup/lock-first-forward.toml",
     ["--drafters", "2", "--warmup", "lock_first_forward"], False),
]


def name_of(scenario, args=()):
    name = os.path.splitext(os.path.basename(scenario))[0]
    return name + "-static" if "--dynamic" in args and "false" in args else name


def run(cmd, timeout):
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(cmd, 124, e.stdout or "", e.stderr or "")
        if isinstance(r.stdout, bytes):
            r.stdout = r.stdout.decode(errors="replace")
    return r, time.time() - t0


def one_case(a, scenario, args, natural_ok, script, interpose):
    name = name_of(scenario, args)
    out = os.path.join(a.out, name)
    run([a.racelab, "explore", os.path.join(ROOT, scenario), "--out", out + "-model"], 600)
    kinds = {f["kind"] for f in json.load(open(out + "-model/report.json"))["findings"]}
    model = "deadlock" if "deadlock" in kinds else "clean"
    common = ["--hang-timeout", a.hang_timeout, "--cycle-confirm-ms", a.cycle_confirm_ms]
    live = [a.racelab, "live", "python", "--out", out, "--interpose", interpose] + common
    if model == "deadlock":
        budget = ["--strategy", a.strategy, "--executions", str(a.search_executions),
                  "--expect", "deadlock"]
    else:
        budget = ["--strategy", "pct", "--executions", str(a.clean_executions)]
    if a.time_limit:
        budget += ["--time-limit", str(a.time_limit)]
    cmd = live + budget + [script, "--"] + args
    r, secs = run(cmd, a.process_timeout)
    row = {"scenario": name, "model": model, "mode": a.mode}
    try:
        rep = json.load(open(os.path.join(out, "report.json")))
    except (OSError, ValueError):
        rep = None
    if rep is None:
        row.update(live="error", runs=0, hangs=0, replays="", seconds_per_run=secs,
                   error=[f"exit {r.returncode}"] + (r.stderr + r.stdout).strip().splitlines()[-2:])
    else:
        kinds = [f["kind"] for f in rep["findings"]]
        found = "deadlock" in kinds
        failed = r.returncode != 0 and not (found and model == "deadlock")
        verdict = "deadlock" if found else (kinds[0] if kinds else "error" if failed else "clean")
        row.update(live=verdict, runs=rep["executions"], hangs=int(found),
                   seconds_per_run=rep["seconds"] / max(rep["executions"], 1),
                   finding=next((f["message"] for f in rep["findings"]
                                 if f["kind"] == "deadlock"), ""),
                   other=rep.get("other_failure", {}).get("message", ""),
                   kinds_seen=rep.get("kinds_seen", {}))
        if failed and not found:
            row["error"] = (r.stdout + r.stderr).strip().splitlines()[-3:]
        replays = ""
        if found:
            ok = 0
            for k in range(3):
                rr, _ = run([a.racelab, "live", "python", "--out", f"{out}-replay-{k}"] + common +
                            ["--replay", os.path.join(out, "schedule-deadlock.json")],
                            a.process_timeout)
                ok += rr.returncode == 1 and "deadlock (execution" in rr.stdout
            replays = f"{ok}/3"
            row["runs"] += 3
            row["hangs"] += ok
        row["replays"] = replays
    if a.follow and model == "deadlock":
        # The model's own deadlock schedule, forced on the live run (racelab live python --follow).
        msched = os.path.join(out + "-model", "schedules", f"{name_of(scenario)}.deadlock.json")
        fr, _ = run([a.racelab, "live", "python", "--out", out + "-follow", "--interpose",
                     interpose] + common + ["--follow", msched, "--executions", "1", "--expect",
                                            "deadlock", script, "--"] + args, a.process_timeout)
        row["follow"] = "deadlock" if "deadlock (execution 0" in fr.stdout else \
            next((l.split(" (")[0] for l in fr.stdout.splitlines()
                  if l.startswith(("exception", "hang", "data_race"))), "clean")
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
    print(f"{name}: model {model}, live {row['live']} after {row['runs']} run(s)"
          f"{', replays ' + row['replays'] if row.get('replays') else ''}"
          f"{', natural ' + row['natural'] if row.get('natural') else ''}"
          f"{', error: ' + ' | '.join(row['error']) if row.get('error') else ''}", flush=True)
    return row


def table(rows):
    order = [name_of(s, args) for s, args, _ in CASES]
    rows = sorted(rows, key=lambda r: order.index(r["scenario"]) if r["scenario"] in order else 99)
    natural = any(r.get("natural") for r in rows)
    follow = any(r.get("follow") for r in rows)
    def others(r):
        seen = {k: n for k, n in r.get("kinds_seen", {}).items()
                if k not in ("deadlock", "duplicate_compile", "compile_after_warmup")}
        return ", ".join(f"{k} in {n}" for k, n in sorted(seen.items())) or "-"
    head = ("| scenario | model | live | runs | hangs | replays that deadlock | time per run |"
            " other failures (executions) |"
            + (" model schedule forced (--follow) |" if follow else "")
            + (" natural runs (no racelab) |" if natural else "") + " live command |")
    lines = [head, "|" + "---|" * head.count(" |")]
    for r in rows:
        lines.append(f"| {r['scenario']} | {r['model']} | {r['live']} | {r['runs']} | {r['hangs']} "
                     f"| {r.get('replays') or '-'} | {r['seconds_per_run']:.1f} s | {others(r)} |"
                     + (f" {r.get('follow') or '-'} |" if follow else "")
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
    p.add_argument("--follow", action="store_true",
                   help="also force each deadlocking case's model schedule (live python --follow)")
    p.add_argument("--natural", type=int, default=0)
    p.add_argument("--natural-timeout", type=float, default=180)
    p.add_argument("--markdown", help="write the table here")
    p.add_argument("--table-from", nargs="*", help="make the table from these OUT directories")
    a = p.parse_args()
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
        unknown = only - {name_of(s, args) for s, args, _ in CASES}
        if unknown:
            p.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
        rows = [one_case(a, s, args, nat, script, interpose) for s, args, nat in CASES
                if not only or name_of(s, args) in only]
    text = table(rows)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    print(text)
    sys.exit(0 if all(r["model"] == r["live"] for r in rows) else 1)


if __name__ == "__main__":
    main()

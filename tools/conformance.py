#!/usr/bin/env python3
"""Model against reality, scenario by scenario: the conformance table of docs/conformance.md.

For every one-GPU scenario with a compiled attention, it runs the model (racelab explore) and the
same case live through the embedded Python bridge (racelab live python): on the pure-Python
stand-in (--mode standin, any machine) or on real torch 2.11 (--mode torch, a GPU machine; see
tools/gpu/conformance.sh). A case the model says deadlocks is searched live until the deadlock is
found, and its schedule is replayed 3 times; a clean case runs --clean-executions executions.

  tools/conformance.py --racelab build/ci/harness/racelab --mode standin --out racelab-out/conf
"""
import argparse, json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# scenario file -> the pipeline script's arguments for the same case
CASES = [
    ("scenarios/deadlock/lazy-2-drafters.toml", ["--drafters", "2", "--warmup", "none"]),
    ("scenarios/deadlock/lazy-4-drafters.toml", ["--drafters", "4", "--warmup", "none"]),
    ("scenarios/deadlock/per-thread-lock.toml", ["--drafters", "2", "--warmup", "per_thread_lock"]),
    ("scenarios/warmup/sequential-forward-backward.toml",
     ["--drafters", "2", "--warmup", "sequential"]),
    ("scenarios/warmup/sequential-forward-only.toml",
     ["--drafters", "2", "--warmup", "sequential_forward"]),
    ("scenarios/warmup/warmup-other-length.toml",
     ["--drafters", "2", "--warmup", "sequential", "--warmup-seq-len", "1024", "--seq-len",
      "1536"]),
    ("scenarios/warmup/lock-first-forward.toml",
     ["--drafters", "2", "--warmup", "lock_first_forward"]),
]


def run(cmd, timeout=900):
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r, time.time() - t0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--racelab", required=True)
    p.add_argument("--mode", choices=["standin", "torch"], default="standin")
    p.add_argument("--out", required=True)
    p.add_argument("--search-executions", type=int, default=1000)
    p.add_argument("--clean-executions", type=int, default=200)
    p.add_argument("--hang-timeout", default="2")
    p.add_argument("--markdown", help="write the table here")
    a = p.parse_args()
    script = os.path.join(HERE, "pipelines",
                          "drafter_standin.py" if a.mode == "standin" else "drafter_torch.py")
    interpose = "standin" if a.mode == "standin" else "torch-2.11"
    rows = []
    for scenario, args in CASES:
        name = os.path.splitext(os.path.basename(scenario))[0]
        out = os.path.join(a.out, name)
        m, _ = run([a.racelab, "explore", os.path.join(ROOT, scenario), "--out", out + "-model"])
        kinds = {f["kind"] for f in json.load(open(out + "-model/report.json"))["findings"]}
        model = "deadlock" if "deadlock" in kinds else "clean"
        live = [a.racelab, "live", "python", "--out", out, "--interpose", interpose,
                "--hang-timeout", a.hang_timeout]
        if model == "deadlock":
            cmd = live + ["--strategy", "random", "--executions", str(a.search_executions),
                          "--expect", "deadlock", script, "--"] + args
        else:
            cmd = live + ["--strategy", "pct", "--executions", str(a.clean_executions), script,
                          "--"] + args
        r, secs = run(cmd)
        rep = json.load(open(os.path.join(out, "report.json")))
        found = any(f["kind"] in ("deadlock", "hang") for f in rep["findings"])
        verdict = "deadlock" if found else ("clean" if r.returncode == 0 else "error")
        replays = ""
        if found:
            ok = 0
            for k in range(3):
                rr, _ = run([a.racelab, "live", "python", "--out", f"{out}-replay-{k}",
                             "--hang-timeout", a.hang_timeout, "--replay",
                             os.path.join(out, "schedule-deadlock.json")])
                ok += rr.returncode == 1 and "deadlock" in rr.stdout
            replays = f"{ok}/3"
        per = rep["seconds"] / max(rep["executions"], 1)
        shown = " ".join(["racelab", "live", "python", "--interpose", interpose] + cmd[cmd.index(
            "--strategy"):cmd.index(script)] + [os.path.relpath(script, ROOT), "--"] + args)
        rows.append((name, model, verdict, rep["executions"], replays, per, shown))
        print(f"{name}: model {model}, live {verdict} after {rep['executions']} execution(s)"
              f"{', replays ' + replays if replays else ''}", flush=True)
    lines = ["| scenario | model | live | executions | replays that deadlock | time per execution "
             "| live command |", "|---|---|---|---|---|---|---|"]
    for name, model, verdict, n, replays, per, shown in rows:
        lines.append(f"| {name} | {model} | {verdict} | {n} | {replays or '-'} | {per * 1000:.0f} ms "
                     f"| `{shown}` |")
    table = "\n".join(lines) + "\n"
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)
    print(table)
    sys.exit(0 if all(m == v for _, m, v, *_ in rows) else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The same seed and options give the same executions, in every process (docs/live.md):

- the `pool` case of tests/live/pipelines/primitives.py (a ThreadPoolExecutor's submit, result,
  as_completed and wait), run in several processes: every execution's trace.txt is the same, less
  its time column (wall time), and so is report.json, less its seconds. concurrent.futures orders
  futures and threads by id(), their address, which differs from process to process;
- a dfs search of it, which runs the same prefixes again in one process and checks that they
  enable the same threads, never finds it nondeterministic, though addresses differ from one
  execution to the next there too;
- decisions wait for quiescence, not for a quiet period: the stand-in pipeline (a foreign worker
  thread per device serving blocking calls, tools/pipelines/standin_torch.py) with its sequential
  warmup is exhausted by dfs with --settle-ms 0, twice, with the same execution and class counts
  and no decision that waited for time (report.json "settle");
- a script that is nondeterministic on purpose (it starts a second thread in every other
  execution) is a `nondeterministic` finding, inconclusive (exit 1), naming the step, both
  enabled sets and a likely cause, with report.json, trace.txt, a schedule and every thread's
  stack kept: never an internal error.
Usage: check_determinism.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
prims = os.path.join(src, "tests", "live", "pipelines", "primitives.py")
failures = []


def live(out, *args):
    cmd = [racelab, "live", "python", "--out", out, "--hang-timeout", "5", "--interpose", "none",
           *args, prims, "--", "pool"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def steps(out):
    """trace.txt without its first column (seconds since the execution started)."""
    with open(os.path.join(out, "trace.txt")) as f:
        return [line.split(None, 1)[1] for line in f]


def report(out):
    with open(os.path.join(out, "report.json")) as f:
        r = json.load(f)
    r.pop("seconds", None)
    return r


with tempfile.TemporaryDirectory() as tmp:
    probe = live(f"{tmp}/probe", "--executions", "1")
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    # trace.txt is the last execution's: a run of n executions shows execution n - 1, so runs of
    # 1, 2, 3 executions, each in two processes, compare the first three; then longer runs.
    runs = [("random", 1), ("random", 2), ("random", 3), ("random", 25), ("pct", 25)]
    for strategy, n in runs:
        seen = []
        for k in range(2):
            out = f"{tmp}/{strategy}-{n}-{k}"
            r = live(out, "--strategy", strategy, "--seed", "3", "--executions", str(n))
            if r.returncode != 0:
                failures.append(f"pool ({strategy}, {n} executions) is not clean:\n"
                                f"  exit {r.returncode}\n{r.stdout}{r.stderr}")
                break
            seen.append((out, steps(out), report(out)))
        for out, trace, rep in seen[1:]:
            first_out, first_trace, first_rep = seen[0]
            if trace != first_trace:
                diff = next(i for i, (a, b) in enumerate(zip(first_trace + [""], trace + [""]))
                            if a != b)
                failures.append(
                    f"pool ({strategy}, seed 3): execution {n - 1} differs between two processes "
                    f"at trace line {diff + 1}:\n  {first_trace[diff:diff + 1]}\n  "
                    f"{trace[diff:diff + 1]}")
            elif rep != first_rep:
                failures.append(f"pool ({strategy}, {n} executions): report.json differs:\n"
                                f"  {first_rep}\n  {rep}")

    r = live(f"{tmp}/dfs", "--strategy", "dfs", "--max-preemptions", "1", "--executions", "10")
    if r.returncode != 1 or "cut short by the execution cap after 10 executions" not in r.stdout:
        failures.append(f"a dfs search of pool did not run its 10 executions:\n"
                        f"  exit {r.returncode}\n{r.stdout}{r.stderr}")

    standin = os.path.join(src, "tools", "pipelines", "drafter_standin.py")
    counts = []
    for k in range(2):
        out = f"{tmp}/standin-{k}"
        r = subprocess.run([racelab, "live", "python", "--out", out, "--interpose", "standin",
                            "--strategy", "dfs", "--settle-ms", "0", "--executions", "5000",
                            standin, "--", "--warmup", "sequential"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or "exhaustive within the bound" not in r.stdout:
            failures.append(f"dfs of the stand-in's sequential warmup with --settle-ms 0 did not "
                            f"exhaust its bound cleanly:\n  exit {r.returncode}\n{r.stdout}{r.stderr}")
            break
        with open(os.path.join(out, "report.json")) as f:
            rep = json.load(f)
        if rep.get("settle") != {"ms": 0, "decisions": 0}:
            failures.append(f"stand-in, sequential warmup: a decision waited for time: "
                            f"{rep.get('settle')}")
        counts.append((rep.get("executions"), rep.get("interleaving_classes")))
    if len(counts) == 2 and (counts[0] != counts[1] or not counts[0][0] or counts[0][0] < 100):
        failures.append(f"stand-in, sequential warmup: two dfs runs differ or are too small: "
                        f"{counts}")

    flaky = f"{tmp}/flaky.py"
    with open(flaky, "w") as f:
        f.write('''import os
import threading

# A counter that outlives each execution: every other execution starts one worker fewer, as a
# script that reads the clock or a file would take another path from one run to the next.
n = int(os.environ.get("FLAKY_RUNS", "0"))
os.environ["FLAKY_RUNS"] = str(n + 1)
lock = threading.Lock()


def work():
    with lock:
        pass


threads = [threading.Thread(target=work, name=f"w{i}") for i in range(2 - n % 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
''')
    out = f"{tmp}/flaky"
    r = subprocess.run([racelab, "live", "python", "--out", out, "--interpose", "none",
                        "--strategy", "dfs", flaky], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "FLAKY_RUNS": "0"})
    text = r.stdout + r.stderr
    if r.returncode != 1 or "internal error" in text or "nondeterministic" not in text:
        failures.append(f"a nondeterministic script is not a nondeterministic finding, exit 1:\n"
                        f"  exit {r.returncode}\n{text}")
    elif not all(w in text for w in ("enabled when first explored", "likely cause", "inconclusive")):
        failures.append(f"the nondeterministic finding lacks its step, sets or cause:\n{text}")
    else:
        with open(os.path.join(out, "report.json")) as f:
            rep = json.load(f)
        kinds = [f["kind"] for f in rep.get("findings", [])]
        if kinds[:1] != ["nondeterministic"]:
            failures.append(f"report.json findings of the nondeterministic script: {kinds}")
        for name in ("trace.txt", "stacks.txt"):
            if not os.path.exists(os.path.join(out, name)):
                failures.append(f"the nondeterministic script's {name} was not kept")
        if not rep.get("schedule") or not os.path.exists(rep["schedule"]):
            failures.append(f"the nondeterministic execution's schedule was not written: {rep}")

if failures:
    sys.exit("\n".join(failures))
print("pool: the same executions in every process; dfs finds it deterministic; the stand-in "
      "exhausts without a quiet period; a nondeterministic script is said so")

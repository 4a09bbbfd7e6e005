#!/usr/bin/env python3
"""The same seed and options give the same executions, in every process (docs/live.md):

- the `pool` case of tests/live/pipelines/primitives.py (a ThreadPoolExecutor's submit, result,
  as_completed and wait), run in several processes: every execution's trace.txt is the same, less
  its time column (wall time), and so is report.json, less its seconds. concurrent.futures orders
  futures and threads by id(), their address, which differs from process to process;
- a dfs search of it, which runs the same prefixes again in one process and checks that they
  enable the same threads, never finds it nondeterministic (an internal error, exit 3), though
  addresses differ from one execution to the next there too.
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

if failures:
    sys.exit("\n".join(failures))
print("pool: the same executions in every process; dfs finds it deterministic")

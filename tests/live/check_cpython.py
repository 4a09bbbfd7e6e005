#!/usr/bin/env python3
"""racelab's verdicts on a script agree with what CPython does when it runs the script on its own
(docs/live.md, "Threads"; ARCHITECTURE.md: never a deadlock where real Python exits), on
pipelines written the way users write them (tests/live/pipelines):

- daemon threads (log_daemon.py): a daemon consumer left waiting for an item, or a daemon that
  could still run, once main and the other non-daemon threads are done is the interpreter's exit,
  not a deadlock: clean, and `python3 SCRIPT` exits 0; a deadlock among non-daemon threads, or
  main waiting for ever, is still a deadlock; two processes give the same executions.
Usage: check_cpython.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
pipelines = os.path.join(src, "tests", "live", "pipelines")
log_daemon = os.path.join(pipelines, "log_daemon.py")
env = dict(os.environ)
env.pop("PYTHONHASHSEED", None)
failures = []


def live(out, script, *args, strategy="random", executions=20, expect=None, seed=1, more=()):
    cmd = [racelab, "live", "python", "--out", out, "--hang-timeout", "5", "--interpose", "none",
           "--strategy", strategy, "--seed", str(seed), "--executions", str(executions), *more]
    cmd += ["--expect", expect] if expect else []
    cmd += [script, "--", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    try:
        r.report = json.load(open(os.path.join(out, "report.json")))
    except (OSError, ValueError):
        r.report = {}
    return r


def python(script, *args):
    """The script run by CPython itself: its exit status."""
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          timeout=60, env=env)


def check(ok, what, r=None):
    if not ok:
        failures.append(what + ("" if r is None else
                                f"\n  exit {r.returncode}\n{r.stdout}{r.stderr}"))


def clean(r, n):
    return r.returncode == 0 and r.report.get("kinds_seen") == {} and \
        r.report.get("executions") == n


def first(r):
    return (r.report.get("findings") or [{}])[0]


def steps(out):
    """trace.txt without its first column (seconds since the execution started)."""
    try:
        with open(os.path.join(out, "trace.txt")) as f:
            return [line.split(None, 1)[1] for line in f]
    except OSError:
        return []


def same(out, script, *args):
    """Runs `script` as the run that wrote `out` did, in another process: the same trace."""
    again = out + "-again"
    r = live(again, script, *args)
    check(r.returncode == 0 and steps(out) and steps(again) == steps(out),
          f"{os.path.basename(script)} {' '.join(args)}: two processes give different traces", r)


with tempfile.TemporaryDirectory() as tmp:
    # 1. Daemon threads: CPython exits 0 with its daemons still blocked or running; so does
    # racelab's execution (the heartbeat never blocks: random walk, as PCT can starve main).
    for args, strategies in [((), ("random", "pct")), (("--no-flush",), ("random",)),
                             (("--heartbeat", "--no-flush"), ("random",))]:
        p = python(log_daemon, *args)
        check(p.returncode == 0, f"python3 log_daemon.py {' '.join(args)} did not exit 0", p)
        for strategy in strategies:
            out = f"{tmp}/daemon{''.join(args)}-{strategy}"
            r = live(out, log_daemon, *args, strategy=strategy)
            if r.returncode == 2 and "without the Python bridge" in r.stderr:
                print("SKIPPED: racelab was built without the Python bridge")
                sys.exit(77)
            check(clean(r, 20), f"log_daemon.py {' '.join(args)} ({strategy}) is not clean", r)
    out = f"{tmp}/daemon--heartbeat--no-flush-random"  # the run above
    check(any("heartbeat: stopped at exit (daemon thread)" in s for s in steps(out)),
          "the trace does not show the heartbeat daemon stopped at exit")
    same(out, log_daemon, "--heartbeat", "--no-flush")
    # A deadlock of non-daemon threads, or main waiting for ever, is still one.
    r = live(f"{tmp}/daemon-lock-order", log_daemon, "--lock-order", executions=200,
             expect="deadlock")
    check(r.returncode == 0 and first(r).get("kind") == "deadlock" and
          {"worker 0", "worker 1"} <= set(first(r).get("cycle", [])),
          "log_daemon.py --lock-order: no deadlock of the two workers", r)
    r = live(f"{tmp}/daemon-wait-ready", log_daemon, "--wait-ready", executions=5)
    check(r.returncode == 1 and first(r).get("kind") == "deadlock" and
          "main waits for Event at log_daemon.py:" in first(r).get("message", ""),
          "log_daemon.py --wait-ready: main waiting for ever is not a deadlock", r)

if failures:
    sys.exit("\n".join(failures))
print("cpython: racelab agrees with CPython on daemon threads")

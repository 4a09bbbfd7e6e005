#!/usr/bin/env python3
"""racelab's verdicts on a script agree with what CPython does when it runs the script on its own
(docs/live.md, "Threads"; ARCHITECTURE.md: never a deadlock where real Python exits), on
pipelines written the way users write them (tests/live/pipelines):

- daemon threads (log_daemon.py): a daemon consumer left waiting for an item, or a daemon that
  could still run, once main and the other non-daemon threads are done is the interpreter's exit,
  not a deadlock: clean, and `python3 SCRIPT` exits 0; a deadlock among non-daemon threads, or
  main waiting for ever, is still a deadlock; two processes give the same executions;
- a module-level ThreadPoolExecutor never shut down (module_pool.py): CPython's exit tells its
  workers to exit (threading's exit callbacks), so it is clean, as `python3 SCRIPT` exits 0; a
  task that never returns is the deadlock of main's join at exit; a dfs search finds its
  executions deterministic;
- string hashing (named_shards.py: threads started from a set of strings): the interpreter's
  hash seed is fixed (0, or PYTHONHASHSEED's integer), recorded and used by a replay, so the
  threads start in the same order in every process: the same traces in two processes, a failing
  schedule replays in a fresh process whatever its PYTHONHASHSEED, hash() is python3's under the
  same PYTHONHASHSEED; PYTHONHASHSEED=random is refused (exit 2);
- `--uncontrolled` runs end as CPython's do: they wait for the non-daemon threads the script
  started (main is not a daemon, so neither are they), not for its daemons, and a pool never
  shut down is told to exit.
Usage: check_cpython.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
pipelines = os.path.join(src, "tests", "live", "pipelines")
log_daemon = os.path.join(pipelines, "log_daemon.py")
module_pool = os.path.join(pipelines, "module_pool.py")
named_shards = os.path.join(pipelines, "named_shards.py")
env = dict(os.environ)
env.pop("PYTHONHASHSEED", None)
failures = []


def live(out, script, *args, strategy="random", executions=20, expect=None, seed=1, more=(),
         hash_seed=None):
    cmd = [racelab, "live", "python", "--out", out, "--hang-timeout", "5"]
    if script is not None:
        cmd += ["--interpose", "none", "--strategy", strategy, "--seed", str(seed),
                "--executions", str(executions)]
    cmd += [*more, *(["--expect", expect] if expect else [])]
    cmd += [script, "--", *args] if script is not None else []
    run_env = dict(env, **({} if hash_seed is None else {"PYTHONHASHSEED": hash_seed}))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=run_env)
    try:
        r.report = json.load(open(os.path.join(out, "report.json")))
    except (OSError, ValueError):
        r.report = {}
    return r


def plain(out, script, *args):
    """The script run once with --uncontrolled (real threads)."""
    cmd = [racelab, "live", "python", "--uncontrolled", "--interpose", "none", "--time-limit",
           "30", "--out", out, script, "--", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def python(script, *args, hash_seed=None):
    """The script run by CPython itself: its exit status."""
    run_env = dict(env, **({} if hash_seed is None else {"PYTHONHASHSEED": hash_seed}))
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True,
                          timeout=60, env=run_env)


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
                             (("--heartbeat", "--no-flush"), ("random",)),
                             (("--no-join",), ("random",))]:
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

    # 2. A pool never shut down: its workers are told to exit at the interpreter's exit.
    p = python(module_pool)
    check(p.returncode == 0, "python3 module_pool.py did not exit 0", p)
    r = live(f"{tmp}/pool-pct", module_pool, strategy="pct")
    check(clean(r, 20), "module_pool.py (pct) is not clean", r)
    r = live(f"{tmp}/pool-stuck", module_pool, "--stuck-task", executions=5)
    message = first(r).get("message", "")
    check(r.returncode == 1 and first(r).get("kind") == "deadlock" and
          "main waits for loader_" in message and "waits for Event at module_pool.py:" in message,
          "module_pool.py --stuck-task: main's join of the stuck worker at exit is no deadlock", r)
    r = live(f"{tmp}/pool-dfs", module_pool, strategy="dfs", executions=10,
             more=("--max-preemptions", "1"))
    check(r.returncode == 1 and "cut short by the execution cap after 10 executions" in r.stdout,
          "a dfs search of module_pool.py did not run its 10 executions", r)
    # 3. A set of strings: the same order in every process, as under PYTHONHASHSEED.
    out = f"{tmp}/shards"
    r = live(out, named_shards, "--print-hash")
    check(clean(r, 20) and r.report.get("parameters", {}).get("hash_seed") == 0,
          "named_shards.py is not clean, or its report does not record hash seed 0", r)
    same(out, named_shards, "--print-hash")
    p = python(named_shards, "--print-hash", hash_seed="0")
    check(p.returncode == 0 and p.stdout.splitlines()[0] in r.stdout.splitlines(),
          f"hash('racelab') differs from python3's under PYTHONHASHSEED=0 ({p.stdout.strip()})",
          r)
    r = live(f"{tmp}/shards-first", named_shards, "--first", "train", executions=50,
             hash_seed="7")
    schedule = f"{tmp}/shards-first/schedule-exception.json"
    check(r.returncode == 1 and "was loaded first, not train" in first(r).get("message", "") and
          r.report.get("parameters", {}).get("hash_seed") == 7 and os.path.exists(schedule),
          "named_shards.py --first train (PYTHONHASHSEED=7): no exception, or seed 7 not kept", r)
    again = live(f"{tmp}/shards-replay", None, more=("--replay", schedule), hash_seed="3")
    check(again.returncode == 1 and first(again).get("message") == first(r).get("message"),
          "the schedule of named_shards.py does not replay in a fresh process", again)
    r = live(f"{tmp}/shards-random", named_shards, executions=1, hash_seed="random")
    check(r.returncode == 2 and "PYTHONHASHSEED=random" in r.stderr and
          len(r.stderr.strip().splitlines()) == 1, "PYTHONHASHSEED=random is not refused", r)

    # 4. --uncontrolled: the interpreter's exit, for real.
    for script, args, words in [(log_daemon, (), []),
                                (log_daemon, ("--no-join",), ["worker 0 finished",
                                                              "worker 1 finished"]),
                                (module_pool, (), [])]:
        name = f"{os.path.basename(script)} {' '.join(args)}"
        r = plain(f"{tmp}/plain-{os.path.basename(script)}{''.join(args)}", script, *args)
        check(r.returncode == 0 and "the script finished" in r.stdout and
              all(w in r.stdout for w in words),
              f"--uncontrolled {name}: not finished as CPython finishes it ({words})", r)

if failures:
    sys.exit("\n".join(failures))
print("cpython: racelab agrees with CPython on daemon threads, pools never shut down and "
      "string hashing")

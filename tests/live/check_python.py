#!/usr/bin/env python3
"""The Python bridge on the pure-Python stand-in (tools/pipelines/standin_torch.py), without GPU.

Through `racelab live python`: lazy compile with two drafters on one device must deadlock, with
the cycle through the foreign worker and every thread's Python stack written before the exit; its
schedule must replay to the same deadlock; it must also reach F10's FX tracing error, reported as
kind fx_trace_error naming the thread that raised and the one tracing (holding compile_lock); the
sequential forward+backward warmup and a user lock around each first step must stay clean; a
warmup at another length cannot deadlock with a dynamic recompile (F11: its backward is compiled
ahead of time) but can with a static one; bad input is one line and exit 2.
Usage: check_python.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
script = os.path.join(src, "tools", "pipelines", "drafter_standin.py")


def live(*args, out):
    cmd = [racelab, "live", "python", "--out", out, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def fail(msg, r=None):
    sys.exit(msg + ("" if r is None else f"\nexit {r.returncode}\n{r.stdout}{r.stderr}"))


with tempfile.TemporaryDirectory() as tmp:
    probe = live(script, "--interpose", "standin", "--executions", "1", "--", "--drafters", "1",
                 out=f"{tmp}/probe")
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    lazy = f"{tmp}/lazy"
    r = live(script, "--interpose", "standin", "--strategy", "random", "--executions", "500",
             "--hang-timeout", "4", "--expect", "deadlock", "--", "--drafters", "2",
             "--warmup", "none", out=lazy)
    if r.returncode != 0:
        fail("lazy compile with two drafters did not deadlock", r)
    if "ExecutionOver" in r.stderr:
        fail("the search printed the unwinding of its threads", r)
    report = json.load(open(f"{lazy}/report.json"))
    f = report["findings"][0]
    if f["kind"] != "deadlock" or f["cycle"] != [f["cycle"][0], "autograd worker cuda:0"]:
        fail(f"unexpected finding: {f}")
    if "holds compile_lock and is inside _engine_run_backward, served by autograd worker cuda:0" \
            not in f["message"]:
        fail(f"the cycle does not name the lock and the worker: {f['message']}")
    stacks = open(f"{lazy}/stacks.txt").read()
    if "in flex_attention" not in stacks or "drafter" not in stacks:
        fail("stacks.txt lacks the drafters' Python stacks:\n" + stacks)
    # Taken before the parked threads unwind: main still waits in its join of the drafters.
    if "invoke_excepthook" in stacks or "in <module>" not in stacks:
        fail("stacks.txt shows threads unwinding, not where they waited:\n" + stacks)

    for k in range(3):
        r = live("--replay", f"{lazy}/schedule-deadlock.json", "--hang-timeout", "4",
                 out=f"{tmp}/replay-{k}")
        if r.returncode != 1 or f["message"] not in r.stdout:
            fail(f"replay {k} did not reproduce the deadlock", r)
        # The parked threads unwind with ExecutionOver once the deadlock is reported: racelab's
        # doing, never a traceback for the user (it showed in some runs, from a thread already
        # let go of).
        if "ExecutionOver" in r.stderr or "Traceback" in r.stderr:
            fail(f"replay {k} printed the unwinding of its threads", r)

    # F10: a drafter that calls its compiled wrapper while the other traces raises; the table
    # classifies the exception as fx_trace_error. A search expecting a clean run stops at its
    # first failure, which may be the deadlock: a few seeds.
    fx = None
    for seed in range(1, 6):
        r = live(script, "--interpose", "standin", "--strategy", "random", "--seed", str(seed),
                 "--executions", "50", "--hang-timeout", "4", "--cycle-confirm-ms", "300", "--",
                 "--drafters", "2", "--warmup", "none", out=f"{tmp}/fx-{seed}")
        found = json.load(open(f"{tmp}/fx-{seed}/report.json"))["findings"]
        if found and found[0]["kind"] == "fx_trace_error":
            fx = found[0]
            break
    if fx is None:
        fail("lazy compile with two drafters reached no fx_trace_error in 5 searches", r)
    if r.returncode != 1 or "fx_trace_error (execution" not in r.stdout:
        fail("an fx_trace_error did not fail the run", r)
    want = ("RuntimeError: Detected that you are using FX to symbolically trace a dynamo-optimized "
            "function. This is not supported at the moment. (raised in drafter 0.")
    if not fx["message"].startswith(want) or "held compile_lock)" not in fx["message"]:
        fail(f"the fx_trace_error does not name the raising and the tracing thread: {fx}")
    raised = fx["message"].split("(raised in ")[1].split(";")[0]
    if fx["message"].split("; ")[1].split(" held")[0] in (raised, "no thread"):
        fail(f"the fx_trace_error names no other thread as tracing: {fx}")

    for warmup in ("sequential", "lock_first_step"):
        r = live(script, "--interpose", "standin", "--strategy", "pct", "--executions", "200",
                 "--hang-timeout", "4", "--", "--drafters", "2", "--warmup", warmup,
                 out=f"{tmp}/{warmup}")
        if r.returncode != 0 or "no deadlock, hang or exception" not in r.stdout:
            fail(f"warmup {warmup} was not clean", r)

    # The warmup at another length leaves the drafters' own compile. Static (dynamic=False): the
    # recompile's backward is lazy and the cycle is reachable. Dynamic (the default, F11): the
    # backward is compiled ahead of time by the drafter inside compile_lock, the worker never
    # takes the lock and no cycle can form, but the FX tracing error can still happen.
    r = live(script, "--interpose", "standin", "--strategy", "random", "--executions", "500",
             "--hang-timeout", "4", "--expect", "deadlock", "--", "--drafters", "2",
             "--warmup", "sequential", "--warmup-seq-len", "512", "--no-automatic-dynamic",
             out=f"{tmp}/shape")
    if r.returncode != 0:
        fail("the static warmup at another length did not deadlock", r)
    for strategy, n in (("random", "300"), ("pct", "200")):
        r = live(script, "--interpose", "standin", "--strategy", strategy, "--executions", n,
                 "--hang-timeout", "4", "--expect", "deadlock", "--", "--drafters", "2",
                 "--warmup", "sequential", "--warmup-seq-len", "512", out=f"{tmp}/dyn-{strategy}")
        seen = json.load(open(f"{tmp}/dyn-{strategy}/report.json"))["kinds_seen"]
        if r.returncode != 1 or "deadlock" in seen or "hang" in seen or \
                set(seen) != {"fx_trace_error"}:
            fail(f"the dynamic warmup at another length ({strategy}) saw {seen}, not only "
                 "fx_trace_error", r)

    # A library's own thread (like Inductor's compile-pool reader, which blocks reading a pipe)
    # stays a real thread; the user's threads are controlled, an exception in one is a finding,
    # and a non-blocking acquire of a held user lock can fail.
    lib = os.path.join(tmp, "lib", "site-packages")
    os.makedirs(lib)
    with open(os.path.join(lib, "libpool.py"), "w") as f:
        f.write("import threading, queue\n"
                "jobs = queue.Queue()\n"
                "def _reader():\n"
                "    while jobs.get() is not None:\n"
                "        pass\n"
                "reader = threading.Thread(target=_reader, name='pool reader', daemon=True)\n"
                "reader.start()\n")
    user = os.path.join(tmp, "user.py")
    with open(user, "w") as f:
        f.write("import sys, threading\n"
                f"sys.path.insert(0, {lib!r})\n"
                "import libpool\n"
                "lock = threading.Lock()\n"
                "seen = []\n"
                "def work(i):\n"
                "    if lock.acquire(blocking=False):\n"
                "        seen.append(i)\n"
                "        lock.release()\n"
                "    if i == 1 and '--raise' in sys.argv:\n"
                "        raise ValueError('drafter failed')\n"
                "ts = [threading.Thread(target=work, args=(i,), name=f'worker {i}') for i in (0, 1)]\n"
                "for t in ts: t.start()\n"
                "for t in ts: t.join()\n")
    empty = os.path.join(tmp, "empty.json")
    with open(empty, "w") as f:
        json.dump({"format": "racelab-interpose", "version": 1, "name": "empty"}, f)
    r = live(user, "--interpose", empty, "--strategy", "dfs", "--executions", "1000",
             "--hang-timeout", "4", out=f"{tmp}/user")
    if r.returncode != 0 or "exhaustive within the bound (dfs(max_preemptions=2)): " not in r.stdout:
        fail("a library thread or a try-acquire broke the run", r)
    trace = open(f"{tmp}/user/trace.txt").read()
    if "pool reader" in trace or "worker 1: try lock Lock at user.py:4" not in trace:
        fail("the library thread was controlled, or try-acquire was no scheduling point:\n" + trace)
    # A dfs space of exactly the cap is covered (exit 0); one execution fewer is not (exit 1).
    space = json.load(open(f"{tmp}/user/report.json"))["executions"]
    r = live(user, "--interpose", empty, "--strategy", "dfs", "--executions", str(space),
             "--hang-timeout", "4", out=f"{tmp}/exact")
    if r.returncode != 0 or f"exhaustive within the bound (dfs(max_preemptions=2)): {space} " \
            "executions" not in r.stdout:
        fail(f"a dfs search whose space is exactly its cap ({space}) was not exhaustive", r)
    r = live(user, "--interpose", empty, "--strategy", "dfs", "--executions", str(space - 1),
             "--hang-timeout", "4", out=f"{tmp}/short")
    if r.returncode != 1:
        fail(f"a dfs search one execution short of its space ({space}) passed", r)
    # What a search covered: a dfs search stopped by its cap proves nothing (exit 1, its own
    # word), a sampling one says it sampled; both count the interleaving classes they saw.
    r = live(user, "--interpose", empty, "--strategy", "dfs", "--executions", "3",
             "--hang-timeout", "4", out=f"{tmp}/cut")
    if r.returncode != 1 or "inconclusive: the dfs search was cut short by the execution cap" not in r.stdout \
            or "cut short by the execution cap after 3 executions" not in r.stdout:
        fail("a dfs search cut short by its cap was not inconclusive", r)
    rep = json.load(open(f"{tmp}/cut/report.json"))
    if rep["proves"] is not True or rep["exhausted"] is not False \
            or rep["interleavings"]["executions"] != 3:
        fail(f"the cut-short report does not say so: {rep}")
    r = live(user, "--interpose", empty, "--strategy", "random", "--executions", "12",
             "--hang-timeout", "4", out=f"{tmp}/sampled")
    cov = json.load(open(f"{tmp}/sampled/report.json"))["interleavings"]
    if r.returncode != 0 or "sampled 12 executions (random(seed=1)), not a proof" not in r.stdout \
            or "interleaving classes: " not in r.stdout or not 2 <= cov["classes_seen"] <= 12 \
            or "unseen_probability" not in cov:
        fail(f"a sampling search did not say what it sampled and covered: {cov}", r)
    r = live(user, "--interpose", empty, "--executions", "1", "--hang-timeout", "4", "--",
             "--raise", out=f"{tmp}/raise")
    if r.returncode != 1 or \
            "ValueError in thread worker 1 at user.py:11 (in work): drafter failed" not in r.stdout:
        fail("an exception in a user thread was not reported", r)

    # --follow forces the model's deadlock schedule on the live run: the first execution
    # deadlocks, for two and four drafters; on the fixed pipeline the same schedule stays clean.
    for n in (2, 4):
        m = subprocess.run([racelab, "explore",
                            os.path.join(src, "scenarios", "deadlock", f"lazy-{n}-drafters.toml"),
                            "--out", f"{tmp}/model-{n}"], capture_output=True, text=True,
                           timeout=300)
        sched_file = f"{tmp}/model-{n}/schedules/lazy-{n}-drafters.deadlock.json"
        if not os.path.exists(sched_file):
            fail(f"the model found no deadlock for {n} drafters", m)
        r = live(script, "--interpose", "standin", "--follow", sched_file, "--executions", "1",
                 "--hang-timeout", "4", "--expect", "deadlock", "--", "--drafters", str(n),
                 "--warmup", "none", out=f"{tmp}/follow-{n}")
        if r.returncode != 0 or "deadlock (execution 0" not in r.stdout:
            fail(f"--follow did not force the model's deadlock with {n} drafters", r)
    # The model's FX tracing error forced the same way.
    r = live(script, "--interpose", "standin", "--follow",
             f"{tmp}/model-2/schedules/lazy-2-drafters.fx_trace_error.json", "--executions", "1",
             "--hang-timeout", "4", "--", "--drafters", "2", "--warmup", "none",
             out=f"{tmp}/follow-fx")
    if r.returncode != 1 or "fx_trace_error (execution 0" not in r.stdout:
        fail("--follow did not force the model's fx_trace_error", r)
    # Two GPUs, two drafters each: the drafters carry the model's names (drafter DEVICE.K).
    toml = open(os.path.join(src, "scenarios", "deadlock", "lazy-4-drafters.toml")).read()
    toml = toml.replace('name = "lazy-4-drafters"', 'name = "lazy-2x2"').replace(
        "devices = 1", "devices = 2").replace("drafters_per_device = 4", "drafters_per_device = 2")
    with open(f"{tmp}/lazy-2x2.toml", "w") as f:
        f.write(toml)
    subprocess.run([racelab, "explore", f"{tmp}/lazy-2x2.toml", "--out", f"{tmp}/model-2x2"],
                   capture_output=True, text=True, timeout=300)
    r = live(script, "--interpose", "standin", "--follow",
             f"{tmp}/model-2x2/schedules/lazy-2x2.deadlock.json", "--executions", "1",
             "--hang-timeout", "4", "--expect", "deadlock", "--", "--gpus", "2", "--drafters", "4",
             "--warmup", "none", out=f"{tmp}/follow-2x2")
    if r.returncode != 0 or "deadlock (execution 0" not in r.stdout:
        fail("--follow did not force the model's two-GPU deadlock", r)
    r = live(script, "--interpose", "standin", "--follow", f"{tmp}/model-2/schedules/"
             "lazy-2-drafters.deadlock.json", "--executions", "3", "--hang-timeout", "4", "--",
             "--drafters", "2", "--warmup", "sequential", out=f"{tmp}/follow-fixed")
    if r.returncode != 0 or "no deadlock, hang or exception" not in r.stdout:
        fail("--follow made a deadlock where the warmup removes it", r)

    bad_table = os.path.join(tmp, "bad-exceptions.json")
    with open(bad_table, "w") as f:
        json.dump({"format": "racelab-interpose", "version": 1, "name": "bad",
                   "exceptions": [{"match": 1}]}, f)
    for args, needle in [(["/nonexistent.py"], "no such script"),
                         ([script, "--interpose", bad_table], "every entry of exceptions needs"),
                         ([script, "--interpose", "standin", "--follow",
                           f"{lazy}/schedule-deadlock.json"], "a live schedule"),
                         ([script, "--interpose", empty, "--follow",
                           f"{tmp}/model-2/schedules/lazy-2-drafters.deadlock.json"],
                          "no \"follow\" section"),
                         ([script, "--interpose", "nope"], "--interpose: 'nope'"),
                         ([], "a script is required")]:
        r = live(*args, out=f"{tmp}/bad")
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
            fail(f"bad input {args} did not give one line and exit 2", r)
print("python bridge checks passed")

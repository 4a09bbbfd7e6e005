#!/usr/bin/env python3
"""Earned verdicts on users' scripts, through `racelab live python` and `racelab replay`, on
programs written the way users write them (no torch, `--interpose none`):

- a thread's exception is named by its own type and its place, the innermost frame of the user's:
  "IndexError in thread c1 at consumers.py:8 (in consume): ...", with the user's frames of its
  traceback under it, and every frame in report.json's "stack" (a Thread subclass's run, a
  ThreadPoolExecutor's work re-raised in main);
- a clean verdict says that Python variables shared without synchronisation are not checked
  (terminal and report.json), and `--dict` makes such a lost update visible;
- a table entry that does not resolve (a module that does not import, an attribute that does not
  exist, an entry of __main__ that cannot be) is one line and exit 2 before any execution: the
  script never runs and no schedule is written; a table file's entries likewise;
- a schedule with its trailing steps removed replays as a divergence with its own words, exit 1;
- a schedule replays from any directory (old schedules' relative paths too), and a divergence on
  an edited script names the edit as its likely cause;
- a path that is a directory is said so, one line, exit 2;
- a search for the deadlock that did not finish without finding it is inconclusive (live python,
  a suite's live case), and racelab check says when the time limit stopped its race search;
- racelab check proves a clean variant with dpor (a sample alone is worded as one, --no-prove),
  and a failure its uncontrolled runs show that control never reached (a lost update inside one
  stretch of code between scheduling points, where only true parallelism interleaves) fails the
  variant in its own words, never "proven".
Usage: check_verdicts.py RACELAB SOURCE_DIR
"""
import json, os, re, subprocess, sys, tempfile

racelab = os.path.abspath(sys.argv[1])


def run(*args, cwd=None):
    return subprocess.run([racelab, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def live(*args, cwd=None):
    return run("live", "python", "--interpose", "none", *args, cwd=cwd)


def fail(msg, r=None):
    sys.exit(msg + ("" if r is None else f"\nexit {r.returncode}\n{r.stdout}{r.stderr}"))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# Two threads read a total, work a while without a scheduling point, and write it back: natively the
# interpreter switches threads inside the work (every 5 ms), so both read 0 and one update is lost;
# under racelab each stretch between scheduling points runs whole, so no execution loses one.
NATIVE_ONLY = '''import sys
import threading

total = [0]
start = threading.Barrier(2)


def add():
    index = start.wait()  # kept, so the arrivals are ordered: a proof of 2 executions
    seen = total[0]
    for _ in range(3_000_000):  # work, no scheduling point: natively, the other thread runs here
        pass
    total[0] = seen + 1


threads = [threading.Thread(target=add, name=f"adder {i}") for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert total[0] == 2, f"lost update: total {total[0]}, expected 2"
'''

CONSUMERS = '''import threading

jobs = []
results = {}


def consume(name):
    job = jobs.pop(0)  # nothing queued for the second consumer
    results[name] = job * 2


def main():
    threads = [threading.Thread(target=consume, args=(f"c{i}",), name=f"c{i}") for i in range(2)]
    jobs.append(1)
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
'''

WORKERS = '''import sys
import threading
from concurrent.futures import ThreadPoolExecutor

batches = [[1, 2], [3]]


def second(batch):
    return batch[1]  # the last batch has one item


class Loader(threading.Thread):
    def run(self):
        for b in batches:
            second(b)


def main():
    if "--pool" in sys.argv:
        with ThreadPoolExecutor(max_workers=2) as pool:
            for _ in pool.map(second, batches):
                pass
    else:
        t = Loader(name="loader")
        t.start()
        t.join()


main()
'''

COUNTER = '''import threading

hits = 0
counts = {"hits": 0}


def worker():
    global hits
    for _ in range(2):
        hits = hits + 1
        counts["hits"] = counts["hits"] + 1


threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert counts["hits"] == 4, f"lost updates: {counts['hits']} of 4"
'''

# Writes ran.txt beside itself when its top level runs: no execution must run on bad input.
MARKED = '''import os
import threading

open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ran.txt"), "w").close()
cache = {}


def fill():
    cache["k"] = 1


t = threading.Thread(target=fill)
t.start()
t.join()
'''

LOCK_ORDER = '''import threading

weights = threading.Lock()
optimizer = threading.Lock()


def train():
    with weights:
        with optimizer:
            pass


def checkpoint():
    with optimizer:
        with weights:
            pass


threads = [threading.Thread(target=train, name="train"),
           threading.Thread(target=checkpoint, name="checkpoint")]
for t in threads:
    t.start()
for t in threads:
    t.join()
'''

with tempfile.TemporaryDirectory() as tmp:
    write(f"{tmp}/consumers.py", CONSUMERS)
    probe = live(f"{tmp}/consumers.py", "--executions", "1", "--out", f"{tmp}/probe")
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    # A thread's exception, by its own type.
    r = probe
    if r.returncode != 1 or not re.search(r"IndexError in thread c[01] at consumers.py:8 "
                                          r"\(in consume\): pop from empty list",
                                          r.stdout) or "RuntimeError" in r.stdout:
        fail("a thread's IndexError was not named by its own type", r)
    report = json.load(open(f"{tmp}/probe/report.json"))
    if not report["findings"][0]["message"].startswith("IndexError in thread c"):
        fail(f"report.json words the exception otherwise: {report['findings'][0]}")

    # Its place: the innermost user frame in the line, the user's frames under it (most recent
    # last), every frame in report.json's stack, the user's marked; a Thread subclass's run and a
    # pool's work that main's iteration of pool.map re-raises.
    write(f"{tmp}/workers.py", WORKERS)
    for args, thread, user_frames in [
            ([], "loader", [("run", 15), ("second", 9)]),
            (["--", "--pool"], "main", [("<module>", 29), ("main", 21), ("second", 9)])]:
        out = f"{tmp}/workers{len(args)}"
        r = live(f"{tmp}/workers.py", "--executions", "1", "--out", out, *args)
        line = (f"IndexError in thread {thread} at workers.py:9 (in second): list index out of "
                "range")
        shown = [f"workers.py:{n} in {fn}" for fn, n in user_frames]
        if r.returncode != 1 or line not in r.stdout or \
                "traceback (the script's frames, most recent call last):" not in r.stdout:
            fail(f"the exception in thread {thread} does not say where it was raised", r)
        tail = r.stdout[r.stdout.index(line):].splitlines()[1:]
        got = [x.strip() for x in tail if x.startswith("    ")][:len(shown)]
        if [g.rsplit("/", 1)[-1] for g in got] != shown:
            fail(f"the user's frames under the finding are {got}, not {shown}", r)
        f = json.load(open(f"{out}/report.json"))["findings"][0]
        stack = f.get("stack", [])
        users = [(s["function"], s["line"]) for s in stack if s["user"]]
        if line not in f["message"] or users != user_frames or \
                not all(s["file"].endswith("workers.py") for s in stack if s["user"]) or \
                all(s["user"] for s in stack):
            fail(f"report.json's stack is not the exception's traceback: {f}")

    # A clean verdict says what it did not check; --dict makes the lost update visible.
    write(f"{tmp}/counter.py", COUNTER.replace('assert counts["hits"] == 4',
                                               'assert hits <= 4'))
    r = live(f"{tmp}/counter.py", "--strategy", "dfs", "--executions", "1000", "--out",
             f"{tmp}/clean")
    needle = "Python variables shared without synchronisation"
    if r.returncode != 0 or "no deadlock, hang or exception" not in r.stdout or needle not in \
            r.stdout:
        fail("a clean verdict did not say that unsynchronised variables are not checked", r)
    if needle not in json.load(open(f"{tmp}/clean/report.json")).get("not_checked", ""):
        fail("report.json has no not_checked")
    r = run("check", "--interpose", "none", "--no-memory", "--executions", "3",
            f"{tmp}/counter.py", "--out", f"{tmp}/check-clean")
    if r.returncode != 0 or f"compile races: {needle}" not in r.stdout or \
            not re.search(r"proven \(dpor, exhaustive, \d+ executions; none in 3 sampled first\)",
                          r.stdout) or "dpor's proof covers" not in r.stdout:
        fail("racelab check did not prove the clean variant, or did not say what it does not "
             "check", r)
    proof = json.load(open(f"{tmp}/check-clean/check.json"))["variants"][0]["races"]
    if proof["verdict"] != "proven" or not proof["proof"]["exhausted"] or \
            proof["proof"]["executions"] < 1:
        fail(f"check.json's proof: {proof}")
    # --no-prove: the hunt alone, worded as a sample.
    r = run("check", "--interpose", "none", "--no-memory", "--no-prove", "--executions", "3",
            f"{tmp}/counter.py", "--out", f"{tmp}/check-sampled")
    if r.returncode != 0 or "none in 3 executions (sampled, not a proof)" not in r.stdout or \
            os.path.exists(f"{tmp}/check-sampled/0-as-given/proof"):
        fail("racelab check --no-prove did not keep to the sample", r)
    write(f"{tmp}/native_only.py", NATIVE_ONLY)
    # A proof cut short by its cap is inconclusive, never a pass.
    r = run("check", "--interpose", "none", "--no-memory", "--executions", "1",
            "--proof-executions", "1", "--native-runs", "0", f"{tmp}/native_only.py", "--out",
            f"{tmp}/check-cut")
    if r.returncode != 1 or "INCONCLUSIVE" not in r.stdout or "PASS" in r.stdout or \
            "the dpor proof was cut short by its cap (--proof-executions) after 1 executions" \
            not in r.stdout:
        fail("a proof cut short by --proof-executions was not INCONCLUSIVE", r)
    # Seen natively, never under control: the variant fails in those words, with the log.
    r = run("check", "--interpose", "none", "--no-memory", "--executions", "3",
            "--native-runs", "2", f"{tmp}/native_only.py", "--out", f"{tmp}/check-native")
    native = json.load(open(f"{tmp}/check-native/check.json"))["variants"][0]
    words = "not reached under control; seen in 2 of 2 native runs: exception (AssertionError)"
    if r.returncode != 1 or words not in r.stdout or "lost update" not in r.stdout or \
            native["races"]["verdict"] != "proven" or native["passed"] or \
            native["native"]["failed"] != 2 or "native call" not in native["native"]["why"] or \
            not os.path.exists(native["native"]["log"]):
        fail(f"a failure seen only natively was not said as such: {native.get('native')}", r)
    # A clean race search the time limit stopped says how much of its budget it ran.
    r = run("check", "--interpose", "none", "--no-memory", "--no-prove", "--executions", "1000000",
            "--time-limit", "0.3", f"{tmp}/counter.py", "--out", f"{tmp}/check-limited")
    if r.returncode != 0 or not re.search(r"none in \d+ of 1000000 executions \(stopped by the "
                                          r"time limit; sampled, not a proof\)", r.stdout):
        fail("racelab check did not say that the time limit stopped its race search", r)
    write(f"{tmp}/counter.py", COUNTER)
    r = live(f"{tmp}/counter.py", "--strategy", "dfs", "--executions", "1000", "--out",
             f"{tmp}/unchecked")
    if r.returncode != 0:
        fail("without --dict the lost update should be invisible (the GIL runs each += whole)", r)
    r = live("--dict", "__main__.counts", f"{tmp}/counter.py", "--strategy", "dfs",
             "--executions", "1000", "--out", f"{tmp}/dict")
    if r.returncode != 1 or not re.search(
            r"AssertionError in thread main at counter.py:\d+ \(in <module>\): lost updates",
            r.stdout):
        fail("--dict did not make the lost update on a shared dict visible", r)

    # Table entries checked before the first execution: one line naming the entry, exit 2, the
    # script never run, no schedule written.
    os.makedirs(f"{tmp}/marked")
    write(f"{tmp}/marked/job.py", MARKED)
    table = f"{tmp}/mine.json"
    json.dump({"format": "racelab-interpose", "version": 1, "name": "mine",
               "points": [{"module": "json", "attr": "dumpz", "label": "dump"}]},
              open(table, "w"))
    for args, words in [
            (["--blocking", "nosuchmod.func"],
             "--blocking nosuchmod.func: module nosuchmod does not import "
             "(ModuleNotFoundError: No module named 'nosuchmod')"),
            (["--lock", "threading.nosuch_lock"],
             "--lock threading.nosuch_lock: module threading has no attribute nosuch_lock"),
            (["--point", "json.nosuch"], "--point json.nosuch: module json has no attribute"),
            (["--dict", "__main__.cahce"],
             "--dict __main__.cahce: the script (job.py) binds no cahce at its top level"),
            (["--point", "__main__.fill"],
             "--point __main__.fill: the script's own module (__main__) does not exist before "
             "the script runs"),
            (["--lock", "__main__.guard"],
             "--lock __main__.guard: the script's own locks are racelab's already"),
            (["--interpose", table],
             f"--interpose {table}: points entry json.dumpz: module json has no attribute dumpz")]:
        out = f"{tmp}/bad-entry"
        table_args = args if "--interpose" in args else ["--interpose", "none", *args]
        r = run("live", "python", *table_args, f"{tmp}/marked/job.py", "--out", out)
        lines = (r.stdout + r.stderr).strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or words not in lines[0]:
            fail(f"{args}: not one line naming the entry, exit 2", r)
        if os.path.exists(f"{tmp}/marked/ran.txt") or os.path.exists(out):
            fail(f"{args}: the script ran or wrote outputs before the entry was refused", r)
    # racelab check refuses the same entries, its one line the child's.
    r = run("check", "--interpose", "none", "--blocking", "nosuchmod.func", "--no-memory",
            f"{tmp}/marked/job.py", "--out", f"{tmp}/bad-check")
    if r.returncode != 2 or "racelab: error: --blocking nosuchmod.func: module nosuchmod does " \
            "not import" not in r.stderr.strip().splitlines()[-1]:
        fail("racelab check did not refuse a bad --blocking entry, exit 2", r)
    if os.path.exists(f"{tmp}/marked/ran.txt"):
        fail("racelab check ran the script before refusing the entry", r)
    r = live("--dict", "__main__.cache", f"{tmp}/marked/job.py", "--out", f"{tmp}/good-entry")
    if r.returncode != 0 or not os.path.exists(f"{tmp}/marked/ran.txt"):
        fail("a dict the script binds at its top level was refused", r)

    # A lock-order deadlock, recorded; its schedule replays from any directory.
    os.makedirs(f"{tmp}/proj")
    write(f"{tmp}/proj/train.py", LOCK_ORDER)
    r = live("train.py", "--strategy", "random", "--executions", "200", "--expect", "deadlock",
             "--out", "dl", cwd=f"{tmp}/proj")
    schedule = f"{tmp}/proj/dl/schedule-deadlock.json"
    if r.returncode != 0 or not os.path.exists(schedule):
        fail("the lock-order deadlock was not found", r)
    recorded = json.load(open(schedule))
    if not os.path.isabs(recorded["strategy"]["parameters"]["script"]):
        fail(f"the schedule records a relative script path: {recorded['strategy']}")
    r = run("replay", schedule, "--out", f"{tmp}/replay-root", cwd="/")
    if r.returncode != 1 or "deadlock (execution 0" not in r.stdout:
        fail("a schedule did not replay from another directory", r)
    # An older schedule's path, relative to where racelab ran (here: the project).
    old = dict(recorded)
    old["strategy"] = dict(recorded["strategy"], parameters=dict(
        recorded["strategy"]["parameters"], script="train.py"))
    json.dump(old, open(f"{tmp}/proj/dl/old.json", "w"))
    r = run("replay", f"{tmp}/proj/dl/old.json", "--out", f"{tmp}/replay-old", cwd="/")
    if r.returncode != 1 or "deadlock (execution 0" not in r.stdout:
        fail("an old schedule's relative script path was not found from another directory", r)

    # A live case whose dfs search its execution cap cut short before the deadlock it must find:
    # INCONCLUSIVE in the suite, its summary and JUnit, never FAIL.
    write(f"{tmp}/proj/capped.toml", 'name = "capped"\n[live]\nscript = "train.py"\n'
          'interpose = "none"\nstrategy = "dfs"\nexecutions = 1\n'
          '[expect]\nmust = ["deadlock"]\n')
    r = run("suite", f"{tmp}/proj/capped.toml", "--out", f"{tmp}/suite",
            "--junit", f"{tmp}/suite.xml")
    summary = json.load(open(f"{tmp}/suite/summary.json")) if os.path.exists(
        f"{tmp}/suite/summary.json") else {}
    entry = (summary.get("scenarios") or [{}])[0]
    if r.returncode != 1 or "INCONCLUSIVE capped" not in r.stdout or \
            entry.get("verdict") != "inconclusive" or "expected but not found: deadlock, but the " \
            "dfs search was cut short by the execution cap" not in entry.get("verdict_reason", "") \
            or 'type="inconclusive"' not in open(f"{tmp}/suite.xml").read():
        fail("a live case whose capped dfs search missed its must kind was not inconclusive", r)

    # The schedule cut short before its deadlock: a divergence in its own words, exit 1.
    cut = dict(recorded, steps=recorded["steps"][:2])
    json.dump(cut, open(f"{tmp}/cut.json", "w"))
    r = run("replay", f"{tmp}/cut.json", "--out", f"{tmp}/replay-cut")
    if r.returncode != 1 or "diverged: the schedule ended at step 2 before its recorded " \
            "deadlock happened" not in r.stdout:
        fail("a schedule cut short before its deadlock did not diverge in its own words", r)

    # The script edited since recording: the edit, not foreign threads' timing, is the cause.
    write(f"{tmp}/proj/train.py", LOCK_ORDER.replace(
        "def train():\n", "def train():\n    with threading.Lock():\n        pass\n"))
    r = run("replay", schedule, "--out", f"{tmp}/replay-edited")
    if r.returncode != 2 or "diverged at step" not in r.stderr or \
            "the script, its interposition table or its options changed since recording" not in \
            r.stderr or "likely cause" not in r.stderr or "foreign threads" in r.stderr:
        fail("a divergence on an edited script did not name the edit as its likely cause", r)

    # A directory where a script goes.
    for args in (["live", "python", "--interpose", "none", tmp],
                 ["live", "python", "--uncontrolled", "--interpose", "none", tmp],
                 ["check", "--interpose", "none", tmp]):
        r = run(*args)
        lines = (r.stdout + r.stderr).strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or \
                f"{tmp}: is a directory, not a script" not in lines[0]:
            fail(f"{args}: a directory was not said to be one", r)

    # --expect deadlock: an unfinished search that missed it is inconclusive, a finished one not.
    r = live(f"{tmp}/marked/job.py", "--strategy", "random", "--executions", "50",
             "--time-limit", "0.000001", "--expect", "deadlock", "--out", f"{tmp}/unfinished")
    if r.returncode != 1 or "expectation (deadlock) inconclusive: expected but not found: " \
            "deadlock, but the random search was cut short by the time limit" not in r.stdout:
        fail("a search for the deadlock cut short by the time limit was not inconclusive", r)
    r = live(f"{tmp}/marked/job.py", "--strategy", "random", "--executions", "2", "--expect",
             "deadlock", "--out", f"{tmp}/finished")
    if r.returncode != 1 or "expectation (deadlock) does not hold" not in r.stdout:
        fail("a finished search that missed the deadlock did not say it does not hold", r)
print("earned verdict checks passed")

#!/usr/bin/env python3
"""One live dpor search over several processes (docs/live.md, "Many processes: --jobs"):

- tools/pipelines/drafter_standin.py --warmup sequential: --jobs 2 proves it (exit 0,
  exhaustive) with one process's executions, classes and redundant executions, twice alike;
- the same without a warmup: --jobs 2 fails (exit 1) at the execution and kind one process stops
  at, the same twice, and its schedule replays to its kind;
- tests/live/pipelines/user_pool.py (a thread pool, a Semaphore, a Barrier, queues, two locks):
  --jobs 2 proves the fixed version with one process's counts and finds the --bug deadlock at
  one process's execution;
- --executions 4 with --jobs 2: cut there, not a proof (exit 1);
- --jobs with a strategy other than dpor, or with --all-findings: one line, exit 2;
- tests/live/pipelines/native_crash.py (a SIGSEGV in one order of 6 lock sections): --jobs 2
  reports the crash at one process's execution, the worker whose process it killed replaced by
  the coordinator running that execution itself;
- tests/live/pipelines/first_process_only.py (every process but the first kills itself, and the
  first waits for their deaths): the workers all die, the coordinator says so and goes on alone,
  to one process's result;
- racelab check --proof-jobs 2: the sequential variant proven in one process's executions, its
  proof's command naming --jobs 2, the lazy variant failing.
Usage: check_jobs.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
standin = os.path.join(src, "tools", "pipelines", "drafter_standin.py")
user_pool = os.path.join(src, "tests", "live", "pipelines", "user_pool.py")
native_crash = os.path.join(src, "tests", "live", "pipelines", "native_crash.py")
first_only = os.path.join(src, "tests", "live", "pipelines", "first_process_only.py")
failures = []


def live(out, script, *options, script_args=(), interpose="standin", strategy="dpor",
         executions="100000"):
    cmd = [racelab, "live", "python", "--out", out, "--interpose", interpose,
           "--executions", executions, "--strategy", strategy, *options, script, "--",
           *script_args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


def report(out):
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def summary(out):
    rep = report(out)
    dp = rep.get("dpor") or {}
    kinds = sorted({f["kind"] for f in rep.get("findings", [])})
    return {"executions": rep.get("executions"), "classes": dp.get("classes"),
            "redundant": dp.get("redundant"), "exhausted": rep.get("exhausted"), "kinds": kinds}


with tempfile.TemporaryDirectory() as tmp:
    probe = live(f"{tmp}/probe", standin, executions="1", script_args=("--warmup", "none"))
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    for strategy, bad, words in (("dfs", ("--jobs", "2"), "--jobs 2 needs --strategy dpor"),
                                 ("dpor", ("--jobs", "2", "--all-findings"),
                                  "not with --all-findings")):
        r = live(f"{tmp}/bad", standin, *bad, script_args=("--warmup", "none"), strategy=strategy)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or words not in r.stderr:
            failures.append(f"{' '.join(bad)}: expected one line with '{words}' and exit 2, got "
                            f"exit {r.returncode}:\n{r.stdout}{r.stderr}")

    # The sequential warmup: proven by one process and by two.
    one = live(f"{tmp}/seq-1", standin, script_args=("--warmup", "sequential"))
    proofs = []
    for k in range(2):
        r = live(f"{tmp}/seq-j{k}", standin, "--jobs", "2", script_args=("--warmup", "sequential"))
        if r.returncode != 0 or "over 2 worker processes" not in r.stdout:
            failures.append(f"--jobs 2 did not prove the stand-in's sequential warmup:\n"
                            f"  exit {r.returncode}\n{r.stdout}{r.stderr}")
            break
        proofs.append(summary(f"{tmp}/seq-j{k}"))
    if one.returncode != 0:
        failures.append(f"one process did not prove the sequential warmup:\n{one.stdout}{one.stderr}")
    elif proofs:
        single = summary(f"{tmp}/seq-1")
        if not proofs[0]["exhausted"] or proofs[0] != single:
            failures.append(f"--jobs 2 should run one process's search: one process "
                            f"{single}, two {proofs[0]}")
        if len(proofs) == 2 and proofs[0] != proofs[1]:
            failures.append(f"two --jobs 2 proofs differ: {proofs}")

    # An execution cap cuts the search where one process's would be cut: not a proof.
    cap = live(f"{tmp}/cap", standin, "--jobs", "2", script_args=("--warmup", "sequential"),
               executions="4")
    if cap.returncode != 1 or summary(f"{tmp}/cap")["executions"] != 4 or \
            summary(f"{tmp}/cap")["exhausted"]:
        failures.append(f"--jobs 2 --executions 4: expected 4 executions, not exhaustive, exit 1:"
                        f" exit {cap.returncode}\n{cap.stdout}{cap.stderr}")

    # Without a warmup: the first failure of the single-process order, the same twice.
    alone = live(f"{tmp}/none-1", standin, script_args=("--warmup", "none"))
    first = []
    for k in range(2):
        out = f"{tmp}/none-j{k}"
        r = live(out, standin, "--jobs", "2", script_args=("--warmup", "none"))
        if r.returncode != 1:
            failures.append(f"--jobs 2 without a warmup: expected exit 1:\n{r.stdout}{r.stderr}")
            break
        rep = report(out)
        first.append((rep["executions"], summary(out)["kinds"]))
        if k == 0:
            schedules = [rep["schedule"]] if rep.get("schedule") else []
            if not schedules:
                failures.append(f"--jobs 2: no schedule file for the failure: {rep}")
            else:
                again = subprocess.run([racelab, "live", "python", "--out", f"{tmp}/replay",
                                        "--replay", schedules[0]],
                                       capture_output=True, text=True, timeout=300)
                if again.returncode != 1 or not set(summary(f"{tmp}/replay")["kinds"]) & set(first[0][1]):
                    failures.append(f"the --jobs 2 failure's schedule does not replay to it:\n"
                                    f"{again.stdout}{again.stderr}")
    if len(first) == 2 and first[0] != first[1]:
        failures.append(f"two --jobs 2 searches without a warmup differ: {first}")
    if first and alone.returncode == 1:
        single = (report(f"{tmp}/none-1")["executions"], summary(f"{tmp}/none-1")["kinds"])
        if first[0] != single:
            failures.append(f"without a warmup one process stops at {single}, --jobs 2 at "
                            f"{first[0]}")

    # A program written the way users write them.
    one = live(f"{tmp}/pool-1", user_pool, interpose="none")
    two = live(f"{tmp}/pool-2", user_pool, "--jobs", "2", interpose="none")
    if one.returncode != 0 or two.returncode != 0:
        failures.append(f"user_pool.py fixed: expected proofs, got exit {one.returncode} (one "
                        f"process) and {two.returncode} (two):\n{two.stdout}{two.stderr}")
    elif summary(f"{tmp}/pool-1") != summary(f"{tmp}/pool-2"):
        failures.append(f"user_pool.py: one process {summary(f'{tmp}/pool-1')}, two "
                        f"{summary(f'{tmp}/pool-2')}")
    bug1 = live(f"{tmp}/pool-bug-1", user_pool, interpose="none", script_args=("--bug",))
    bug = live(f"{tmp}/pool-bug", user_pool, "--jobs", "2", interpose="none", script_args=("--bug",))
    if bug.returncode != 1 or "deadlock" not in summary(f"{tmp}/pool-bug")["kinds"]:
        failures.append(f"user_pool.py --bug with --jobs 2: expected the deadlock:\n"
                        f"{bug.stdout}{bug.stderr}")
    elif bug1.returncode == 1 and summary(f"{tmp}/pool-bug-1") != summary(f"{tmp}/pool-bug"):
        failures.append(f"user_pool.py --bug: one process {summary(f'{tmp}/pool-bug-1')}, two "
                        f"{summary(f'{tmp}/pool-bug')}")

    # A crash of the program's own (the process dies): at one process's execution.
    crashes = []
    for jobs in ((), ("--jobs", "2")):
        out = f"{tmp}/crash{len(jobs)}"
        r = live(out, native_crash, *jobs, interpose="none")
        try:
            found = [(f["kind"], f.get("execution")) for f in report(out).get("findings", [])]
        except (OSError, ValueError):
            found = []
        crashes.append((r.returncode, found))
    if crashes[0] != crashes[1] or crashes[0][0] != 1 or not crashes[0][1] or \
            crashes[0][1][0][0] != "crash":
        failures.append(f"native_crash.py: one process and --jobs 2 should report the same crash "
                        f"(exit 1): {crashes}")

    # Workers that all die: the coordinator goes on alone, to one process's proof.
    alone = []
    for jobs in ((), ("--jobs", "2")):
        out = f"{tmp}/alone{len(jobs)}"
        # With --jobs 2, the first process waits for its workers' deaths (2 workers, each
        # started 9 times), so that they all die while the search has executions left.
        r = live(out, first_only, *jobs, interpose="none",
                 script_args=(f"{out}.marker", "18" if jobs else "0"))
        alone.append((r.returncode, summary(out) if r.returncode in (0, 1) else r.stderr))
        if jobs and "goes on in this process alone" not in r.stderr:
            failures.append(f"first_process_only.py --jobs 2: the workers' end was not said:\n"
                            f"{r.stderr}")
    if alone[0] != alone[1] or alone[0][0] != 0:
        failures.append(f"first_process_only.py: one process and --jobs 2 with every worker dead "
                        f"should prove it alike: {alone}")

    # racelab check's proof over two processes: the same proof as one process's.
    checks = {}
    for j in ("1", "2"):
        out = f"{tmp}/check-{j}"
        r = subprocess.run([racelab, "check", "--interpose", "standin", "--no-memory",
                            "--executions", "2", "--native-runs", "0", "--proof-jobs", j,
                            "--out", out, "--variant", "--warmup sequential",
                            "--variant", "--warmup none", standin],
                           capture_output=True, text=True, timeout=900)
        try:
            with open(os.path.join(out, "check.json")) as f:
                variants = json.load(f)["variants"]
        except (OSError, ValueError, KeyError):
            failures.append(f"check --proof-jobs {j}: no check.json:\n{r.stdout}{r.stderr}")
            continue
        proof = variants[0]["races"].get("proof", {})
        checks[j] = (r.returncode, variants[0]["verdict"], variants[1]["verdict"],
                     proof.get("exhausted"), proof.get("executions"))
        if j == "2" and "--jobs 2" not in proof.get("command", ""):
            failures.append(f"check --proof-jobs 2: the proof ran without --jobs 2: {proof}")
    if len(checks) == 2 and (checks["1"] != checks["2"] or checks["2"][:4] != (1, "PASS", "FAIL", True)):
        failures.append(f"check: --proof-jobs 2 should give one process's verdicts and proof "
                        f"(exit 1, PASS proven, FAIL): {checks}")

if failures:
    sys.exit("\n".join(failures))
print(f"live dpor --jobs 2: the stand-in's sequential warmup proven in {proofs[0]} (one process: "
      f"the same classes), without a warmup {first[0]} twice, user_pool.py proven and its bug found; "
      f"crash {crashes[1]}; check --proof-jobs 2: {checks.get('2')}")

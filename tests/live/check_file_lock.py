#!/usr/bin/env python3
"""A lock file polled under racelab (docs/live.md, "A file lock's poll is not a clock";
tests/live/pipelines/file_lock.py), taken with the filelock package and with a loop written by
hand, in the torch environment tools/install-torch.sh makes (it has filelock;
/opt/racelab/torch-2.11.0 or RACELAB_TORCH_VENV):

- held by another process: the poll's sleeps are real and no scheduling points, so dfs makes the
  same search (executions, classes) whether the other process holds the lock for 0.3 s or not at
  all (either client), and dpor the same for 0.3 s and 1.5 s;
- held by a thread of this process: the poll waits for that thread's release (a guarded point),
  so dfs under its preemption bound and dpor end exhaustive instead of spinning into a livelock;
- two threads taking one file lock race: dpor runs more than one execution.
Skipped (77), saying why, where the environment is absent.
Usage: check_file_lock.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

from livecheck import TORCH_VENV as venv, need_python_bridge, need_torch_env

racelab, src = os.path.abspath(sys.argv[1]), sys.argv[2]
script = os.path.join(src, "tests", "live", "pipelines", "file_lock.py")
need_torch_env("torch (with filelock)")
need_python_bridge(racelab, src)

failures = []


def search(tmp, strategy, *script_args):
    out = os.path.join(tmp, f"{strategy}-{'-'.join(script_args)}")
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    r = subprocess.run([racelab, "live", "python", "--python", venv, "--interpose", "none",
                        "--strategy", strategy, "--executions", "2000", "--hang-timeout", "60",
                        "--out", out, script, "--", *script_args],
                       capture_output=True, text=True, timeout=600, env=env)
    try:
        with open(os.path.join(out, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        rep = {}
    classes = rep.get("interleavings", {}).get("classes_seen")
    got = (r.returncode, rep.get("executions"), rep.get("exhausted"), classes)
    print(f"{strategy} {' '.join(script_args)}: exit {r.returncode}, {rep.get('executions')} "
          f"executions, {classes} classes, exhausted {rep.get('exhausted')}", flush=True)
    if r.returncode != 0:
        failures.append(f"{strategy} {' '.join(script_args)}: exit {r.returncode}: "
                        f"{r.stderr.strip()[-600:]}")
    return got


with tempfile.TemporaryDirectory() as tmp:
    free = search(tmp, "dfs", "--holder", "none")
    held = search(tmp, "dfs", "--holder", "process", "--hold", "0.3")
    if free != held or free[1] is None or free[1] < 2:
        failures.append(f"dfs: another process's hold changed the search: {free} without, {held} "
                        f"with")
    short = search(tmp, "dpor", "--holder", "process", "--hold", "0.3")
    long_ = search(tmp, "dpor", "--holder", "process", "--hold", "1.5")
    if short != long_ or short[1] is None or short[1] < 2 or short[2] is not True:
        failures.append(f"dpor: the hold's length changed the search or the file lock was no "
                        f"race: {short} held 0.3 s, {long_} held 1.5 s")
    for strategy in ("dfs", "dpor"):
        got = search(tmp, strategy, "--holder", "thread")
        if got[0] != 0 or got[2] is not True:
            failures.append(f"{strategy} --holder thread: not exhaustive: {got}")
    # A lock loop written by hand (flock without blocking, time.sleep between tries): the same.
    raw = [search(tmp, "dfs", "--client", "raw", "--holder", *holder)
           for holder in (("none",), ("process", "--hold", "0.3"))]
    if raw[0] != raw[1] or raw[0][1] is None or raw[0][1] < 2 or raw[0][2] is not True:
        failures.append(f"dfs, a hand-written lock loop: another process's hold changed the search: "
                        f"{raw}")
    got = search(tmp, "dfs", "--client", "raw", "--holder", "thread")
    if got[0] != 0 or got[2] is not True:
        failures.append(f"dfs, a hand-written lock loop, --holder thread: not exhaustive: {got}")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("a file lock polled under racelab: another process's hold leaves the search unchanged, a "
      "thread's is waited for")

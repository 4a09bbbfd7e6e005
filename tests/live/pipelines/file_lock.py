"""Two threads and one lock file of the filelock package, the way torch's Inductor and Triton guard
their on-disk caches (docs/live.md, "Time"; docs/facts.md F8):

- `--holder process`: a child process holds the lock file (flock) for `--hold` seconds while the
  threads start; whichever thread wants it first waits for that process, polling with time.sleep.
  Those sleeps are no scheduling points under racelab (another process's timing is not this
  execution's), so the search and every execution's steps are the same however long it holds;
- `--holder thread`: thread a holds the lock file across a scheduling point (a sleep of its own)
  while thread b wants it; b's polls stay scheduling points, so a gets to run and release it (a
  poll that slept for real would wait until `--timeout` and raise filelock.Timeout);
- `--holder none`: nobody else holds it.

Each thread then takes a threading.Lock and appends its name, so the threads' order is a race the
search sees. `--client filelock` takes the lock file with the filelock package (torch's
environments have it), `--client raw` with the loop a script writes itself (fcntl.flock without
blocking, time.sleep between tries).
"""
import argparse
import contextlib
import fcntl
import os
import subprocess
import sys
import tempfile
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--holder", choices=("process", "thread", "none"), default="process")
parser.add_argument("--hold", type=float, default=0.5, help="seconds the child process holds it")
parser.add_argument("--timeout", type=float, default=20.0, help="filelock's acquire timeout")
parser.add_argument("--client", choices=("filelock", "raw"), default="filelock")
args = parser.parse_args()

HOLD = """
import fcntl, sys, time
with open(sys.argv[1], "a") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""

folder = tempfile.mkdtemp(prefix="racelab-file-lock-")
path = os.path.join(folder, "cache.lock")
order_lock = threading.Lock()
order = []
waited = []  # each thread's real wait for the file lock


@contextlib.contextmanager
def raw_lock(lock_path):
    """A lock file taken the way a script takes it by hand."""
    with open(lock_path, "a") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def file_lock():
    if args.client == "raw":
        return raw_lock(path)
    import filelock
    return filelock.FileLock(path, timeout=args.timeout)


def use_cache(name, hold_across_point):
    t0 = time.perf_counter()
    with file_lock():
        waited.append(time.perf_counter() - t0)
        if hold_across_point:
            time.sleep(0.01)  # a scheduling point with the file lock held
        with order_lock:
            order.append(name)


child = None
if args.holder == "process":
    child = subprocess.Popen([sys.executable, "-c", HOLD, path, str(args.hold)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "held"
threads = [threading.Thread(target=use_cache, args=("a", args.holder == "thread"), name="a"),
           threading.Thread(target=use_cache, args=("b", False), name="b")]
for t in threads:
    t.start()
for t in threads:
    t.join()
if child is not None:
    child.wait()
os.remove(path)
os.rmdir(folder)
assert sorted(order) == ["a", "b"], order
if args.holder == "process":  # the lock really was another process's while a thread wanted it
    assert max(waited) >= args.hold / 2, f"waited {max(waited):.2f} s, held {args.hold} s"
print("file_lock:", " ".join(order))

"""Three threads take a lock twice each; every process but the first to run this script kills
itself (SIGKILL) before they start, as a process the machine's OOM killer or a broken
environment ends would. For `racelab live --jobs`: its workers (which run the script after the
coordinator's first execution) all die, and the search must still end with one process's result
(tests/live/check_jobs.py).

With DEATHS > 0, each process that kills itself first adds a line to MARKER.deaths, and each
execution of the first process waits (for real, up to 8 s) until one more process has died than
its previous execution saw, up to DEATHS: the workers then all die, restarts included, while the
search still has executions to run, however fast the machine (a --jobs 2 split starts each
worker 9 times: DEATHS 18).

  racelab live python --interpose none --strategy dpor --jobs 2 first_process_only.py -- MARKER 18
"""
import os
import select
import signal
import sys
import threading

marker = sys.argv[1]  # a file that must not exist before the run: the first process's number
deaths_wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 0
deaths_file = marker + ".deaths"
try:
    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
except FileExistsError:
    pass
with open(marker) as f:
    if f.read() != str(os.getpid()):
        with open(deaths_file, "a") as d:
            d.write(f"{os.getpid()}\n")
        os.kill(os.getpid(), signal.SIGKILL)


def deaths():
    try:
        with open(deaths_file) as d:
            return len(d.readlines())
    except FileNotFoundError:
        return 0


# The deaths the previous execution saw (the environment outlives each execution's globals).
seen = int(os.environ.get("FIRST_PROCESS_ONLY_SEEN", "-1"))
if deaths_wanted > 0 and seen >= 0:
    waited = 0.0
    while deaths() < min(deaths_wanted, seen + 1) and waited < 8:
        select.select([], [], [], 0.05)  # a real wait, which racelab neither sees nor orders
        waited += 0.05
os.environ["FIRST_PROCESS_ONLY_SEEN"] = str(deaths())

lock = threading.Lock()


def work():
    for _ in range(2):
        with lock:
            pass


threads = [threading.Thread(target=work) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()

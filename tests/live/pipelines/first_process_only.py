"""Three threads take a lock twice each; every process but the first to run this script kills
itself (SIGKILL) before they start, as a process the machine's OOM killer or a broken
environment ends would. For `racelab live --jobs`: its workers (which run the script after the
coordinator's first execution) all die, and the search must still end with one process's result
(tests/live/check_jobs.py).

  racelab live python --interpose none --strategy dpor --jobs 2 first_process_only.py -- MARKER
"""
import os
import signal
import sys
import threading

marker = sys.argv[1]  # a file that must not exist before the run: the first process's number
try:
    fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
except FileExistsError:
    pass
with open(marker) as f:
    if f.read() != str(os.getpid()):
        os.kill(os.getpid(), signal.SIGKILL)

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

"""Three workers append to a shared log under a lock, twice each; in one order of the six
critical sections (c, c, b, b, a, a) the program hands a NULL pointer to a C function, as a C
extension that crashes on a rare state would (SIGSEGV). For racelab's crash finding: dpor reaches
that order at one execution, in one process or over several (tests/live/check_jobs.py).
"""
import ctypes
import threading

log = []
lock = threading.Lock()


def work(name):
    for _ in range(2):
        with lock:
            log.append(name)


workers = [threading.Thread(target=work, args=(n,), name=n) for n in "abc"]
for t in workers:
    t.start()
for t in workers:
    t.join()
if log == list("ccbbaa"):
    ctypes.string_at(0)  # reads address 0: SIGSEGV

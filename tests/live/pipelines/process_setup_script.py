"""Run under a table whose process_setup calls process_setup_probe.setup (check_versions.py): in
every execution, the call happened once in the process, before this execution, on a thread other
than this execution's main (racelab makes main anew for each execution); a worker thread sees the
same. Raises otherwise, which fails the execution."""
import threading

import process_setup_probe


def check(where):
    calls = process_setup_probe.calls
    if len(calls) != 1 or calls[0] == threading.get_ident():
        raise RuntimeError(f"{where}: process_setup calls {calls}, this thread "
                           f"{threading.get_ident()}")


check("main")
t = threading.Thread(target=check, args=("worker",))
t.start()
t.join()
print(f"process_setup ran once, on thread {process_setup_probe.calls[0]}")

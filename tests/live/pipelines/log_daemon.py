"""A pipeline written the way users write them, with daemon threads that are never told to stop
(for tests/live/check_cpython.py): workers fetch batches from a queue and hand their results to
a log writer, a daemon consumer (`while True: item = q.get()`), and a heartbeat daemon that
never blocks. Real CPython exits 0: at exit the interpreter waits for the non-daemon threads only
and stops the daemons wherever they are.

    log_daemon.py                 main waits until the log is written (log_q.join()): clean
    log_daemon.py --no-flush      main does not wait: the writer may still have lines; clean
    log_daemon.py --heartbeat     also a daemon that never blocks (time.sleep in a loop); clean
    log_daemon.py --lock-order    two workers take two locks in opposite orders: can deadlock
    log_daemon.py --wait-ready    main waits for an Event nobody sets: deadlocks, daemons or not
    log_daemon.py --no-join       main does not join the workers, which outlive it (they sleep
                                  a while first): CPython waits for them at exit; clean
"""
import queue
import sys
import threading
import time

batches = queue.Queue()
log_q = queue.Queue()
written = []
stats_lock = threading.Lock()
model_lock = threading.Lock()
ready = threading.Event()


def log_writer():
    while True:
        line = log_q.get()
        written.append(line)
        log_q.task_done()


def heartbeat():
    beats = 0
    while True:
        time.sleep(1.0)
        beats += 1


def worker(index):
    while True:
        batch = batches.get()
        if batch is None:
            if "--no-join" in sys.argv:
                time.sleep(0.3)
                print(f"worker {index} finished", flush=True)
            return
        if "--lock-order" in sys.argv:
            first, second = (stats_lock, model_lock) if index == 0 else (model_lock, stats_lock)
            with first:
                with second:
                    pass
        log_q.put(f"worker {index}: batch {batch} done")


threading.Thread(target=log_writer, name="log writer", daemon=True).start()
if "--heartbeat" in sys.argv:
    threading.Thread(target=heartbeat, name="heartbeat", daemon=True).start()
workers = [threading.Thread(target=worker, args=(i,), name=f"worker {i}") for i in range(2)]
for w in workers:
    w.start()
for b in range(3):
    batches.put(b)
for _ in workers:
    batches.put(None)
if "--no-join" not in sys.argv:
    for w in workers:
        w.join()
if "--wait-ready" in sys.argv:
    ready.wait()
if "--no-flush" not in sys.argv and "--no-join" not in sys.argv:
    log_q.join()
    assert len(written) == 3, written

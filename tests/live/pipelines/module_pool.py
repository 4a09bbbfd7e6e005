"""A pipeline written the way users write them, with a module-level ThreadPoolExecutor that is
never shut down (for tests/live/check_cpython.py). Real CPython exits 0: at exit, before it waits
for the non-daemon threads, threading runs concurrent.futures' exit callback, which tells the
pool's workers to exit and joins them.

    module_pool.py                the loaders' results summed by main: clean
    module_pool.py --stuck-task   one task waits for an Event nobody sets: CPython hangs at exit
                                  (its join of the worker), racelab reports the deadlock
"""
import concurrent.futures
import sys
import threading

LOADERS = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="loader")
never = threading.Event()


def load(batch):
    return sum(range(batch * 10))


def main():
    futures = [LOADERS.submit(load, b) for b in range(4)]
    total = sum(f.result() for f in futures)
    assert total == 0 + 45 + 190 + 435, total
    if "--stuck-task" in sys.argv:
        LOADERS.submit(never.wait)


if __name__ == "__main__":
    main()

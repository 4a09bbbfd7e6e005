"""Small programs, one per standard synchronisation primitive, each with a known verdict, for
tests/live/check_primitives.py. `primitives.py CASE`; every case either finishes cleanly in every
interleaving, deadlocks in some (or all), or raises in some: the checks say which.

Outcomes that depend on the interleaving (a timeout that runs out or not) raise
`AssertionError("outcome: X")` in one of them, so the checks see both in the report's counts.
"""
import concurrent.futures
import queue
import sys
import threading
import time

case = sys.argv[1]


def start(*targets):
    threads = [threading.Thread(target=t, name=f"t{i}") for i, t in enumerate(targets)]
    for t in threads:
        t.start()
    return threads


def join(threads):
    for t in threads:
        t.join()


if case == "lock-abba":  # two locks taken in opposite orders: a deadlock in some interleavings
    a, b = threading.Lock(), threading.Lock()

    def one():
        with a:
            with b:
                pass

    def two():
        with b:
            with a:
                pass
    join(start(one, two))

elif case == "rlock":  # re-entrant: clean
    r = threading.RLock()

    def body():
        with r:
            with r:
                pass
    join(start(body, body))

elif case == "condition":  # producer/consumer with wait_for and notify: clean
    cv, items = threading.Condition(), []

    def consumer():
        with cv:
            cv.wait_for(lambda: items)
            items.pop()

    def producer():
        with cv:
            items.append(1)
            cv.notify()
    join(start(consumer, producer))

elif case == "condition-lost-notify":  # notify before the wait, no predicate: can deadlock
    cv, ready = threading.Condition(), threading.Event()

    def waiter():
        with cv:
            cv.wait()

    def notifier():
        with cv:
            cv.notify_all()
    join(start(waiter, notifier))

elif case == "condition-timeout":  # both outcomes of a timed wait are interleavings
    cv, items = threading.Condition(), []

    def consumer():
        with cv:
            if not cv.wait_for(lambda: items, timeout=5.0):
                raise AssertionError("outcome: timed out")

    def producer():
        with cv:
            items.append(1)
            cv.notify_all()
    join(start(consumer, producer))

elif case == "semaphore":  # two permits for three workers: clean
    sem, inside, peak = threading.Semaphore(2), [0], [0]
    guard = threading.Lock()

    def worker():
        with sem:
            with guard:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            with guard:
                inside[0] -= 1
        if peak[0] > 2:
            raise AssertionError("more holders than permits")
    join(start(worker, worker, worker))

elif case == "bounded-semaphore":  # released once too often: ValueError in every interleaving
    sem = threading.BoundedSemaphore(1)
    sem.acquire()
    sem.release()
    sem.release()

elif case == "event":  # set by one, waited by two: clean
    ev = threading.Event()
    join(start(ev.wait, ev.wait, ev.set))

elif case == "event-never-set":  # nobody sets it: a deadlock in every interleaving
    ev = threading.Event()
    join(start(ev.wait))

elif case == "barrier":  # three parties meet: clean
    b = threading.Barrier(3)
    join(start(b.wait, b.wait, b.wait))

elif case == "barrier-missing-party":  # three parties expected, two come: deadlock
    b = threading.Barrier(3)
    join(start(b.wait, b.wait))

elif case == "barrier-abort":  # an abort breaks the waiters: BrokenBarrierError in some
    b = threading.Barrier(2)

    def party():
        b.wait()

    def aborter():
        b.abort()
    join(start(party, aborter))

elif case in ("queue", "lifo", "priority", "simple"):  # producer/consumer, bounded: clean
    q = {"queue": lambda: queue.Queue(maxsize=1), "lifo": lambda: queue.LifoQueue(maxsize=1),
         "priority": lambda: queue.PriorityQueue(maxsize=1), "simple": queue.SimpleQueue}[case]()

    def producer():
        for i in range(3):
            q.put(i)

    def consumer():
        for _ in range(3):
            q.get()
    join(start(producer, consumer))

elif case == "queue-starved":  # the consumer wants more than is put: deadlock
    q = queue.Queue(maxsize=2)

    def consumer():
        for _ in range(3):
            q.get()
    t = start(consumer)
    q.put(1)
    q.put(2)
    join(t)

elif case == "queue-full":  # main fills a bounded queue nobody reads: deadlock
    q = queue.Queue(maxsize=1)
    start(lambda: None)
    q.put(1)
    q.put(2)

elif case == "queue-join":  # task_done for every item: clean
    q = queue.Queue()

    def worker():
        for _ in range(2):
            q.get()
            q.task_done()
    t = start(worker)
    q.put(1)
    q.put(2)
    q.join()
    join(t)

elif case == "join-timeout":  # join with a timeout: finished or not, both interleavings
    t = start(lambda: None)[0]
    t.join(timeout=1.0)
    if t.is_alive():
        t.join()
        raise AssertionError("outcome: still running")

elif case == "timer":  # cancel races with the timer: fired or cancelled, both interleavings
    fired = threading.Event()
    timer = threading.Timer(1.0, fired.set)
    timer.start()
    timer.cancel()
    timer.join()
    if fired.is_set():
        raise AssertionError("outcome: fired")

elif case == "sleep":  # time.sleep is a scheduling point and virtual: clean and fast
    t0 = time.monotonic()
    join(start(lambda: time.sleep(3600), lambda: time.sleep(3600)))

elif case == "pool":  # a pool's futures: result, as_completed, wait; clean
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(pow, 2, i) for i in range(4)]
        assert sum(f.result() for f in concurrent.futures.as_completed(futures)) == 15
        done, _ = concurrent.futures.wait([pool.submit(abs, -1)])
        assert [f.result() for f in done] == [1]

elif case == "pool-deadlock":  # a task waits for a task queued behind it on a 1-worker pool
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        def outer():
            return pool.submit(abs, -1).result()
        pool.submit(outer).result()

elif case == "pool-exception":  # a task's exception surfaces in main through result()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(lambda: 1 / 0).result()

else:
    raise SystemExit(f"unknown case {case}")

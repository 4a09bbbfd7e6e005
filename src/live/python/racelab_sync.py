"""racelab's synchronisation objects of the Python bridge (racelab live python): the standard
library's queue.Queue (and SimpleQueue), threading.Event, Semaphore, BoundedSemaphore and Barrier
as scheduling points at the level of their semantics (src/live/python/bridge.cc loads it after
racelab_threads.py, whose patch_threading calls patch()).

CPython builds these classes on locks and conditions. Under racelab each lock operation would be a
scheduling point, and dpor, which orders every two acquisitions of one lock, would explore every
order of, say, a put and a get of two different items. Here one operation of such an object is
one step: a scheduling point (a *guarded* one where the operation waits: live.h, Guard) whose
local code then does the whole operation at once (one controlled thread runs at a time), and
whose footprint says what it reads and writes of the object (docs/live.md, "Proofs"):

  Queue       a put writes item n (the n-th put) and the puts' order; a get reads the item it
              takes (k-th get: item k), awaited when it blocks (only the put of item k enabled
              it), and writes the gets' order; on a bounded queue the k-th get frees slot k and
              the n-th put reads slot n - maxsize (awaited when it blocks); qsize, empty and full
              read both orders; task_done writes the d-th completion and the order of task_done;
              join reads the puts' order and awaits the last completion. A subclass that changes
              the order of its items (PriorityQueue, LifoQueue) writes the whole queue instead.
  Event       set and clear write the flag where they change it (read it otherwise); a wait reads
              it, and one that blocks then awaits the set that ends its epoch (the sets between
              two clears); is_set reads the flag without a scheduling point, as CPython does.
  Semaphore   the k-th acquire takes token k (tokens below the initial value exist from the
              start; a release makes the next ones), awaited when it blocks; acquires are ordered
              among themselves, releases among themselves; a bounded release reads the acquires.
  Barrier     an arrival writes the barrier's state (arrivals are ordered: each gets its index);
              the last arrival releases its generation (writes its epoch), which the others await.
              An arrival whose index the caller discards (`b.wait()` as a statement) at a barrier
              without action or timeout only reads the state and writes its own arrival, so the
              arrivals of one generation commute; every party then passes by a step that awaits
              all of them (issue 34: the parties leave alike whatever the arrivals' order).

Condition stays at the level of its lock (the user's lock is the user's, and mutual exclusion is
what its dependence is). An operation whose counterpart never comes is a thread blocked at a
guarded point: a deadlock or hang names what it waits for ("an item from Queue at train.py:20").

Foreign threads (not racelab's) that use such an object act on it at once, under a real lock, and
wait for it by polling; what they do is recorded as part of the step under way, as their other
operations are. RACELAB_SYNC=locks keeps CPython's lock-level implementation (for validation:
tests/live/check_sync.py compares the outcomes both reach on random programs).
"""
import collections
import functools
import os
import queue
import sys
import threading
import time
import _thread

import _racelab
import racelab_threads as rt

_ordinals = {}  # (name, creating thread) -> how many managed objects of that name it made
_real_sleep = time.sleep


def restart():
    """Numbers managed objects from 0 again (at the start of every execution)."""
    _ordinals.clear()


class _Sync:
    """What racelab keeps of one managed object: its key in footprints and counters (its name,
    the thread that made it, and how many of that name it made before, so that one object is the
    same key in every execution that made it on the same path), its name in words, and a real
    lock that orders a foreign thread's operations against the controlled threads'."""

    def __init__(self, words):
        maker = rt._thread_name()
        n = _ordinals.get((words, maker), 0)
        _ordinals[(words, maker)] = n + 1
        self.key = f"{words} [{maker} {n}]"
        self.words = words
        self.lock = _thread.allocate_lock()

    def var(self, what):
        return f"{self.key}#{what}"

    def point(self, op, reads=(), writes=(), awaits=(), guard=None, at_least=1, waits=""):
        """The operation's scheduling point: where a controlled thread waits for its turn (and,
        guarded, for `guard` to reach `at_least`); on a foreign thread, its record."""
        _racelab.point(f"{op} {self.words}", [self.var(r) for r in reads],
                       [self.var(w) for w in writes], [self.var(a) for a in awaits],
                       self.var(guard) if guard else "", at_least, waits)

    def touch(self, what, write=False, awaited=False):
        _racelab.touch(self.var(what), write, awaited)

    def count(self, what, delta):
        _racelab.count(self.var(what), delta)


def _managed(obj):
    s = obj.__dict__.get("_racelab_sync")
    return s if s is not None and _racelab.active() else None


def _operation(op):
    """A managed method, from `op(self, ARGS, *, s, SETTINGS)`: `_operation(op)(real, SETTINGS)`
    is the method that runs `op` on an object racelab manages, with its _Sync as `s`, and the real
    method on any other object or while no execution is under way (`_replace` installs it).
    `op`'s caller is the method, whose caller is the user's code."""
    def make(real, **settings):
        def method(self, *args, **kwargs):
            s = _managed(self)
            if s is None:
                return real(self, *args, **kwargs)
            return op(self, *args, s=s, **settings, **kwargs)
        return method
    return make


def _words_of(lock):
    """"Queue at train.py:20": the name racelab gave the object's lock (racelab_threads)."""
    return lock.name


def _site():
    """" (get at train.py:108)": the user's line that called the operation."""
    f = sys._getframe(2)
    while f is not None and rt._skippable(f.f_code.co_filename):
        f = f.f_back
    return f" ({{}} at {os.path.basename(f.f_code.co_filename)}:{f.f_lineno})" if f else ""


def _blocking(s, ready, guard_ok):
    """Waits, on a foreign thread, until `ready()` (polling: a foreign thread is not scheduled);
    on a controlled thread the guarded point waited already, and `guard_ok` is True."""
    while not guard_ok and not ready():
        _real_sleep(0.0005)


def _wait_timeout(timeout):
    """A timeout that ran out moves virtual time on (racelab_threads, virtual time)."""
    if timeout is not None and timeout > 0:
        rt._vclock_advance(timeout)


# ---- queue.Queue

def _queue_fifo(q):
    t, Q = type(q), queue.Queue
    return t._put is Q._put and t._get is Q._get and t._qsize is Q._qsize


def _queue_init(real):
    def init(self, maxsize=0):
        real(self, maxsize)
        if _racelab.active() and isinstance(getattr(self, "mutex", None), rt._Lock):
            s = _Sync(_words_of(self.mutex))
            s.fifo = _queue_fifo(self)
            s.puts = s.gets = s.done = 0
            self._racelab_sync = s
            if self.maxsize > 0:
                s.count("free", self.maxsize)
    return init


@_operation
def _queue_put(self, item, block=True, timeout=None, *, s):
    self.__dict__.setdefault("_racelab_putters", set()).add(rt._thread_name())
    bounded = self.maxsize > 0
    if bounded and block and timeout is not None and timeout < 0:
        raise ValueError("'timeout' must be a non-negative number")
    guarded = bounded and block and timeout is None
    controlled = _racelab.controlled()
    while True:
        s.point("put into", writes=("puts" if s.fifo else "all",),
                guard="free" if guarded else None,
                waits=(f"space in {s.words}" + _site().format("put") +
                       rt._queue_peers(self, False)) if guarded else "")
        with s.lock:
            ready = not bounded or s.puts - s.gets < self.maxsize
            if not ready and guarded and controlled:
                continue  # a foreign thread took the slot: wait again
            if not ready and not guarded:
                if s.fifo:
                    s.touch(f"slot {s.puts - self.maxsize}")
                _wait_timeout(timeout if block else None)
                raise queue.Full
            if ready:
                n = s.puts
                if s.fifo:
                    s.touch(f"item {n}", write=True)
                    if bounded and n >= self.maxsize:
                        s.touch(f"slot {n - self.maxsize}", awaited=guarded)
                self._put(item)
                s.puts += 1
                self.unfinished_tasks += 1
                s.count("items", 1)
                s.count("idle", -1)
                if bounded:
                    s.count("free", -1)
                return
        _blocking(s, lambda: s.puts - s.gets < self.maxsize, False)


@_operation
def _queue_get(self, block=True, timeout=None, *, s):
    self.__dict__.setdefault("_racelab_getters", set()).add(rt._thread_name())
    if block and timeout is not None and timeout < 0:
        raise ValueError("'timeout' must be a non-negative number")
    guarded = block and timeout is None
    controlled = _racelab.controlled()
    while True:
        s.point("get from", **({"writes": ("gets" if s.fifo else "all",)} if guarded else
                               {"reads": ("gets" if s.fifo else "all",)}),
                guard="items" if guarded else None,
                waits=(f"an item from {s.words}" + _site().format("get") +
                       rt._queue_peers(self, True)) if guarded else "")
        with s.lock:
            ready = s.puts > s.gets
            if not ready and guarded and controlled:
                continue
            if not ready and not guarded:
                if s.fifo:
                    s.touch(f"item {s.gets}")
                _wait_timeout(timeout if block else None)
                raise queue.Empty
            if ready:
                k = s.gets
                if s.fifo:
                    if not guarded:
                        s.touch("gets", write=True)
                    s.touch(f"item {k}", awaited=guarded)
                    if self.maxsize > 0:
                        s.touch(f"slot {k}", write=True)
                elif not guarded:
                    s.touch("all", write=True)
                item = self._get()
                s.gets += 1
                s.count("items", -1)
                if self.maxsize > 0:
                    s.count("free", 1)
                return item
        _blocking(s, lambda: s.puts > s.gets, False)


@_operation
def _queue_size(self, *, s, what):
    s.point(what, reads=("puts", "gets") if s.fifo else ("all",))
    with s.lock:
        return _sizes[what](self)


_sizes = {
    "size of": lambda q: q._qsize(),
    "empty?": lambda q: not q._qsize(),
    "full?": lambda q: 0 < q.maxsize <= q._qsize(),
}


@_operation
def _queue_task_done(self, *, s):
    s.point("task done on", writes=("tasks",))
    with s.lock:
        d = s.done
        s.touch(f"item {d}" if s.fifo else "all")
        if d >= s.puts:
            raise ValueError("task_done() called too many times")
        s.touch(f"done {d}", write=True)
        s.done += 1
        self.unfinished_tasks -= 1
        s.count("idle", 1)


@_operation
def _queue_join(self, *, s):
    controlled = _racelab.controlled()
    while True:
        s.point("join", reads=("puts" if s.fifo else "all",), guard="idle", at_least=0,
                waits=f"{s.words} to be drained (task_done)" + _site().format("join"))
        with s.lock:
            if s.done == s.puts:
                if s.puts > 0:
                    s.touch(f"done {s.puts - 1}", awaited=True)
                return
            if controlled:
                continue
        _blocking(s, lambda: s.done == s.puts, False)


# ---- queue.SimpleQueue (the pure-Python one racelab_threads installs: ThreadPoolExecutor's)

def _simple_init(real):
    def init(self):
        real(self)
        if _racelab.active() and isinstance(getattr(self._count, "_cond", None), threading.Condition) \
                and isinstance(self._count._cond._lock, rt._Lock):
            s = _Sync(_words_of(self._count._cond._lock))
            s.fifo, s.puts, s.gets = True, 0, 0
            self._racelab_sync = s
    return init


@_operation
def _simple_put(self, item, block=True, timeout=None, *, s):
    s.point("put into", writes=("puts",))
    with s.lock:
        s.touch(f"item {s.puts}", write=True)
        self._queue.append(item)
        s.puts += 1
        s.count("items", 1)


@_operation
def _simple_get(self, block=True, timeout=None, *, s):
    if block and timeout is not None and timeout < 0:
        raise ValueError("'timeout' must be a non-negative number")
    guarded = block and timeout is None
    controlled = _racelab.controlled()
    while True:
        s.point("get from", **({"writes": ("gets",)} if guarded else {"reads": ("gets",)}),
                guard="items" if guarded else None,
                waits=f"an item from {s.words}" + _site().format("get") if guarded else "")
        with s.lock:
            if s.puts > s.gets:
                if not guarded:
                    s.touch("gets", write=True)
                s.touch(f"item {s.gets}", awaited=guarded)
                s.gets += 1
                s.count("items", -1)
                return self._queue.popleft()
            if not guarded:
                s.touch(f"item {s.gets}")
                _wait_timeout(timeout if block else None)
                raise queue.Empty
            if controlled:
                continue
        _blocking(s, lambda: s.puts > s.gets, False)


@_operation
def _simple_size(self, *, s, empty):
    s.point("empty?" if empty else "size of", reads=("puts", "gets"))
    return len(self._queue) == 0 if empty else len(self._queue)


# ---- threading.Event

_thread_init = threading.Thread.__init__
_thread_init_code = getattr(_thread_init, "__wrapped__", _thread_init).__code__


def _event_init(real):
    def init(self):
        real(self)
        # A Thread's own _started event stays CPython's: its unlock after the set is the point
        # at which the thread is seen started and still running (join(timeout), is_alive).
        if _racelab.active() and isinstance(self._cond._lock, rt._Lock) and \
                sys._getframe(1).f_code is not _thread_init_code:
            s = _Sync(_words_of(self._cond._lock))
            s.epoch = 0  # clears so far: the sets between two clears are one epoch
            s.set_epoch = -1  # the epoch of the last set that changed the flag
            self._racelab_sync = s
    return init


@_operation
def _event_set(self, *, s):
    s.point("set", reads=("flag",))
    with s.lock:
        if not self._flag:
            self._flag = True
            s.set_epoch = s.epoch
            s.touch("flag", write=True)
            s.touch(f"on {s.epoch}", write=True)
            s.count(f"on {s.epoch}", 1)


@_operation
def _event_clear(self, *, s):
    s.point("clear", reads=("flag",))
    with s.lock:
        if self._flag:
            self._flag = False
            s.touch("flag", write=True)
            s.epoch += 1


@_operation
def _event_wait(self, timeout=None, *, s):
    s.point("wait for", reads=("flag",))
    with s.lock:
        if self._flag:
            return True
        epoch = s.epoch
    if timeout is not None and timeout <= 0:
        return False
    controlled = _racelab.controlled()
    guarded = timeout is None
    if guarded:
        s.point("woken by", awaits=(f"on {epoch}",), guard=f"on {epoch}",
                waits=f"{s.words} to be set" + _site().format("wait"))
    else:
        s.point("woken by", reads=(f"on {epoch}",))
    if guarded and not controlled:
        _blocking(s, lambda: s.set_epoch >= epoch, False)
    with s.lock:
        if s.set_epoch >= epoch:
            return True
    _wait_timeout(timeout)
    return False


# ---- threading.Semaphore and BoundedSemaphore

def _semaphore_init(real):
    def init(self, value=1):
        real(self, value)
        if _racelab.active() and isinstance(self._cond._lock, rt._Lock):
            s = _Sync(_words_of(self._cond._lock))
            s.initial, s.acquires, s.releases = value, 0, 0
            self._racelab_sync = s
            s.count("value", value)
    return init


@_operation
def _semaphore_acquire(self, blocking=True, timeout=None, *, s):
    if not blocking and timeout is not None:
        raise ValueError("can't specify timeout for non-blocking acquire")
    guarded = blocking and timeout is None
    controlled = _racelab.controlled()
    while True:
        s.point("acquire", **({"writes": ("acquires",)} if guarded else
                              {"reads": ("acquires",)}),
                guard="value" if guarded else None,
                waits=f"{s.words} to be released" + _site().format("acquire")
                if guarded else "")
        with s.lock:
            k = s.acquires
            if self._value > 0:
                if not guarded:
                    s.touch("acquires", write=True)
                if k >= s.initial:
                    s.touch(f"token {k}", awaited=guarded)
                s.acquires += 1
                self._value -= 1
                s.count("value", -1)
                return True
            if not guarded:
                s.touch(f"token {k}")
                _wait_timeout(timeout if blocking else None)
                return False
            if controlled:
                continue
        _blocking(s, lambda: self._value > 0, False)


@_operation
def _semaphore_release(self, n=1, *, s, bounded):
    if n < 1:
        raise ValueError("n must be one or more")
    s.point("release", writes=("releases",), reads=("acquires",) if bounded else ())
    with s.lock:
        if bounded and self._value + n > self._initial_value:
            raise ValueError("Semaphore released too many times")
        for i in range(n):
            s.touch(f"token {s.initial + s.releases + i}", write=True)
        s.releases += n
        self._value += n
        s.count("value", n)


# ---- threading.Barrier

def _barrier_init(real):
    def init(self, parties, action=None, timeout=None):
        real(self, parties, action, timeout)
        # A Thread's own _started event stays CPython's: its unlock after the set is the point
        # at which the thread is seen started and still running (join(timeout), is_alive).
        if _racelab.active() and isinstance(self._cond._lock, rt._Lock) and \
                sys._getframe(1).f_code is not _thread_init_code:
            s = _Sync(_words_of(self._cond._lock))
            s.epoch = 0  # generations released so far (passed, broken or reset)
            s.passed = {}  # epoch -> whether its waiters passed (False: broken)
            s.arrived = 0
            s.arrivals = {}  # epoch -> the threads that arrived in it
            s.broken = False
            self._racelab_sync = s
    return init


def _barrier_release(s, passed):
    """Ends the waiting generation: its waiters pass, or raise BrokenBarrierError."""
    s.passed[s.epoch] = passed
    s.touch(f"epoch {s.epoch}", write=True)
    s.count(f"epoch {s.epoch}", 1)
    s.epoch += 1
    s.arrived = 0


def _barrier_break(s):
    s.broken = True
    if s.arrived > 0:
        _barrier_release(s, False)


@_operation
def _barrier_wait(self, timeout=None, *, s):
    if timeout is None:
        timeout = self._timeout
    if timeout is None and self._action is None and _discarded(sys._getframe(2)):
        return _barrier_wait_discarded(self, s)
    s.point("wait at", writes=("state",))
    with s.lock:
        if s.broken:
            raise threading.BrokenBarrierError
        index = s.arrived
        s.arrived += 1
        epoch = s.epoch
        s.arrivals.setdefault(epoch, []).append(rt._thread_name())
        last = s.arrived == self._parties
    if last:
        try:
            if self._action:
                self._action()
        except BaseException:
            with s.lock:
                _barrier_break(s)
            raise
        with s.lock:
            _barrier_release(s, True)
        return index
    guarded = timeout is None
    if guarded:
        s.point("pass", awaits=(f"epoch {epoch}",), guard=f"epoch {epoch}",
                waits=f"the other parties of {s.words}" + _site().format("wait"))
        if not _racelab.controlled():
            _blocking(s, lambda: s.epoch > epoch, False)
    else:
        s.point("pass", reads=(f"epoch {epoch}",))
    with s.lock:
        if s.epoch > epoch:
            _await_arrivals(s, epoch)
            if s.passed[epoch]:
                return index
            raise threading.BrokenBarrierError
        _wait_timeout(timeout)
        s.touch("state", write=True)
        _barrier_break(s)
    raise threading.BrokenBarrierError


_pop_after = {}


def _await_arrivals(s, epoch):
    """A pass awaits every arrival of its generation: an arrival whose index is discarded writes
    only its own `arrival THREAD` (below), and the last of them does not say it released."""
    for t in s.arrivals.get(epoch, []):
        s.touch(f"arrival {t}", awaited=True)


def _discarded(f):
    """Whether the caller drops the call's result: the instruction after the call (CPython's
    f_lasti is the call's, or its last inline cache entry's) is POP_TOP."""
    import dis
    code = f.f_code
    table = _pop_after.get(code)
    if table is None:
        ins = list(dis.get_instructions(code))
        table = [(i.offset, i.opname) for i in ins]
        _pop_after[code] = table
    after = [op for off, op in table if off > f.f_lasti]
    before = [op for off, op in table if off <= f.f_lasti]
    return bool(after) and after[0] == "POP_TOP" and bool(before) and before[-1].startswith("CALL")


def _barrier_wait_discarded(self, s):
    """An arrival whose index nobody reads (`b.wait()` as a statement), at a barrier without
    action or timeout: after the generation's release every party is in the same state whatever
    the arrivals' order, so arrivals of one generation commute: each writes only its own
    `arrival THREAD` and reads `state` (ordered against abort, reset, a timed-out party and an
    arrival that keeps its index, which write it) and `observed` (ordered against n_waiting and
    broken, which write it). Every party, the last included, then passes by a guarded step that
    awaits all the generation's arrivals. (_discarded looks at the nearest Python frame: C code
    that calls wait and keeps the index, under a Python call whose result is dropped, would be
    taken for a discarded index; waiting at a barrier from such code is not a known use.)"""
    me = rt._thread_name()
    s.point("wait at", reads=("state", "observed"), writes=(f"arrival {me}",))
    with s.lock:
        if s.broken:
            raise threading.BrokenBarrierError
        index = s.arrived
        s.arrived += 1
        epoch = s.epoch
        s.arrivals.setdefault(epoch, []).append(me)
        if s.arrived == self._parties:
            s.passed[s.epoch] = True
            s.count(f"epoch {s.epoch}", 1)
            s.epoch += 1
            s.arrived = 0
    s.point("pass", awaits=(f"epoch {epoch}",), guard=f"epoch {epoch}",
            waits=f"the other parties of {s.words}" + _site().format("wait"))
    if not _racelab.controlled():
        _blocking(s, lambda: s.epoch > epoch, False)
    with s.lock:
        _await_arrivals(s, epoch)
        if s.passed[epoch]:
            return index
    raise threading.BrokenBarrierError


@_operation
def _barrier_reset(self, *, s):
    s.point("reset", writes=("state",))
    with s.lock:
        if s.arrived > 0:
            _barrier_release(s, False)
        s.broken = False


@_operation
def _barrier_abort(self, *, s):
    s.point("abort", writes=("state",))
    with s.lock:
        _barrier_break(s)


@_operation
def _barrier_reader(self, *, s, what):
    s.point(what, reads=("state",), writes=("observed",))
    return s.arrived if what == "waiting at" else s.broken


def _replace(cls, name, make, **settings):
    real = cls.__dict__[name]
    setattr(cls, name, functools.update_wrapper(make(real, **settings), real))


def patch():
    """Installs the managed versions (once per process), unless RACELAB_SYNC=locks."""
    if os.environ.get("RACELAB_SYNC", "") == "locks" or getattr(queue.Queue, "_racelab_sync_patched",
                                                                 False):
        return
    Q = queue.Queue
    _replace(Q, "__init__", _queue_init)
    _replace(Q, "put", _queue_put)
    _replace(Q, "get", _queue_get)
    for name, what in (("qsize", "size of"), ("empty", "empty?"), ("full", "full?")):
        _replace(Q, name, _queue_size, what=what)
    _replace(Q, "task_done", _queue_task_done)
    _replace(Q, "join", _queue_join)
    Q._racelab_sync_patched = True
    S = queue._PySimpleQueue
    _replace(S, "__init__", _simple_init)
    _replace(S, "put", _simple_put)
    _replace(S, "get", _simple_get)
    _replace(S, "empty", _simple_size, empty=True)
    _replace(S, "qsize", _simple_size, empty=False)
    E = threading.Event
    _replace(E, "__init__", _event_init)
    _replace(E, "set", _event_set)
    _replace(E, "clear", _event_clear)
    _replace(E, "wait", _event_wait)
    Sem = threading.Semaphore
    _replace(Sem, "__init__", _semaphore_init)
    _replace(Sem, "acquire", _semaphore_acquire)
    Sem.__enter__ = Sem.acquire
    _replace(Sem, "release", _semaphore_release, bounded=False)
    _replace(threading.BoundedSemaphore, "release", _semaphore_release, bounded=True)
    B = threading.Barrier
    _replace(B, "__init__", _barrier_init)
    _replace(B, "wait", _barrier_wait)
    _replace(B, "reset", _barrier_reset)
    _replace(B, "abort", _barrier_abort)
    B.n_waiting = property(_barrier_reader(B.__dict__["n_waiting"].fget, what="waiting at"))
    B.broken = property(_barrier_reader(B.__dict__["broken"].fget, what="broken?"))

"""racelab's threading layer of the Python bridge (racelab live python), run inside the embedded
interpreter (src/live/python/bridge.cc loads it before racelab_bridge.py, which imports it).

It holds what makes the standard library's threads and synchronisation racelab's: threading.Thread
starting controlled threads, the lock (_Lock) that threading's Lock and RLock, Condition, Event,
Semaphore, Barrier, queue and concurrent.futures use on the user's behalf, who made a lock or a
thread (the user's code or a library), what a blocked thread waits for in words, virtual time for
timeouts and sleeps, the numbering of threads and futures that replaces their addresses in the
standard library's orders, os._exit on a controlled thread, and the classification of an exception
that ends a thread (the table's "exceptions"). racelab_bridge.py applies the rest of the
interposition table and runs the script.
"""
import errno
import functools
import os
import sys
import threading

import _racelab

_exception_kinds = []  # the table's "exceptions": how to classify an exception that ends a thread
_table_locks = {}  # name -> the table's lock of this execution (_Lock)


_skip_prefixes = ()  # the standard library's and installed packages' directories
_tls = threading.local()


def _thread_name():
    """The calling thread's name as racelab reports it."""
    name = getattr(_tls, "name", None)
    return name if name is not None else threading.current_thread().name


class _Lock:
    """A racelab lock (a table's lock, or one the user's code made, directly or through the
    standard library's Condition, Event, Semaphore, Barrier, queue and concurrent.futures) that
    knows which thread holds it, and notes an exception leaving a `with` block on it before the
    release, a scheduling point at which the other threads move on.

    A non-recursive lock has `_thread.lock`'s semantics (`python`): any thread may release it, and
    acquiring it while holding it waits for another thread's release, which is how
    Condition.wait parks its waiter. A recursive one is an RLock: only its owner releases it."""
    __slots__ = ("_lock", "name", "owner", "count", "recursive", "__weakref__")

    def __init__(self, name, recursive, python=False, waiter=False):
        self._lock = _racelab.RLock(name, recursive, python and not recursive, waiter)
        self.name, self.owner, self.count, self.recursive = name, None, 0, recursive

    def acquire(self, blocking=True, timeout=-1):
        waits = ""
        if blocking and timeout == -1 and not self.recursive:
            waits = _waits_for(sys._getframe(1), self)
        if not self._lock.acquire(blocking, timeout, waits):
            if blocking and timeout is not None and timeout > 0:
                _vclock_advance(timeout)  # the timeout ran out: virtual time moves on (docs)
            return False
        self.owner = _thread_name()
        self.count += 1
        return True

    def release(self):
        self._lock.release()
        if self.count > 0:
            self.count -= 1
            if self.count == 0:
                self.owner = None

    def locked(self):
        return self._lock.locked()

    # What threading.Condition asks of an RLock (and, for a Lock, answers without a try lock).
    def _is_owned(self):
        if self.recursive:
            return self.count > 0 and self.owner == _thread_name()
        return self._lock.locked()

    def _release_save(self):
        n = self.count
        for _ in range(max(n, 1)):
            self.release()
        return n

    def _acquire_restore(self, n):
        for _ in range(max(n, 1)):
            self.acquire()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, exc_type, exc, tb):
        if exc is not None:
            _note(exc)
        self.release()

    def __repr__(self):
        return f"<racelab lock {self.name!r}>"


# ---- Who made it: the user's code, or the standard library on the user's behalf.

_sync_files = set()  # threading.py, queue.py, concurrent/futures/*.py (set by patch_threading)
_bridge_file = None  # the bridge's code (frames of the bridge's own wrappers are skipped)


def _skippable(filename):
    return filename in _sync_files or filename == _bridge_file


def _creator(frame):
    """(is_user, site, made_by) for something created at `frame`: the standard library's
    synchronisation modules (threading, queue, concurrent.futures) and the bridge are skipped, so
    a queue.Queue's mutex or a ThreadPoolExecutor's worker belongs to the code that made the queue
    or the pool; a module body being imported is never the user's (its locks outlive an
    execution). `made_by` is the outermost synchronisation class constructing it ("Queue")."""
    made_by = None
    f = frame
    while f is not None:
        filename = f.f_code.co_filename
        if filename.startswith("<frozen importlib"):
            return False, None, None
        if _skippable(filename):
            if f.f_code.co_name == "__init__" and filename != _bridge_file:
                made_by = f.f_code.co_qualname.split(".")[0].lstrip("_").replace("PySimple",
                                                                                 "Simple")
            f = f.f_back
            continue
        return _user_code(filename), f"{os.path.basename(filename)}:{f.f_lineno}", made_by
    return False, None, None


# ---- What a blocked thread waits for, in words.

_phrases = {
    "Queue.get": "an item from {obj}",
    "_PySimpleQueue.get": "an item from {obj}",
    "Queue.put": "space in {obj}",
    "Queue.join": "{obj} to be drained (task_done)",
    "Event.wait": "{obj} to be set",
    "Barrier.wait": "the other parties of {obj}",
    "Barrier._wait": "the other parties of {obj}",
    "Semaphore.acquire": "{obj} to be released",
    "BoundedSemaphore.acquire": "{obj} to be released",
    "Future.result": "the result of {obj}",
    "Future.exception": "the result of {obj}",
    "as_completed": "one of its futures to finish",
    "wait": "its futures to finish",
    "Condition.wait": "a notify on {obj}",
    "Condition.wait_for": "a notify on {obj}",
}


def _queue_peers(q, getting):
    """", which only A, B put into" for a queue get (", ... take from" for a put): the threads
    seen on the other side of the queue in this execution."""
    me = _thread_name()
    peers = sorted(n for n in getattr(q, "_racelab_putters" if getting else "_racelab_getters",
                                      ()) if n != me)
    verb = "put into" if getting else "take from"
    if not peers:
        return f", which no other thread has yet {'put into' if getting else 'taken from'}"
    return f", which only {', '.join(peers)} {verb}"


def _waits_for(frame, lock):
    """What a thread about to block on `lock` waits for: "an item from Queue at train.py:20 (get
    at train.py:108), which only target puts into". Empty when nothing better than the lock's own
    name can be said."""
    outer, obj, peers, site = None, lock.name, "", None
    f = frame
    while f is not None:
        filename = f.f_code.co_filename
        if not _skippable(filename):
            site = f"{os.path.basename(filename)}:{f.f_lineno}"
            break
        qual = f.f_code.co_qualname
        if qual in _phrases:
            outer = qual
            me = f.f_locals.get("self")
            if qual.startswith("Condition.") and isinstance(getattr(me, "_lock", None), _Lock):
                obj = me._lock.name
            if qual in ("Queue.get", "Queue.put") and me is not None:
                peers = _queue_peers(me, qual == "Queue.get")
        f = f.f_back
    if outer is None:
        return ""
    return _phrases[outer].format(obj=obj) + (f" ({outer.split('.')[-1]} at {site})" if site
                                              else "") + peers


# ---- Virtual time: timeouts and sleeps of controlled threads move it on (docs/live.md).

_vclock_offset = [0.0]
_real_monotonic = None


def _vclock_advance(seconds):
    if _racelab.controlled():
        _vclock_offset[0] += max(0.0, float(seconds))


def _vmonotonic():
    return _real_monotonic() + _vclock_offset[0]


# ---- A file lock's poll (docs/live.md, "A file lock's poll is not a clock"; docs/facts.md F8).
#
# A process waits for a lock file that another holds by trying fcntl.flock without blocking and
# calling time.sleep between tries: the filelock package does (torch's Inductor and Triton caches,
# Dynamo's profiles, many libraries), and so do scripts. Where another process holds the file
# (another racelab worker, another job on the machine), a sleep that is a scheduling point would
# turn that process's timing into decisions of this execution: as many as the other process
# takes, a schedule that does not replay. So a controlled thread's sleep right after a flock that
# the file refused sleeps for real and is no scheduling point. Where a thread of this process
# holds the file, that thread may be parked at a scheduling point and must be let run: the poll
# then waits, as a guarded scheduling point, until a thread of this process releases the file (a
# spin of sleeps would be a livelock under a preemption bound). Which of the two it is depends
# only on this process's threads, which the schedule orders. Every flock a thread of this process
# makes is an access of the file for dpor ("file lock PATH"): two threads taking one file race.

_file_lock_releases = {}  # path -> releases by this process's threads in this execution
_flock_refused = {}  # thread identifier -> the file its last flock could not take
_CONTENDED = (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)


def _file_lock_key(path):
    return f"file lock {path}"


def _fd_path(fd):
    """The path of the file open as `fd` (a number or an object with fileno()), or None."""
    try:
        return os.readlink(f"/proc/self/fd/{fd if isinstance(fd, int) else fd.fileno()}")
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def _file_locked_here(path):
    """Whether a file descriptor of this process holds a lock on the file at `path` (Linux: a
    descriptor's /proc/self/fdinfo lists the locks held through it)."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return True  # what cannot be known waits as a thread of this process's lock would
    for fd in fds:
        if _fd_path(int(fd)) != path:
            continue
        try:
            with open(f"/proc/self/fdinfo/{fd}") as info:
                if any(line.startswith("lock:") for line in info):
                    return True
        except OSError:
            continue
    return False


def _poll_file_lock(path, seconds, real_sleep):
    """A controlled thread's sleep right after the file at `path` refused its flock (above)."""
    released = _file_lock_releases.get(path, 0)
    if not _file_locked_here(path):
        real_sleep(seconds)  # another process holds it: no decision of this execution
        return
    key = _file_lock_key(path)
    _racelab.point("wait for file lock", awaits=[key], guard=key, at_least=released + 1,
                   waits_for=f"file lock {path}, which a thread of this process holds")


def _patch_flock():
    """fcntl.flock on a thread of this process, under an execution: an access of the file; a
    refusal noted for the thread's next sleep, a release counted for _poll_file_lock."""
    import fcntl
    real_flock = fcntl.flock

    def flock(fd, operation):
        path = _fd_path(fd) if _racelab.active() else None
        if path is None:
            return real_flock(fd, operation)
        me = threading.get_ident()
        _flock_refused.pop(me, None)
        key = _file_lock_key(path)
        _racelab.touch(key, True)
        try:
            return real_flock(fd, operation)
        except OSError as e:
            if e.errno in _CONTENDED:
                _flock_refused[me] = path
            raise
        finally:
            if operation & fcntl.LOCK_UN:
                _file_lock_releases[path] = _file_lock_releases.get(path, 0) + 1
                _racelab.count(key, 1)

    functools.update_wrapper(flock, real_flock)
    fcntl.flock = flock


# ---- Orders that do not depend on addresses (docs/live.md, "Threads").
#
# The standard library orders threads and futures by id(), an address that differs from process
# to process and from one execution to the next: concurrent.futures' wait and as_completed take
# their futures' locks sorted by id() and keep them in sets (hashed by id()), and
# ThreadPoolExecutor.shutdown joins its workers from a set. Which lock a thread blocks on, and so
# which threads the scheduler may pick, would then change with the addresses. A thread or future
# the user's code makes during an execution is numbered instead, in the order the execution makes
# them (counted from 0 in every execution, so that a schedule replays in a fresh process), and is
# hashed and sorted by its number.

_order = [None]  # next(_order[0]): the number of the next thread or future; restart_order()


def restart_order():
    """Numbers threads and futures from 0 again (at the start of every execution)."""
    import itertools
    _order[0] = itertools.count()
    _file_lock_releases.clear()
    _flock_refused.clear()
    sys.modules["racelab_sync"].restart()


def _number(obj, frame):
    """Gives `obj` its number when the user's code makes it on a controlled thread (a library's,
    or one made on a foreign thread, whose moment the scheduler does not fix, keeps id())."""
    if _order[0] is not None and _racelab.active() and _racelab.controlled() and \
            _creator(frame)[0]:
        obj._racelab_order = next(_order[0])


def _ordered_hash(self):
    n = getattr(self, "_racelab_order", None)
    return object.__hash__(self) if n is None else n


def _order_key(obj):
    """What replaces id() as a sort key: numbered objects in their order, after the others."""
    n = getattr(obj, "_racelab_order", None)
    return (0, id(obj)) if n is None else (1, n)


def _numbered(cls):
    """Numbers the instances of `cls` (before its __init__ runs: Thread.__init__ already puts the
    thread in a WeakSet, by its hash) and hashes them by their number."""
    real_init = cls.__init__

    def init(self, *args, **kwargs):
        _number(self, sys._getframe(1))
        real_init(self, *args, **kwargs)

    functools.update_wrapper(init, real_init)
    cls.__init__ = init
    cls.__hash__ = _ordered_hash


# ---- The end of the script: what the interpreter's exit does before it waits for the non-daemon
# threads (threading._shutdown), under control (docs/live.md, "The end of the script").

_execution_atexits = []  # the callbacks the user's code registered in this execution


def _this_execution(thread):
    return getattr(thread, "_racelab_tid", None) is not None  # earlier ones: restart_exit


def restart_exit():
    """Undoes the last execution's exit (at the start of every execution): threading and
    concurrent.futures no longer shutting down, the user's callbacks of the last execution gone
    (its script registers them again), and the last execution's pool workers forgotten."""
    import concurrent.futures.thread as cft
    threading._SHUTTING_DOWN = False
    cft._shutdown = False
    for call in _execution_atexits:
        if call in threading._threading_atexits:
            threading._threading_atexits.remove(call)
    _execution_atexits.clear()
    for t in [t for t in list(cft._threads_queues) if _this_execution(t)]:
        cft._threads_queues.pop(t, None)
    forget_threads()


def forget_threads():
    """Drops the controlled threads of earlier executions from threading's tables of running
    threads. A thread that an execution's end unwound (dpor abandoning it, sleep-set blocked, with
    a ThreadPoolExecutor's workers parked in their queue) can stay in threading._active after it
    ended, under its OS thread's identifier; the next thread the system gives that identifier
    would then be that old Thread to threading.current_thread(), and to racelab (its name, its
    _racelab_tid): after a run of abandoned executions, a pool worker of a later execution acted
    as an earlier one's, and the search saw a livelock no schedule reproduced (issue 34, live
    --jobs). No thread of an earlier execution runs when the next starts (a hung one ends the
    process), so every such entry is stale."""
    with threading._active_limbo_lock:
        for ident, t in list(threading._active.items()):
            if _this_execution(t) and not t.is_alive():
                del threading._active[ident]
        for t in [t for t in threading._limbo if _this_execution(t)]:
            del threading._limbo[t]


def at_exit():
    """Once the script's main has returned: the callbacks registered with
    threading._register_atexit, last first, as threading._shutdown calls them at the
    interpreter's exit; on main, so that their steps are scheduled. They are the ones the user's
    code registered in this execution and concurrent.futures' (which tells the workers of the
    pools made in this execution to exit and joins them: a pool never shut down ends as in
    CPython). Callbacks a module registered when it was imported act on the process's state and
    stay for the process's own exit, and so do the pools of threads racelab does not control."""
    import weakref
    import concurrent.futures.thread as cft
    threading._SHUTTING_DOWN = True
    everything = cft._threads_queues
    cft._threads_queues = weakref.WeakKeyDictionary(
        {t: q for t, q in list(everything.items()) if _this_execution(t)})
    try:
        for call in reversed(list(threading._threading_atexits)):
            if call in _execution_atexits or getattr(call, "func", None) is cft._python_exit:
                call()
    finally:
        cft._threads_queues = everything


def _classify(exc):
    """(kind, message) for an exception the table's "exceptions" classify, else None. A
    "holder_of" lock names the thread that held it, as seen when the exception was noted."""
    if not isinstance(exc, Exception):
        return None
    text = f"{type(exc).__name__}: {exc}"
    for c in _exception_kinds:
        if c["match"] in text:
            lock = c.get("holder_of")
            if lock:
                holder = getattr(_table_locks.get(lock), "owner", None)
                text += (f" (raised in {_thread_name()}; {holder} held {lock})" if holder else
                         f" (raised in {_thread_name()}; no thread held {lock})")
            else:
                text += f" (raised in {_thread_name()})"
            return c["kind"], text
    return None


def _note(exc):
    """Classifies an exception the first time racelab sees it on its way out (before any
    scheduling point lets the other threads move on), for the report of the thread it ends."""
    if isinstance(exc, Exception) and not hasattr(exc, "_racelab_finding") and _exception_kinds:
        try:
            exc._racelab_finding = _classify(exc)
        except AttributeError:  # an exception type without a __dict__
            pass


def _finding_of(exc):
    found = getattr(exc, "_racelab_finding", False)
    return _classify(exc) if found is False else found


class _ProcessExit(BaseException):
    """os._exit called on a controlled thread: the execution ends; the thread unwinds."""


_plain_failures = []  # (kind, message): the exceptions that ended threads of a plain run


def _exception_frames(exc):
    """The exception's traceback, outermost first: [(file, line, function, user)], `user` for
    the user's code (not racelab's own modules, which run from "<string>", not the standard
    library's threading, queue or concurrent.futures, not torch or another installed package)."""
    import traceback
    try:
        frames = traceback.extract_tb(exc.__traceback__)
    except Exception:  # noqa: BLE001 - a traceback racelab cannot read is left out
        return []
    return [(f.filename, f.lineno or 0, f.name, _user_code(f.filename)) for f in frames]


def _exception_place(frames):
    """" at pipeline.py:42 (in step)": the innermost user frame, or "" when there is none."""
    for file, line, function, user in reversed(frames):
        if user:
            return f" at {os.path.basename(file)}:{line} (in {function})"
    return ""


def _exception_text(exc, thread, frames=None):
    """"IndexError in thread c1 at work.py:12 (in step): list index out of range": an exception
    that ended a thread, by its own type and the innermost user frame it was raised through."""
    text = str(exc)
    place = _exception_place(_exception_frames(exc) if frames is None else frames)
    return f"{type(exc).__name__} in thread {thread}{place}" + (f": {text}" if text else "")


def _plain_finding(exc, thread):
    found = _classify(exc) if _exception_kinds else None
    return found if found else ("exception", _exception_text(exc, thread))


def _user_code(filename):
    """Whether code in `filename` is the user's (not the standard library, not an installed
    package, not generated code)."""
    return not (filename.startswith(_skip_prefixes) or filename.startswith("<")
                or "site-packages" in filename or "dist-packages" in filename
                or f"{os.sep}torch{os.sep}" in filename)


def patch_threading(before_start):
    """Patches threading, queue, concurrent.futures, time.sleep and os._exit (once per process).
    `before_start()` runs before each controlled thread starts (racelab_bridge.py wraps the
    table's dicts that exist by then)."""
    global _skip_prefixes
    T = threading.Thread
    if getattr(T, "_racelab_patched", False):
        return
    import sysconfig
    paths = sysconfig.get_paths()
    _skip_prefixes = tuple(p for p in {paths["stdlib"], paths["purelib"], paths["platlib"]} if p)
    real_start, real_join = T.start, T.join
    real_hook = threading.excepthook

    def controlled_body(thread):
        def body():
            _tls.error = _tls.finding = None
            _tls.stack = []
            _tls.name = thread.name
            thread._bootstrap()
            if _racelab.stopping():
                return
            if _tls.finding is not None:  # a classified exception ends this thread only
                _racelab.report(*_tls.finding)
            elif _tls.error is not None:  # any other ends the execution, as a failure
                _racelab.report("exception", _tls.error, True, _tls.stack)
        return body

    def start(self):
        # Threads the user's code starts are controlled: they run when the scheduler picks them,
        # and so are the threads the standard library starts for it (a ThreadPoolExecutor's
        # workers, a threading.Timer). Threads a library starts (Inductor's compile-pool reader,
        # tqdm's monitor) stay real, like LibTorch's C++ workers: they block in real calls and
        # would hold the turn.
        if not (_racelab.active() and _creator(sys._getframe(1))[0]):
            return real_start(self)
        if not self._initialized:
            raise RuntimeError("thread.__init__() not called")
        if self._started.is_set() or getattr(self, "_racelab_tid", None) is not None:
            raise RuntimeError("threads can only be started once")
        # As Thread.start does: _bootstrap_inner moves the thread from _limbo to _active.
        with threading._active_limbo_lock:
            threading._limbo[self] = self
        before_start()
        # A daemon thread does not keep the execution going: once every non-daemon thread has
        # finished (main included), the execution ends, as the interpreter's exit does.
        self._racelab_tid = _racelab.spawn(self.name, controlled_body(self), self.daemon)

    def join(self, timeout=None):
        tid = getattr(self, "_racelab_tid", None)
        if tid is None:
            return real_join(self, timeout)
        if timeout is not None:
            # Both outcomes are real interleavings: the thread finished by then, or the timeout
            # ran out (virtual time moves on); the caller asks is_alive() to tell them apart.
            _racelab.point(f"join {self.name} (timeout)")
            if self.is_alive():
                _vclock_advance(timeout)
            return
        _racelab.join(tid)

    def excepthook(args):
        # An exception that ends a controlled thread is a finding (the thread re-raises it once
        # threading has cleaned up); the unwinding of an execution that is over is not reported,
        # nor printed: a thread the runtime has let go of by the time its ExecutionOver reaches
        # this hook is no longer controlled, and the script did nothing wrong.
        if issubclass(args.exc_type, _racelab.ExecutionOver):
            return
        if _racelab.controlled():
            # As CPython's own hook: SystemExit ends a thread quietly; so does os._exit's unwinding.
            if issubclass(args.exc_type, (SystemExit, _ProcessExit)):
                return
            if not _racelab.stopping():
                _tls.finding = _finding_of(args.exc_value)
                _tls.stack = _exception_frames(args.exc_value)
                _tls.error = _exception_text(args.exc_value,
                                             getattr(args.thread, "name", "a thread"), _tls.stack)
            return
        if not _racelab.active() and not issubclass(args.exc_type, SystemExit):
            _plain_failures.append(_plain_finding(args.exc_value,
                                                  getattr(args.thread, "name", "a thread")))
        real_hook(args)

    T.start = start
    T.join = join
    T._racelab_patched = True
    threading.excepthook = excepthook

    # Locks the user's code creates during an execution, directly or through the standard
    # library's synchronisation classes (Condition, Event, Semaphore, Barrier, queue.Queue,
    # concurrent.futures), become racelab's, so that a controlled thread waiting for one gives the
    # scheduler its turn. Locks libraries make (torch's, a module body's at import) stay real.
    real = {"Lock": threading.Lock, "RLock": threading.RLock}
    real_allocate = threading._allocate_lock

    def factory(kind, recursive):
        def make(*args, **kwargs):
            if _racelab.active():
                user, site, made_by = _creator(sys._getframe(1))
                if user:
                    return _Lock(f"{made_by or kind} at {site}", recursive, python=True)
            return real[kind](*args, **kwargs)
        return make

    def allocate_waiter():
        # Condition.wait parks a waiter on a fresh lock that notify releases: racelab's when the
        # condition's own lock is racelab's, a real one otherwise (a condition a library made).
        frame = sys._getframe(1)
        if _racelab.active() and frame.f_code is threading.Condition.wait.__code__:
            cond = frame.f_locals.get("self")
            lock = getattr(cond, "_lock", None)
            if isinstance(lock, _Lock):
                return _Lock(f"waiter on {lock.name}", False, python=True, waiter=True)
        return real_allocate()

    threading.Lock = factory("Lock", False)
    threading.RLock = factory("RLock", True)
    threading._allocate_lock = allocate_waiter

    # The files whose frames _creator skips; the pure-Python SimpleQueue (its C twin blocks
    # inside C, out of racelab's sight), which ThreadPoolExecutor's work queue then uses.
    import queue
    import concurrent.futures
    import concurrent.futures.thread
    global _bridge_file, _real_monotonic
    # Both bridge modules run from source (bridge.cc's load_module): their code shares one
    # filename, "<string>".
    _bridge_file = _creator.__code__.co_filename
    futures_dir = os.path.dirname(concurrent.futures.__file__)
    _sync_files.update({threading.__file__, queue.__file__})
    _sync_files.update(os.path.join(futures_dir, f) for f in os.listdir(futures_dir)
                       if f.endswith(".py"))
    queue.SimpleQueue = queue._PySimpleQueue

    # Who uses a queue, for "waits for an item from Queue at x.py:3, which only target puts into".
    def tracked(method, attr):
        def wrapper(self, *args, **kwargs):
            if isinstance(getattr(self, "mutex", None), _Lock):
                names = self.__dict__.setdefault(attr, set())
                names.add(_thread_name())
            return method(self, *args, **kwargs)
        functools.update_wrapper(wrapper, method)
        return wrapper

    # A pool task's exception is caught by its future on the worker, before any scheduling point:
    # classify it there, where the raising thread and the table lock's holder are still known
    # (Future.result() re-raises it in another thread later).
    real_set_exception = concurrent.futures.Future.set_exception

    def set_exception(self, exception):
        if _racelab.active() and _racelab.controlled():
            _note(exception)
        return real_set_exception(self, exception)

    functools.update_wrapper(set_exception, real_set_exception)
    concurrent.futures.Future.set_exception = set_exception

    # Threads and futures in the order the execution made them, not by address (_numbered);
    # wait and as_completed take their futures' locks in that order (one total order still, so
    # that two of them cannot deadlock each other).
    import concurrent.futures._base as cfb
    _numbered(T)
    _numbered(cfb.Future)
    real_acquire_init = cfb._AcquireFutures.__init__

    def acquire_init(self, futures):
        real_acquire_init(self, futures)
        if isinstance(getattr(self, "futures", None), list):
            self.futures.sort(key=_order_key)

    functools.update_wrapper(acquire_init, real_acquire_init)
    cfb._AcquireFutures.__init__ = acquire_init

    queue.Queue.put = tracked(queue.Queue.put, "_racelab_putters")
    queue.Queue.get = tracked(queue.Queue.get, "_racelab_getters")

    # Virtual time for timeouts: threading's, queue's and concurrent.futures' clocks, and
    # time.sleep on controlled threads, which is a scheduling point and does not sleep.
    import time
    _real_monotonic = time.monotonic
    threading._time = _vmonotonic
    queue.time = _vmonotonic
    real_sleep = time.sleep

    def sleep(seconds):
        if _racelab.active() and _racelab.controlled():
            if seconds < 0:
                raise ValueError("sleep length must be non-negative")
            refused = _flock_refused.pop(threading.get_ident(), None)
            if refused is not None:
                _poll_file_lock(refused, seconds, real_sleep)
                return
            _racelab.point("sleep")
            _vclock_advance(seconds)
            return
        real_sleep(seconds)

    functools.update_wrapper(sleep, real_sleep)
    time.sleep = sleep
    _patch_flock()

    # os._exit on a controlled thread ends the execution (the process would end there): a failure
    # unless the status is 0; the thread unwinds instead of killing racelab with the script.
    real_exit = os._exit

    def exit_now(status):
        if _racelab.active() and _racelab.controlled():
            if status != 0:
                _racelab.report("exception", f"{_thread_name()} called os._exit({status}): the "
                                "process ends there with a failing status", True)
            else:
                _racelab.end_execution()
            raise _ProcessExit(status)
        real_exit(status)

    os._exit = exit_now

    # A callback the user's code registers for the interpreter's exit during an execution is that
    # execution's (restart_exit, at_exit); one a module registers while it is imported stays.
    real_register = threading._register_atexit

    def register_atexit(func, *args, **kwargs):
        real_register(func, *args, **kwargs)
        if _racelab.active() and _creator(sys._getframe(1))[0]:
            _execution_atexits.append(threading._threading_atexits[-1])

    functools.update_wrapper(register_atexit, real_register)
    threading._register_atexit = register_atexit

    # Queue, SimpleQueue, Event, Semaphore and Barrier as steps of their own (racelab_sync.py).
    sys.modules["racelab_sync"].patch()

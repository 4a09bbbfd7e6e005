# racelab's Python bridge, run inside the embedded interpreter (src/live/python/bridge.cc).
#
# It makes threading.Thread start controlled threads, applies an interposition table (one JSON
# file per torch version, data/interpose/) before each execution, and runs the user's script.
import functools
import importlib
import os
import runpy
import sys
import threading

import _racelab

_originals = {}  # (module, attr) -> the original object, kept across executions
_pending_dicts = []  # table "dicts" entries not wrapped yet in this execution
_exception_kinds = []  # the table's "exceptions": how to classify an exception that ends a thread
_table_locks = {}  # name -> the table's lock of this execution (_Lock)


class _PointDict(dict):
    """A dict whose lookups and inserts are scheduling points (the user's compiled-kernel cache:
    a check-then-insert race lives between them)."""

    def __init__(self, name, *args):
        super().__init__(*args)
        self._racelab_name = name

    def __contains__(self, key):
        _racelab.point(f"lookup {self._racelab_name}")
        return super().__contains__(key)

    def __getitem__(self, key):
        _racelab.point(f"lookup {self._racelab_name}")
        return super().__getitem__(key)

    def get(self, key, default=None):
        _racelab.point(f"lookup {self._racelab_name}")
        return super().get(key, default)

    def __setitem__(self, key, value):
        _racelab.point(f"insert {self._racelab_name}")
        super().__setitem__(key, value)


def _wrap_dicts():
    """Wraps the table's dicts that exist by now (a script's module-level dict exists once its
    definition ran, which is before it starts threads)."""
    for spec in list(_pending_dicts):
        mod = sys.modules.get(spec["module"])
        value = getattr(mod, spec["attr"], None) if mod is not None else None
        if isinstance(value, dict):
            if not isinstance(value, _PointDict):
                setattr(mod, spec["attr"], _PointDict(spec.get("name", spec["attr"]), value))
            _pending_dicts.remove(spec)


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
_bridge_file = None  # this module's code (frames of the bridge's own wrappers are skipped)


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


def _user_code(filename):
    """Whether code in `filename` is the user's (not the standard library, not an installed
    package, not generated code)."""
    return not (filename.startswith(_skip_prefixes) or filename.startswith("<")
                or "site-packages" in filename or "dist-packages" in filename)


def patch_threading():
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
            _tls.name = thread.name
            thread._bootstrap()
            if _racelab.stopping():
                return
            if _tls.finding is not None:  # a classified exception ends this thread only
                _racelab.report(*_tls.finding)
            elif _tls.error is not None:
                raise _tls.error
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
        _wrap_dicts()
        self._racelab_tid = _racelab.spawn(self.name, controlled_body(self))

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
        # threading has cleaned up); the unwinding of an execution that is over is not reported.
        if _racelab.controlled():
            # As CPython's own hook: SystemExit ends a thread quietly; so does os._exit's unwinding.
            if issubclass(args.exc_type, (SystemExit, _ProcessExit)):
                return
            if not _racelab.stopping():
                _tls.finding = _finding_of(args.exc_value)
                _tls.error = RuntimeError(
                    f"{args.exc_type.__name__} in {getattr(args.thread, 'name', 'a thread')}: "
                    f"{args.exc_value}")
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
            _racelab.point("sleep")
            _vclock_advance(seconds)
            return
        real_sleep(seconds)

    functools.update_wrapper(sleep, real_sleep)
    time.sleep = sleep

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


def _resolve(dotted):
    module, _, attr = dotted.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _device_of(x):
    if isinstance(x, (list, tuple)) and x:
        return _device_of(x[0])
    device = getattr(x, "device", None)
    return str(device if device is not None else x)


def _original(module, attr):
    key = (module.__name__, attr)
    if key not in _originals:
        _originals[key] = getattr(module, attr)
    return _originals[key]


def interpose(table):
    _pending_dicts[:] = [dict(d) for d in table.get("dicts", [])]
    _exception_kinds[:] = [dict(c) for c in table.get("exceptions", [])]
    _table_locks.clear()
    for name in table.get("fresh_modules", []):
        for m in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[m]
    for st in table.get("settings", []):
        mod = importlib.import_module(st["module"])
        if not hasattr(mod, st["attr"]):
            raise RuntimeError(f"interposition: {st['module']} has no setting {st['attr']}")
        setattr(mod, st["attr"], st["value"])
    current_device = None
    if table.get("current_device"):
        try:
            current_device = _resolve(table["current_device"])
        except (ImportError, AttributeError):
            current_device = None
    for lk in table.get("locks", []):
        mod = importlib.import_module(lk["module"])
        _original(mod, lk["attr"])
        lock = _table_locks[lk["name"]] = _Lock(lk["name"], lk.get("recursive", True))
        setattr(mod, lk["attr"], lock)
    for b in table.get("blocking", []):
        mod = importlib.import_module(b["module"])
        orig = _original(mod, b["attr"])

        def wrapper(*args, _orig=orig, _b=b, **kwargs):
            served = _b.get("served_by", "").format(device=_device_of(args[0]) if args else "")
            with _racelab.blocking(_b["what"], served):
                try:
                    return _orig(*args, **kwargs)
                except Exception as e:
                    _note(e)  # before leaving the call, a scheduling point
                    raise

        functools.update_wrapper(wrapper, orig)
        for target in [b["module"]] + b.get("aliases", []):
            setattr(importlib.import_module(target), b["attr"], wrapper)
    for pt in table.get("points", []):
        mod = importlib.import_module(pt["module"])
        orig = _original(mod, pt["attr"])

        def wrapper(*args, _orig=orig, _pt=pt, **kwargs):
            # A function that calls itself again through a dispatch layer (autograd.grad goes
            # through __torch_function__ modes back into autograd.grad) is one scheduling point.
            inside = getattr(_tls, "inside", None)
            if inside is None:
                inside = _tls.inside = set()
            if _pt["label"] in inside:
                return _orig(*args, **kwargs)
            if _pending_dicts:
                _wrap_dicts()
            if _pt.get("name_foreign") and not _racelab.controlled() and current_device:
                _tls.name = _pt["name_foreign"].format(current_device=current_device())
                _racelab.name_this_thread(_tls.name)
            _racelab.point(_pt["label"])
            inside.add(_pt["label"])
            try:
                result = _orig(*args, **kwargs)
            except Exception as e:
                _note(e)
                raise
            finally:
                inside.discard(_pt["label"])
            if _pt.get("end"):  # the call's end is a scheduling point too ("LABEL end")
                _racelab.point(_pt["label"] + " end")
            return result

        functools.update_wrapper(wrapper, orig)
        for target in [pt["module"]] + pt.get("aliases", []):
            setattr(importlib.import_module(target), pt["attr"], wrapper)
    # Last: a reset may take the locks just installed (torch._dynamo.reset takes compile_lock).
    for fn in table.get("reset", []):
        _resolve(fn)()


class _ProcessExit(BaseException):
    """os._exit called on a controlled thread: the execution ends; the thread unwinds."""


def check_script(path):
    """"FILE:LINE: SyntaxError: ..." when the script does not compile, else ''."""
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec")
    except SyntaxError as e:
        return f"{path}:{e.lineno}: {type(e).__name__}: {e.msg}"
    except (OSError, ValueError) as e:
        return f"{path}: {e}"
    return ""


_crash_file = None  # kept open: faulthandler writes the stacks there when the process crashes


def arm_crash_stacks(path):
    """On a fatal signal (a C extension crashing), every thread's Python stack goes to `path`
    before racelab's own handler writes the report (faulthandler chains to it)."""
    global _crash_file
    import faulthandler
    _crash_file = open(path, "w")
    faulthandler.enable(file=_crash_file, all_threads=True)


def missing_module(table, search_path):
    """"module (ImportError: ...)" for the first module the table names that cannot be imported
    (a torch table in an interpreter without torch), else ''."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    for key in ("locks", "blocking", "points", "settings"):
        for entry in table.get(key, []):
            try:
                importlib.import_module(entry["module"])
            except Exception as e:  # noqa: BLE001 - any import failure is the answer
                return f"{entry['module']} ({type(e).__name__}: {e})"
    return ""


def run(script, argv, table, search_path):
    """One execution: fresh interposition, then the script as __main__ on this (controlled) thread."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    _tls.name = "main"
    _vclock_offset[0] = 0.0
    # Unnamed threads are named from counters ("Thread-3", "ThreadPoolExecutor-0_1"): every
    # execution counts from the start, so that a schedule replays in a fresh process.
    import itertools
    import concurrent.futures.thread as cft
    threading._counter = itertools.count(1).__next__
    cft.ThreadPoolExecutor._counter = itertools.count().__next__
    # ThreadPoolExecutor.submit holds this module lock while it starts a worker and queues the
    # work item (scheduling points): it must be racelab's, or a second submitter would wait for
    # it out of the scheduler's sight.
    cft._global_shutdown_lock = _Lock("concurrent.futures global shutdown lock", False, True)
    interpose(table)
    _wrap_dicts()  # dicts of modules already imported
    sys.argv = [script] + list(argv)
    try:
        runpy.run_path(script, run_name="__main__")
    except _ProcessExit:
        return
    except SystemExit as e:  # sys.exit(0) ends the script normally; any other status is a failure
        if e.code not in (None, 0):
            raise RuntimeError(f"the script exited with status {e.code}") from None
    except Exception as e:
        found = None if _racelab.stopping() else _finding_of(e)
        if found is None:
            raise
        _racelab.report(*found)


_plain_failures = []  # (kind, message): the exceptions that ended threads of a plain run


def _plain_finding(exc, thread):
    found = _classify(exc) if _exception_kinds else None
    return found if found else ("exception", f"{type(exc).__name__} in {thread}: {exc}")


def run_plain(script, argv, table, search_path):
    """The script as __main__ on this thread, uncontrolled (`--uncontrolled`): its threads are
    real threads and its locks real locks. Waits for its non-daemon threads, as the interpreter
    does at exit, and returns the failures [(kind, message)]: an exception that ended a thread
    (classified by the table's "exceptions"), or a failing exit status."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    _exception_kinds[:] = [dict(c) for c in table.get("exceptions", [])]
    _plain_failures.clear()
    sys.argv = [script] + list(argv)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            _plain_failures.append(("exception", f"the script exited with status {e.code}"))
    except BaseException as e:  # noqa: BLE001 - the script's failure is the result
        import traceback
        traceback.print_exc()
        _plain_failures.append(_plain_finding(e, "main"))
    skip = (threading.current_thread(), threading.main_thread())  # racelab's own threads
    for t in threading.enumerate():
        if t not in skip and not t.daemon and t.is_alive():
            t.join()
    return list(_plain_failures)


def format_stacks():
    """Every thread's Python stack, for a hang report."""
    import traceback
    names = {t.ident: t.name for t in threading.enumerate()}
    parts = []
    for ident, frame in sys._current_frames().items():
        parts.append(f"Thread {ident} ({names.get(ident, 'not started by threading')}):\n")
        parts.append("".join(traceback.format_stack(frame)))
        parts.append("\n")
    return "".join(parts)

# racelab's Python bridge, run inside the embedded interpreter (src/live/python/bridge.cc).
#
# It makes threading.Thread start controlled threads, applies an interposition table (one JSON
# file per torch version, data/interpose/) before each execution, and runs the user's script.
import functools
import importlib
import runpy
import sys
import threading

import _racelab

_originals = {}  # (module, attr) -> the original object, kept across executions
_pending_dicts = []  # table "dicts" entries not wrapped yet in this execution


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
    import os
    import sysconfig
    paths = sysconfig.get_paths()
    _skip_prefixes = tuple(p for p in {paths["stdlib"], paths["purelib"], paths["platlib"]} if p)
    real_start, real_join = T.start, T.join
    real_hook = threading.excepthook

    def controlled_body(thread):
        def body():
            _tls.error = None
            thread._bootstrap()
            if _tls.error is not None and not _racelab.stopping():
                raise _tls.error
        return body

    def start(self):
        # Threads the user's code starts are controlled: they run when the scheduler picks them.
        # Threads a library starts (Inductor's compile-pool reader, tqdm's monitor) stay real,
        # like LibTorch's C++ workers: they block in real calls and would hold the turn.
        if not (_racelab.active() and _user_code(sys._getframe(1).f_code.co_filename)):
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
        _racelab.join(tid)

    def excepthook(args):
        # An exception that ends a controlled thread is a finding (the thread re-raises it once
        # threading has cleaned up); the unwinding of an execution that is over is not reported.
        if _racelab.controlled():
            if not _racelab.stopping():
                _tls.error = RuntimeError(
                    f"{args.exc_type.__name__} in {getattr(args.thread, 'name', 'a thread')}: "
                    f"{args.exc_value}")
            return
        real_hook(args)

    T.start = start
    T.join = join
    T._racelab_patched = True
    threading.excepthook = excepthook

    # Locks the user's own code creates during an execution become racelab's, so that a
    # controlled thread waiting for one gives the scheduler its turn. The standard library's and
    # installed packages' locks (Condition, Event, queue internals) stay real.
    real = {"Lock": threading.Lock, "RLock": threading.RLock}

    def factory(kind, recursive):
        def make(*args, **kwargs):
            frame = sys._getframe(1)
            where = frame.f_code.co_filename
            if _racelab.active() and _user_code(where):
                return _racelab.RLock(f"{kind} at {os.path.basename(where)}:{frame.f_lineno}",
                                      recursive)
            return real[kind](*args, **kwargs)
        return make

    threading.Lock = factory("Lock", False)
    threading.RLock = factory("RLock", True)


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
        setattr(mod, lk["attr"], _racelab.RLock(lk["name"], lk.get("recursive", True)))
    for b in table.get("blocking", []):
        mod = importlib.import_module(b["module"])
        orig = _original(mod, b["attr"])

        def wrapper(*args, _orig=orig, _b=b, **kwargs):
            served = _b.get("served_by", "").format(device=_device_of(args[0]) if args else "")
            with _racelab.blocking(_b["what"], served):
                return _orig(*args, **kwargs)

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
                _racelab.name_this_thread(
                    _pt["name_foreign"].format(current_device=current_device()))
            _racelab.point(_pt["label"])
            inside.add(_pt["label"])
            try:
                result = _orig(*args, **kwargs)
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


def run(script, argv, table, search_path):
    """One execution: fresh interposition, then the script as __main__ on this (controlled) thread."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    interpose(table)
    _wrap_dicts()  # dicts of modules already imported
    sys.argv = [script] + list(argv)
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:  # sys.exit(0) ends the script normally; any other status is a failure
        if e.code not in (None, 0):
            raise RuntimeError(f"the script exited with status {e.code}") from None


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

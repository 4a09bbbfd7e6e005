"""racelab's Python bridge (racelab live python), run inside the embedded interpreter
(src/live/python/bridge.cc calls its functions).

It holds the interposition table's application before each execution (its locks, blocking calls,
scheduling points, settings, resets and dict caches, one JSON file per torch version in
data/interpose/), the checks made before the first execution (the script compiles, the table's
modules import), the running of the script as __main__ (controlled, `run`, or uncontrolled,
`run_plain`), and every thread's Python stack for hang and crash reports. The threading layer
(controlled threads, racelab's lock, wait-for words, virtual time, exception classification) is
racelab_threads.py, loaded first.
"""
import functools
import importlib
import os
import runpy
import sys
import threading

import _racelab
import racelab_threads
from racelab_threads import (_Lock, _ProcessExit, _exception_frames, _exception_kinds,
                             _exception_text, _finding_of,
                             _note, _plain_failures, _plain_finding, _table_locks, _tls,
                             _vclock_offset)

_originals = {}  # (module, attr) -> the original object, kept across executions
_pending_dicts = []  # table "dicts" entries not wrapped yet in this execution


class _PointDict(dict):
    """A dict whose lookups and inserts are scheduling points (the user's compiled-kernel cache:
    a check-then-insert race lives between them)."""

    def __init__(self, name, *args):
        super().__init__(*args)
        self._racelab_name = name

    def __contains__(self, key):
        _racelab.point(f"lookup {self._racelab_name}", reads=[self._racelab_name])
        return super().__contains__(key)

    def __getitem__(self, key):
        _racelab.point(f"lookup {self._racelab_name}", reads=[self._racelab_name])
        return super().__getitem__(key)

    def get(self, key, default=None):
        _racelab.point(f"lookup {self._racelab_name}", reads=[self._racelab_name])
        return super().get(key, default)

    def __setitem__(self, key, value):
        _racelab.point(f"insert {self._racelab_name}", writes=[self._racelab_name])
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


def patch_threading():
    """Makes threading's threads and locks racelab's (racelab_threads.py), once per process."""
    racelab_threads.patch_threading(_wrap_dicts)


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
            # What the point stands for, for dpor (docs/live.md, "Proofs"): none declared, it is
            # ordered against every other point that declares none.
            _racelab.point(_pt["label"], _pt.get("reads", []), _pt.get("writes", []))
            inside.add(_pt["label"])
            try:
                result = _orig(*args, **kwargs)
            except Exception as e:
                _note(e)
                raise
            finally:
                inside.discard(_pt["label"])
            if _pt.get("end"):  # the call's end is a scheduling point too ("LABEL end")
                _racelab.point(_pt["label"] + " end", _pt.get("reads", []), _pt.get("writes", []))
            return result

        functools.update_wrapper(wrapper, orig)
        for target in [pt["module"]] + pt.get("aliases", []):
            setattr(importlib.import_module(target), pt["attr"], wrapper)
    # Last: a reset may take the locks just installed (torch._dynamo.reset takes compile_lock).
    for fn in table.get("reset", []):
        _resolve(fn)()


_process_setup_done = []


def process_setup(table):
    """The table's "process_setup" callables, once per process before the first execution, on the
    calling thread: the one that started the interpreter, which outlives every execution (each
    execution's main and the threads it starts end with it)."""
    if _process_setup_done:
        return
    _process_setup_done.append(True)
    for entry in table.get("process_setup", []):
        # skip_if: a callable whose true result makes the call needless on this machine.
        if entry.get("skip_if") and _resolve(entry["skip_if"])():
            continue
        _resolve(entry["call"])()


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


def versions(table, search_path):
    """The interpreter's version, and the __version__ of the module the table's "verified" names
    (torch, or the stand-in), for the check of its verified range (src/live/python/versions.h):
    {"python": "3.11.2", "torch": "2.11.0+cu130"} or, where that cannot be read, "torch_error"."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    found = {"python": "%d.%d.%d" % sys.version_info[:3]}
    module = table.get("verified", {}).get("version_of")
    if module:
        try:
            version = getattr(importlib.import_module(module), "__version__", None)
        except Exception as e:  # noqa: BLE001 - any import failure is the answer
            found["torch_error"] = f"{module} does not import: {type(e).__name__}: {e}"
        else:
            if isinstance(version, str) and version:
                found["torch"] = version
            else:
                found["torch_error"] = f"{module} has no __version__"
    return found


def environment():
    """What `racelab doctor` says of this interpreter: where its packages come from, and torch's
    version, CUDA build and devices (importing torch takes seconds)."""
    where = (f"virtual environment {sys.prefix}" if sys.prefix != sys.base_prefix
             else f"prefix {sys.prefix} (no virtual environment: --python ENV or $VIRTUAL_ENV "
                  f"names one)")
    found = {"where": where}
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is the answer
        found["torch_error"] = f"{type(e).__name__}: {e}"
        return found
    found["torch"] = str(torch.__version__)
    found["torch_path"] = os.path.dirname(torch.__file__)
    cuda = getattr(torch.version, "cuda", None)
    try:
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - a broken driver is "no device"
        count = 0
    found["cuda"] = (f"CUDA {cuda} build" if cuda else "CPU build") + \
        (f", {count} CUDA device(s)" if count else ", no CUDA device available")
    return found


def _main_names(script):
    """The names `script` binds at its top level (assignments, imports, functions, classes, and
    `global` declarations anywhere), or None where it may bind names in ways that cannot be read
    (a star import, globals(), vars(), setattr, exec), or does not parse."""
    import ast
    try:
        with open(script, "rb") as f:
            tree = ast.parse(f.read(), script)
    except (OSError, SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("globals", "vars", "setattr", "exec", "eval"):
            return None

    class TopLevel(ast.NodeVisitor):
        def visit_FunctionDef(self, node):  # its body binds its own locals
            names.add(node.name)

        visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

        def visit_Lambda(self, node):
            pass

        visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

        def visit_Name(self, node):
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.id)

        def visit_Import(self, node):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])

        def visit_ImportFrom(self, node):
            for a in node.names:
                names.add(a.asname or a.name)

        def visit_ExceptHandler(self, node):
            if node.name:
                names.add(node.name)
            self.generic_visit(node)

    TopLevel().visit(tree)
    return names


def _is_script(module, script):
    """Whether importing `module` would run the script itself (its own file by another name)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, "origin", None) if spec is not None else None
    return origin is not None and os.path.abspath(origin) == os.path.abspath(script)


_entry_nouns = {"locks": "lock", "blocking": "blocking call", "points": "scheduling point",
                "dicts": "dict", "settings": "setting"}


def check_entries(table, flags, search_path, script, table_name):
    """The first problem of the table's entries (the interposition table's and those the command
    line added, `flags`: [key, module, attr, the flag as given]), as one line naming the entry, or
    '' (checked before the first execution): a module that does not import, an attribute it does
    not have (a dict's: nor binds anywhere in its source), and entries of the script itself
    (__main__), which does not exist before the script runs: a dict of __main__ given on the
    command line must be bound at the script's top level (read from its source; a table's serves
    any script and is wrapped where it exists), and a lock, point or blocking call cannot be
    interposed there."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    given = {(k, m, a): text for k, m, a, text in flags}
    main_names = False  # not read yet

    def problem(key, entry, what):
        where = given.get((key, entry["module"], entry["attr"]))
        if where is None:
            where = (f"--interpose {table_name}: {key} entry "
                     f"{entry['module']}.{entry['attr']}")
        return f"{where}: {what}"

    def imports(module):
        try:
            return importlib.import_module(module), ""
        except Exception as e:  # noqa: BLE001 - any import failure is the answer
            return None, f"module {module} does not import ({type(e).__name__}: {e})"

    for key in ("locks", "blocking", "points", "dicts", "settings"):
        for entry in table.get(key, []):
            module, attr = entry["module"], entry["attr"]
            noun = _entry_nouns[key]
            if module == "__main__":
                # A table serves many scripts: its __main__ dict (the seed's kernel cache) is
                # wrapped where a script has it. The command line's names this script's.
                if key == "dicts" and (key, module, attr) not in given:
                    continue
                if key == "locks":
                    return problem(key, entry, "the script's own locks are racelab's already "
                                   "(every threading.Lock and RLock its code makes); --lock is "
                                   "for a lock of a module the script imports")
                if key != "dicts":
                    return problem(key, entry, f"the script's own module (__main__) does not exist "
                                   f"before the script runs, so a {noun} cannot be interposed "
                                   f"there; define it in a module the script imports")
                if main_names is False:
                    main_names = _main_names(script)
                if main_names is not None and attr not in main_names:
                    return problem(key, entry, f"the script ({os.path.basename(script)}) binds "
                                   f"no {attr} at its top level")
                continue
            if _is_script(module, script):
                continue  # importing it would run the script: it is checked as it runs
            mod, bad = imports(module)
            if mod is None:
                return problem(key, entry, bad)
            if not hasattr(mod, attr):
                # A dict is wrapped once it exists: one a function binds later (`global`) is fine.
                source = getattr(mod, "__file__", None)
                later = _main_names(source) if key == "dicts" and source else set()
                if later is not None and attr not in later:
                    return problem(key, entry, f"module {module} has no attribute {attr}")
            for alias in entry.get("aliases", []):
                if imports(alias)[0] is None:
                    return problem(key, entry, f"alias {imports(alias)[1]}")
    callables = [("reset", fn) for fn in table.get("reset", [])] + \
        [("process_setup", e.get("call", "")) for e in table.get("process_setup", [])] + \
        [("process_setup", e["skip_if"]) for e in table.get("process_setup", [])
         if e.get("skip_if")]
    for key, fn in callables:
        module, _, attr = fn.rpartition(".")
        mod, bad = imports(module)
        if mod is None or not hasattr(mod, attr):
            return (f"--interpose {table_name}: {key} entry {fn}: "
                    f"{bad or f'module {module} has no attribute {attr}'}")
    return ""


def _as_main_thread():
    """The script's main runs on a thread racelab made, which threading sees as a _DummyThread,
    a daemon: threads it starts would inherit daemon=True. Like the interpreter's main thread it is
    not a daemon, so they do not either (the interpreter waits for them at exit)."""
    threading.current_thread()._daemonic = False


def run(script, argv, table, search_path):
    """One execution: fresh interposition, then the script as __main__ on this (controlled) thread."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    _tls.name = "main"
    _as_main_thread()
    _vclock_offset[0] = 0.0
    # Unnamed threads are named from counters ("Thread-3", "ThreadPoolExecutor-0_1"): every
    # execution counts from the start, so that a schedule replays in a fresh process.
    import itertools
    import concurrent.futures.thread as cft
    threading._counter = itertools.count(1).__next__
    cft.ThreadPoolExecutor._counter = itertools.count().__next__
    # Threads and futures are numbered in each execution, for the orders that would otherwise
    # follow their addresses (racelab_threads.restart_order).
    racelab_threads.restart_order()
    racelab_threads.restart_exit()
    # ThreadPoolExecutor.submit holds this module lock while it starts a worker and queues the
    # work item (scheduling points): it must be racelab's, or a second submitter would wait for
    # it out of the scheduler's sight.
    cft._global_shutdown_lock = _Lock("concurrent.futures global shutdown lock", False, True)
    interpose(table)
    _wrap_dicts()  # dicts of modules already imported
    sys.argv = [script] + list(argv)
    main_globals = None
    try:
        main_globals = runpy.run_path(script, run_name="__main__")
    except _ProcessExit:
        return
    except SystemExit as e:  # sys.exit(0) ends the script normally; any other status is a failure
        if e.code not in (None, 0):
            raise RuntimeError(f"the script exited with status {e.code}") from None
    except Exception as e:
        if _racelab.stopping():
            raise
        found = _finding_of(e)
        if found is None:  # an exception that ends main ends the execution, as a failure
            frames = _exception_frames(e)
            _racelab.report("exception", _exception_text(e, "main", frames), True, frames)
            return
        _racelab.report(*found)
    # The interpreter's exit begins (os._exit skips it): threading's exit callbacks, with the
    # script's globals alive as __main__'s are until then (a module-level pool is not collected
    # first); then the execution ends once the non-daemon threads have (live.h).
    racelab_threads.at_exit()
    del main_globals


def run_plain(script, argv, table, search_path):
    """The script as __main__ on this thread, uncontrolled (`--uncontrolled`): its threads are
    real threads and its locks real locks. Ends as the interpreter's exit does (threading's exit
    callbacks, then a wait for its non-daemon threads; this thread, like the interpreter's main
    thread, is not a daemon, so neither are the threads it starts unless asked), and returns the
    failures [(kind, message)]: an exception that ended a thread (classified by the table's
    "exceptions"), or a failing exit status."""
    for p in reversed(search_path):
        if p not in sys.path:
            sys.path.insert(0, p)
    _exception_kinds[:] = [dict(c) for c in table.get("exceptions", [])]
    _plain_failures.clear()
    _as_main_thread()
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
    # The interpreter's exit (threading._shutdown): threading's exit callbacks (concurrent.futures
    # tells its pools' workers to exit), then the wait for the non-daemon threads.
    threading._SHUTTING_DOWN = True
    for call in reversed(list(threading._threading_atexits)):
        call()
    skip = (threading.current_thread(), threading.main_thread())  # racelab's own threads
    for t in threading.enumerate():
        if t not in skip and not t.daemon and t.is_alive() and \
                not isinstance(t, threading._DummyThread):  # a thread threading did not start
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

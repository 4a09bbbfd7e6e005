"""A pure-Python stand-in for torch 2.11's compile path (docs/facts.md F1-F5,
F10, F11).

racelab's Python bridge is tested with it where there is no GPU (CI). It has the structure that
deadlocks and crashes, with none of torch:

- F1: one process-wide re-entrant ``compile_lock`` (the bridge replaces it with racelab's);
- F3: one autograd worker thread per device, started with ``_thread`` (not ``threading``), so
  that, like LibTorch's C++ workers, it is a thread racelab did not create; callers hand work to
  it through ``_engine_run_backward`` and wait;
- F4: compiling the forward traces the joint graph, which calls ``autograd_grad`` on the device's
  worker while holding the lock;
- F10: that trace sets a process-wide "is FX tracing" flag (saved, set, restored in ``finally``,
  as ``Tracer.trace`` does), and every call of the compiled wrapper checks it first, before the
  guard check, the cache and the lock: while another thread traces, the call raises;
- F5: the cache is checked before the lock is taken, so a thread that waited compiles again;
- F2: a fixed entry's backward is compiled lazily, on the worker, under the same lock
  (``compile_fx_backward``);
- F6, F11: with ``dynamic=None`` (torch.compile's default) a compile for a second length on a
  device makes a *dynamic* entry that serves any length, and its backward is compiled ahead of
  time, on the compiling thread, still inside ``compile_lock``; with ``dynamic=False`` every
  length gets a fixed entry with a lazy backward.

Scheduling points (data/interpose/standin.json) sit where the model's rules (docs/model.md) have
steps, and the state other threads can see changes only at them as it does in the model: the
wrapper's entry (F10's check and F5's guard check, one step), the lock (whose holder then sets
the tracing flag), the trace's hand-off to the worker and its return (after which the flag is
restored), the cache write (``_install``, after a dynamic entry's backward compile), the unlock,
the backward's hand-off and the backward compile.

It says it is torch 2.11.0 (``__version__``, which racelab reads before the first execution to
check the table's "verified" range); ``RACELAB_STANDIN_TORCH_VERSION`` makes it say another
version, so that a run outside the range can be tested without another torch.
"""
import _thread
import collections
import os
import threading

__version__ = os.environ.get("RACELAB_STANDIN_TORCH_VERSION", "2.11.0")

compile_lock = threading.RLock()
# The code-object cache (F6): one list shared by every wrapper, newest entry first as Dynamo
# tries them. An entry: {"device", "length" (None: dynamic, any length), "backward": bool}.
_entries = []
compiles = collections.Counter()  # what was compiled how many times, for the script's checks
_is_fx_tracing_flag = False  # F10: process-wide in torch 2.11 (torch/fx/_symbolic_trace.py)
_workers = {}
_workers_lock = _thread.allocate_lock()
_tls = threading.local()

FX_TRACE_ERROR = ("Detected that you are using FX to symbolically trace a dynamo-optimized "
                  "function. This is not supported at the moment.")


class _Worker:
    def __init__(self, device):
        self.device = device
        self.jobs = collections.deque()
        self.cv = threading.Condition(_thread.allocate_lock())
        _thread.start_new_thread(self._loop, ())

    def _loop(self):
        _tls.device = self.device
        while True:
            with self.cv:
                while not self.jobs:
                    self.cv.wait()
                fn, box = self.jobs.popleft()
            try:
                box["result"] = fn()
            except BaseException as e:  # handed back to the caller
                box["error"] = e
            with self.cv:
                box["done"] = True
                self.cv.notify_all()

    def run(self, fn):
        box = {"done": False}
        with self.cv:
            self.jobs.append((fn, box))
            self.cv.notify_all()
            while not box["done"]:
                self.cv.wait()
        if "error" in box:
            raise box["error"]
        return box.get("result")


def _reset():
    """A cold cache for the next run (the bridge calls it before each execution); the device
    workers, like LibTorch's, live as long as the process. Like torch._dynamo.reset, it takes
    compile_lock."""
    global _is_fx_tracing_flag
    with compile_lock:
        _entries.clear()
        compiles.clear()
        _is_fx_tracing_flag = False


def current_device():
    """The device whose worker runs the calling thread ('cpu' elsewhere)."""
    return getattr(_tls, "device", "cpu")


def _worker(device):
    with _workers_lock:
        if device not in _workers:
            _workers[device] = _Worker(device)
        return _workers[device]


def _engine_run_backward(device, fn):
    """F3: the device's worker runs fn; the caller waits for it."""
    return _worker(device).run(fn)


def autograd_grad(device):
    """F4: autograd.grad, executed by the device's worker."""
    return _engine_run_backward(device, lambda: None)


def is_fx_tracing():
    return _is_fx_tracing_flag


def _set_fx_tracing(value):
    """F10: writes the process-wide flag; returns the value it had."""
    global _is_fx_tracing_flag
    saved, _is_fx_tracing_flag = _is_fx_tracing_flag, value
    return saved


def _trace_joint(device):
    """F4, F10: make_fx of the joint graph, as Tracer.trace sets the flag around it."""
    saved = _set_fx_tracing(True)
    try:
        autograd_grad(device)
    finally:
        _set_fx_tracing(saved)


def compile_fx_backward(device, entry):
    """F2, F11: the backward compile takes compile_lock (on the worker for a lazy backward, on the
    compiling thread, re-entering the lock, for a dynamic entry's backward)."""
    with compile_lock:
        compiles[("backward", device, entry["length"] or "dynamic")] += 1
        entry["backward"] = True


def _lookup(device, length):
    for e in _entries:
        if e["device"] == device and e["length"] in (length, None):
            return e
    return None


def _compile(device, length, dynamic):
    """A forward compile, inside compile_lock, without looking at the cache again (F5)."""
    _trace_joint(device)
    other_length = any(e["device"] == device and e["length"] != length for e in _entries)
    entry = {"device": device, "length": length, "backward": False}
    if dynamic is None and other_length:
        entry["length"] = None  # F6: automatic dynamic: the second length recompiles dynamic
    compiles[("forward", device, entry["length"] or "dynamic")] += 1
    if entry["length"] is None:
        compile_fx_backward(device, entry)  # F11: ahead of time, here, inside compile_lock
    _install(entry)
    return entry


def _install(entry):
    """The compiled entry goes into the cache (its backward, if compiled ahead of time, with it)."""
    _entries.insert(0, entry)


def flex_attention(device, length, dynamic=None):
    """The compiled wrapper: F10's check at its entry, before anything else; then F5's guard check
    against a snapshot of the cache, then F1's lock and the compile on a miss. Returns the entry
    that ran (what the output's backward uses)."""
    if is_fx_tracing():
        raise RuntimeError(FX_TRACE_ERROR)
    entry = _lookup(device, length)
    if entry is None:
        with compile_lock:
            entry = _compile(device, length, dynamic)
    return entry


def backward(device, entry):
    """loss.backward() of an output of `entry`: the worker runs it, compiling the entry's backward
    on first use if it has none yet (F2)."""
    def work():
        if not entry["backward"]:
            compile_fx_backward(device, entry)
    _engine_run_backward(device, work)

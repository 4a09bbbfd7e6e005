"""A pure-Python stand-in for torch 2.11's compile path (../shared/design/TORCH-FACTS.md F1-F5).

racelab's Python bridge is tested with it where there is no GPU (CI). It has the structure that
deadlocks, with none of torch:

- F1: one process-wide re-entrant ``compile_lock`` (the bridge replaces it with racelab's);
- F3: one autograd worker thread per device, started with ``_thread`` (not ``threading``), so
  that, like LibTorch's C++ workers, it is a thread racelab did not create; callers hand work to
  it through ``_engine_run_backward`` and wait;
- F4: compiling the forward calls ``autograd_grad`` on the device's worker while holding the lock;
- F2: the backward is compiled lazily, on the worker, under the same lock (``compile_fx_backward``);
- F5: the cache is checked before the lock is taken, so a thread that waited compiles again.
"""
import _thread
import collections
import threading

compile_lock = threading.RLock()
_compiled = {}  # (device, length) -> {"backward": bool}
compiles = collections.Counter()  # what was compiled how many times, for the script's checks
_workers = {}
_workers_lock = _thread.allocate_lock()
_tls = threading.local()


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
    with compile_lock:
        _compiled.clear()
        compiles.clear()


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


def compile_fx_backward(device, length):
    """F2: the lazy backward compile takes compile_lock (on the worker)."""
    with compile_lock:
        compiles[("backward", device, length)] += 1
        _compiled[(device, length)]["backward"] = True


def flex_attention(device, length):
    """The compiled forward: F5's guard check, then F1's lock and F4's trace on a miss."""
    entry = _compiled.get((device, length))
    if entry is None:
        with compile_lock:
            autograd_grad(device)
            compiles[("forward", device, length)] += 1
            _compiled[(device, length)] = {"backward": False}


def backward(device, length):
    """loss.backward(): the worker runs it, compiling the backward on first use."""
    def work():
        if not _compiled[(device, length)]["backward"]:
            compile_fx_backward(device, length)
    _engine_run_backward(device, work)

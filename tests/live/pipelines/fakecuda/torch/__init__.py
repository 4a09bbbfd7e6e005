"""A CPU-only fake of the slice of torch that racelab's allocator capture uses (racelab.py), for
tests without a GPU: a caching allocator that keeps freed blocks for reuse (exact size only; the
test scripts ask for sizes that never split) and records memory_viz trace events on the epoch
microsecond clock, memory_stats, optimizers with the global post-step hook, and torch.empty.

Sizes are multiples of 2 MiB above 10 MiB, so PyTorch's caching allocator (and racelab's model of
it) gives each request a segment of exactly its size: the capture's stats agree with the model."""
import sys
import _thread
import time
import traceback
import types

from . import optim  # noqa: F401  (torch.optim.optimizer)

_lock = _thread.allocate_lock()  # a C-level lock, as real torch has
# Frees a finalizer could not make at once (Tensor.__del__): cyclic GC may run a finalizer inside
# a section that holds _lock (an allocation), and _lock is not re-entrant. Whoever holds the lock
# makes them before releasing it (_locked).
_deferred = []
_recording = [False]
_context = [None]  # _record_memory_history's context: "alloc" or "all" record alloc stacks
_traces = {}  # device -> [event]
_segments = {}  # device -> {addr: [size, allocated?]}
_stats = {}  # device -> {"device_allocs", "allocated", "peak"}
_next_addr = [0x7F0000000000]
_last_us = [0]


def _now():
    t = max(time.time_ns() // 1000, _last_us[0] + 1)
    _last_us[0] = t
    return t


def _frames():
    """The Python stack as memory_viz lists it: innermost first, this fake's frames included (real
    torch's own Python frames are in real stacks too: the reader skips them)."""
    return [{"filename": f.filename, "line": f.lineno, "name": f.name}
            for f in reversed(traceback.extract_stack()[:-2])]


def _event(device, action, addr, size):
    if _recording[0]:
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": _now(),
             "compile_context": "N/A", "user_metadata": ""}
        if _context[0] in ("alloc", "all") and action in ("alloc", "segment_alloc"):
            e["frames"] = _frames()
        _traces.setdefault(device, []).append(e)


def _free_deferred():
    while _deferred:
        d, addr, nbytes = _deferred.pop(0)
        _event(d, "free_requested", addr, nbytes)
        _event(d, "free_completed", addr, nbytes)
        _segments[d][addr][1] = False
        _stats[d]["allocated"] -= nbytes


class _locked:
    """`with _locked():` holds _lock, making the deferred frees first and last."""

    def __enter__(self):
        _lock.acquire()
        _free_deferred()

    def __exit__(self, *exc):
        try:
            _free_deferred()
        finally:
            _lock.release()


class device:  # noqa: N801 - torch's name
    def __init__(self, spec):
        if isinstance(spec, device):
            self.type, self.index = spec.type, spec.index
            return
        text = str(spec)
        self.type, _, idx = text.partition(":")
        self.index = int(idx) if idx else (0 if self.type == "cuda" else None)

    def __str__(self):
        return f"{self.type}:{self.index}" if self.index is not None else self.type


class Tensor:
    def __init__(self, nbytes, dev):
        self.device = device(dev)
        self.nbytes = nbytes
        self.addr = None
        if self.device.type != "cuda":
            return
        d = self.device.index
        with _locked():
            segs = _segments.setdefault(d, {})
            st = _stats.setdefault(d, {"device_allocs": 0, "allocated": 0, "peak": 0})
            free = [a for a, (size, used) in segs.items() if not used and size == nbytes]
            if free:
                self.addr = min(free)
            else:
                self.addr = _next_addr[0]
                _next_addr[0] += nbytes + (2 << 20)
                segs[self.addr] = [nbytes, False]
                st["device_allocs"] += 1
                _event(d, "segment_alloc", self.addr, nbytes)
            segs[self.addr][1] = True
            st["allocated"] += nbytes
            st["peak"] = max(st["peak"], st["allocated"])
            _event(d, "alloc", self.addr, nbytes)

    def free(self):
        if self.addr is None:
            return
        d, addr = self.device.index, self.addr
        self.addr = None
        with _locked():
            _deferred.append((d, addr, self.nbytes))

    def __del__(self):
        # A finalizer may run inside a section that holds _lock (cyclic GC during an allocation,
        # on this thread): it never waits for _lock, it leaves the free to the holder.
        if self.addr is None:
            return
        _deferred.append((self.device.index, self.addr, self.nbytes))
        self.addr = None
        if _lock.acquire(blocking=False):
            try:
                _free_deferred()
            finally:
                _lock.release()


def empty(nbytes, device="cpu"):
    """A tensor of `nbytes` bytes (the fake counts bytes, not elements)."""
    return Tensor(nbytes, device)


def _memory_stats(dev=None):
    d = 0 if dev is None else (dev if isinstance(dev, int) else device(dev).index)
    with _locked():
        segs = _segments.get(d, {})
        st = _stats.get(d, {"device_allocs": 0, "allocated": 0, "peak": 0})
        return {"reserved_bytes.all.current": sum(s for s, _ in segs.values()),
                "allocated_bytes.all.current": st["allocated"],
                "segment.all.current": len(segs), "num_device_alloc": st["device_allocs"],
                "num_device_free": 0, "inactive_split_bytes.all.current": 0,
                "num_alloc_retries": 0, "allocated_bytes.all.peak": st["peak"]}


def _record(enabled="all", context="all", stacks="all", **kwargs):
    _recording[0] = enabled is not None
    _context[0] = context


def _snapshot():
    with _locked():
        n = max(list(_traces) + list(_segments) + [0]) + 1
        segments = []
        for d, segs in sorted(_segments.items()):
            for addr, (size, used) in sorted(segs.items()):
                segments.append({
                    "device": d, "address": addr, "total_size": size,
                    "allocated_size": size if used else 0, "active_size": size if used else 0,
                    "requested_size": size if used else 0, "stream": 0, "segment_type": "large",
                    "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                    "blocks": [{"address": addr, "size": size, "requested_size": size,
                                "state": "active_allocated" if used else "inactive",
                                "frames": []}]})
        return {"segments": segments,
                "device_traces": [list(_traces.get(d, [])) for d in range(n)],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                       "garbage_collection_threshold": 0.0,
                                       "expandable_segments": False},
                "external_annotations": []}


cuda = types.ModuleType("torch.cuda")
cuda.is_available = lambda: True
cuda.init = lambda: None
cuda.device_count = lambda: 2
cuda.memory_stats = _memory_stats
cuda.memory_reserved = lambda d=None: _memory_stats(d)["reserved_bytes.all.current"]
cuda.mem_get_info = lambda d=None: (80 << 30, 80 << 30)
cuda.memory = types.ModuleType("torch.cuda.memory")
cuda.memory._record_memory_history = _record
cuda.memory._snapshot = _snapshot
sys.modules["torch.cuda"] = cuda
sys.modules["torch.cuda.memory"] = cuda.memory

# The `racelab` module a script run by `racelab live python` can import (the bridge registers it in
# sys.modules; src/live/python/bridge.cc), and the allocator capture behind `--alloc DIR`.
#
#   import racelab
#   racelab.iteration()        # an iteration of the training loop ended (every device in use)
#   racelab.iteration("cuda:1")  # ... on that device
#
# Outside a capture, iteration() does nothing, so a script may call it unconditionally (a script
# that also runs under plain `python` guards the import: `try: import racelab` ...).
#
# The capture records the CUDA caching allocator's history from before the script's first
# allocation, on every device (torch.cuda.memory._record_memory_history is process-wide), and an
# iteration boundary on a device at each optimizer step (a global post-step hook; with one
# optimizer per drafter thread, each drafter's step ends an iteration of the device its
# parameters are on: a warmup's optimizer that steps once, or drafters taking unequal numbers of
# batches, leave nothing out) or at each racelab.iteration() marker: once the script calls one,
# the markers are the boundaries. At each boundary it notes torch.cuda.memory_stats(device) on the
# trace's clock (epoch microseconds, the clock of the trace's time_us), the thread that ended the
# iteration and the optimizer steps taken on the device in it: which optimizer (numbered in the
# order of first steps), from which thread (numbered likewise: names may repeat), and whether it
# was that optimizer's first step. From these `racelab alloc report` finds the warm phase (each
# optimizer's first step, the first step with all of the device's drafters running:
# src/alloc/warm_phase.h). At the end it writes, per device used, a memory_viz snapshot
# DIR/snap_<name>.cuda<k>.pickle (the segments and trace of that device only) and beside it
# DIR/stats_<name>.cuda<k>.json, which `racelab alloc report` finds by name (docs/allocator.md).
import json
import os
import pickle
import threading
import time
import weakref
import _thread

_capture = None  # the capture of this process, when --alloc asked for one
_STATS_VERSION = 2  # of "racelab-alloc-stats"; 2: rows name their thread and optimizer steps
_now_us = time.time_ns  # the real clock, whatever the bridge does to time later


def _clock_us():
    return _now_us() // 1000


class _Capture:
    def __init__(self, out_dir, name, max_entries):
        import torch  # the caller checked that it imports

        self.torch = torch
        self.dir = out_dir
        self.name = name
        self.lock = _thread.allocate_lock()  # a real lock: no scheduling point while held
        self.t0 = _clock_us()
        self.marker_rows = {}  # device -> rows closed by racelab.iteration()
        self.step_rows = {}  # device -> rows closed by optimizer steps
        self.pending_steps = {}  # device -> steps since its last marker row
        self.optimizers = _Numbers()  # optimizer -> its number, by first step
        self.threads = _Numbers()  # thread -> its number, by first step or marker
        self.stepped = set()  # (optimizer number, device) that took a step
        self.ended = None
        torch.cuda.init()
        # context="alloc", stacks="python": each allocation's Python frames (file, line,
        # function), the cheapest setting that names the line that grew memory (alloc report's
        # call sites); "all" would add stacks to frees, stacks="all" C++ frames.
        torch.cuda.memory._record_memory_history(max_entries=max_entries, context="alloc",
                                                 stacks="python")
        self.hook = None
        try:
            from torch.optim.optimizer import register_optimizer_step_post_hook
            self.hook = register_optimizer_step_post_hook(self._after_step)
        except (ImportError, AttributeError):
            pass

    # -- boundaries
    def _thread(self):
        t = threading.current_thread()
        # The script's main runs on a thread racelab made, a _DummyThread ("Dummy-1") to
        # threading, which the bridge marks as no daemon (racelab_bridge._as_main_thread).
        main = isinstance(t, threading._DummyThread) and not t.daemon
        return "main" if main else t.name, self.threads.number(t)

    def _row(self, device, rows, steps):
        st = self.torch.cuda.memory_stats(device)
        t_end = _clock_us()
        while _clock_us() <= t_end:  # what happens next falls after this boundary
            pass
        t_start = rows[-1]["t_end_us"] + 1 if rows else self.t0
        rows.append({
            "iter": len(rows), "t_start_us": t_start, "t_end_us": t_end,
            "reserved": st.get("reserved_bytes.all.current", 0),
            "allocated": st.get("allocated_bytes.all.current", 0),
            "segments": st.get("segment.all.current", 0),
            "device_allocs": st.get("num_device_alloc", 0),
            "device_frees": st.get("num_device_free", 0),
            "inactive_split_bytes": st.get("inactive_split_bytes.all.current", 0),
            "alloc_retries": st.get("num_alloc_retries", 0),
            "peak_allocated": st.get("allocated_bytes.all.peak", 0),
            "thread": self._thread()[0], "steps": steps})

    def _after_step(self, optimizer, args, kwargs):
        device = _cuda_index(optimizer)
        if device is None:
            return
        with self.lock:
            name, number = self._thread()
            k = self.optimizers.number(optimizer)
            step = {"optimizer": k, "class": type(optimizer).__name__, "thread": name,
                    "thread_number": number, "first": (k, device) not in self.stepped}
            self.stepped.add((k, device))
            self.pending_steps.setdefault(device, []).append(step)
            self._row(device, self.step_rows.setdefault(device, []), [step])

    def marker(self, device):
        with self.lock:
            if device is None:
                devices = [d for d in range(self.torch.cuda.device_count())
                           if self.torch.cuda.memory_reserved(d) > 0]
            else:
                devices = [self.torch.device(device).index if not isinstance(device, int)
                           else device]
                devices = [0 if d is None else d for d in devices]
            for d in devices:
                self._row(d, self.marker_rows.setdefault(d, []), self.pending_steps.pop(d, []))

    # -- the files
    def finish(self, ended):
        """Writes the snapshot and stats of every device used; returns one line per device."""
        with self.lock:
            if self.ended is not None:
                return []
            self.ended = ended
        torch = self.torch
        if self.hook is not None:
            self.hook.remove()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        traces = snap.get("device_traces", [])
        used = sorted({d for d, t in enumerate(traces) if t} |
                      {s["device"] for s in snap.get("segments", [])})
        os.makedirs(self.dir, exist_ok=True)
        lines = []
        for d in used:
            markers = bool(self.marker_rows)
            rows = (self.marker_rows if markers else self.step_rows).get(d, [])
            part = dict(snap)
            part["segments"] = [s for s in snap.get("segments", []) if s["device"] == d]
            part["device_traces"] = [t if k == d else [] for k, t in enumerate(traces)]
            stem = f"{self.name}.cuda{d}"
            pickle_path = os.path.join(self.dir, f"snap_{stem}.pickle")
            stats_path = os.path.join(self.dir, f"stats_{stem}.json")
            try:
                total = torch.cuda.mem_get_info(d)[1]
            except Exception:  # noqa: BLE001 - the total is informative only
                total = 0
            stats = {
                "format": "racelab-alloc-stats", "version": _STATS_VERSION, "device": d,
                "boundaries": "racelab.iteration()" if markers else "optimizer step",
                "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                "device_total_bytes": total, "capture_start_us": self.t0, "ended": ended,
                "events": len(traces[d]) if d < len(traces) else 0, "rows": rows}
            _write_atomic(pickle_path, pickle.dumps(part))
            _write_atomic(stats_path, json.dumps(stats, indent=1).encode() + b"\n")
            lines.append(f"cuda:{d}: {len(part['device_traces'][d])} allocator events, "
                         f"{len(rows)} iterations ({stats['boundaries']}): {pickle_path}, "
                         f"{stats_path}")
        if not used:
            lines.append("no CUDA allocation was made: nothing to write")
        return lines


class _Numbers:
    """Numbers objects in the order first seen, without keeping them alive (a number is never
    reused when its object dies, as an id() would be)."""

    def __init__(self):
        self.weak = weakref.WeakKeyDictionary()
        self.strong = {}  # objects that take no weak reference: id -> (number, object kept alive)
        self.count = 0

    def number(self, obj):
        try:
            n = self.weak.get(obj)
            if n is None:
                n = self.weak[obj] = self.count
                self.count += 1
            return n
        except TypeError:
            if id(obj) not in self.strong:
                self.strong[id(obj)] = (self.count, obj)
                self.count += 1
            return self.strong[id(obj)][0]


def _cuda_index(optimizer):
    for group in getattr(optimizer, "param_groups", []):
        for p in group.get("params", []):
            dev = getattr(p, "device", None)
            if dev is not None and getattr(dev, "type", None) == "cuda":
                return dev.index if dev.index is not None else 0
    return None


def _write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


# -- the API a script may call


def iteration(device=None):
    """Marks the end of a training iteration on `device` (an index, "cuda:k" or a torch.device;
    default: every device the script has allocated on) for racelab's allocator capture. Once a
    script calls it, these markers, not the optimizer steps, are the capture's iterations."""
    if _capture is not None and _capture.ended is None:
        _capture.marker(device)


def capturing():
    """True while `racelab live python --alloc` records this script's allocator history."""
    return _capture is not None and _capture.ended is None


# -- for the bridge


def start_capture(out_dir, name, max_entries=1000000):
    """'' once recording, else why not (torch missing, no CUDA device)."""
    global _capture
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any import failure is the answer
        return f"cannot import torch ({type(e).__name__}: {e})"
    if not torch.cuda.is_available():
        return "torch.cuda.is_available() is False: there is no CUDA allocator to record"
    _capture = _Capture(out_dir, name, max_entries)
    return ""


def finish_capture(ended):
    """Writes the capture (once); its lines for the terminal."""
    return _capture.finish(ended) if _capture is not None else []

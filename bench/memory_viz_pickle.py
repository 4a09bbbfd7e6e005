#!/usr/bin/env python3
"""Writes a memory_viz-shaped snapshot pickle of at least SIZE bytes with Python's own pickler.

The shape is what torch.cuda.memory._snapshot() returns after
_record_memory_history(context="alloc", stacks="python") (tests/data/alloc/train-queue-frames-h200):
a dict of 'segments', 'device_traces' (one list of event dicts per device), 'allocator_settings'
and 'external_annotations'; each event has action, addr, size, stream, time_us, compile_context,
user_metadata and frames. As torch builds it, a frame dict is one object shared by every stack
that holds the frame, each allocation's frames list is one object that its free_requested and
free_completed events hold too, and compile_context is a new str per event: the pickler writes
each of those once and memo references after (BINGET).

As torch does, the whole snapshot is built in memory and written by pickle.dump: about 440 bytes of
Python objects and 71 bytes of file an event, so a 1 GB file takes about 7 GB while it is written.

  memory_viz_pickle.py OUT SIZE_MB [--protocol 4|5] [--devices K] [--seed S]
"""
import argparse
import os
import pickle
import random


def frames_pool(rng):
    """Distinct frame dicts (one object per frame, as torch's symbolizer shares them)."""
    files = [f"/opt/torch/.venv/lib/python3.12/site-packages/torch/nn/modules/{m}.py"
             for m in ("module", "linear", "activation", "normalization", "sparse")]
    user = ["tools/pipelines/train_queue_torch.py", "tools/pipelines/drafter_torch.py"]
    pool = []
    for k in range(400):
        f = files[k % len(files)] if k % 3 else user[k % len(user)]
        pool.append({"name": f"fn_{k}", "filename": f, "line": 10 + 7 * k})
    return pool


def stacks(rng, pool, count):
    """Call sites: each a tuple of 6-12 shared frame dicts."""
    return [tuple(rng.sample(pool, rng.randint(6, 12))) for _ in range(count)]


class Trace:
    """One device's events, generated: a training loop whose iterations allocate activations and
    free most of them in reverse order (bench/alloc_scale.cc's loop), with frames."""

    def __init__(self, device, events, seed):
        self.device, self.events, self.seed = device, events, seed

    def __iter__(self):
        rng = random.Random(self.seed)
        sites = stacks(rng, frames_pool(rng), 64)
        stream = 0
        addr = 0x7F0000000000 + (self.device << 40)
        time = 1_796_396_516_819_808
        n = 0
        kept = []

        def event(action, a, size, frames):
            nonlocal time
            time += rng.randint(1, 40)
            return {"action": action, "addr": a, "size": size, "stream": stream, "time_us": time,
                    "compile_context": "N/" + "A"[:1], "user_metadata": "", "frames": frames}

        while n < self.events:
            seq = 512 + 64 * rng.randrange(57)
            step = []
            for k in range(rng.randint(20, 39)):
                if n >= self.events:
                    break
                size = seq * (8192 if k % 5 == 0 else 256 if k % 3 == 0 else 4096) + 512 * rng.randrange(4)
                frames = list(sites[(k * 7 + seq) % len(sites)])  # one list per allocation
                yield event("alloc", addr, size, frames)
                n += 1
                step.append((addr, size, frames))
                addr += 1 << 20
            for a, size, frames in reversed(step):
                if n + 2 > self.events:
                    break
                if rng.randrange(16) == 0:
                    kept.append((a, size, frames))
                    continue
                yield event("free_requested", a, size, frames)
                yield event("free_completed", a, size, frames)
                n += 2
            while len(kept) > 8 and n + 2 <= self.events:
                a, size, frames = kept.pop(0)
                yield event("free_requested", a, size, frames)
                yield event("free_completed", a, size, frames)
                n += 2


def snapshot(devices, events_per_device, seed):
    return {
        "segments": [],
        "device_traces": [list(Trace(d, events_per_device, seed + d)) for d in range(devices)],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "garbage_collection_threshold": 0.0, "expandable_segments": False,
                               "roundup_power2_divisions": {str(1 << k): 0 for k in range(16)}},
        "external_annotations": [],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("size_mb", type=float)
    p.add_argument("--protocol", type=int, default=5, choices=(4, 5))
    p.add_argument("--devices", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    # About 74 bytes an event: a little over SIZE_MB MiB.
    per_device = int(a.size_mb * 2**20 / 72 / a.devices) + 1
    snap = snapshot(a.devices, per_device, a.seed)
    with open(a.out + ".tmp", "wb") as f:
        pickle.dump(snap, f, protocol=a.protocol)
        size = f.tell()
    os.replace(a.out + ".tmp", a.out)
    print(f"wrote {a.out}: {size} bytes, protocol {a.protocol}, {a.devices} devices x {per_device} events")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Drive PyTorch's CUDA caching allocator through synthetic sequences, one rule of racelab's model
each, and record each with _record_memory_history, for the conformance table in
docs/allocator.md (tools/gpu/alloc-conformance-h200.sh runs them on the H200; racelab then
replays each recorded history and predicts each non-default run from the default one with
`alloc whatif`).

  PYTORCH_CUDA_ALLOC_CONF=CONF python3 sequences.py --sequence NAME --config-name TAG --out DIR
  python3 sequences.py --list                    # the sequences and the settings each runs under
  python3 sequences.py --overhead --out DIR      # the cost of recording frames (alloc/free pairs)

Each run is one process (the allocator reads PYTORCH_CUDA_ALLOC_CONF once), recording from an
empty allocator, and writes DIR/snap_<sequence>__<tag>.pickle and DIR/real_<sequence>__<tag>.json
(torch.cuda.memory_stats at the end, the snapshot's segment count, the settings).

The sequences ask for sizes by bytes (uint8 tensors); every tensor is freed by `del` at a fixed
point, so a sequence is the same list of requests on every run. On a machine without CUDA,
`--dry-run` prints each sequence's requests instead (the list is checked on CPU before a device
call)."""
import argparse
import json
import os
import pickle
import sys
import time

MiB = 1 << 20
KiB = 1 << 10

# name -> (what it exercises, the non-default settings it also runs under, memory fraction)
SEQUENCES = {
    "pools_rounding": ("small (<= 1 MiB) and large pools, 512-byte rounding, 2 MiB small segments, "
                       "20 MiB segments below 10 MiB, 2 MiB rounding above",
                       ["roundup_power2_divisions:4"], 0.0),
    "small_split": ("small pool: splitting while >= 512 bytes remain, new 2 MiB segments when the "
                    "holes are too small", ["expandable_segments:True"], 0.0),
    "large_split": ("large pool: splitting only when more than 1 MiB remains, reuse of the "
                    "remainder", ["max_split_size_mb:32"], 0.0),
    "no_merge": ("free neighbours merge inside a segment, never across segments",
                 ["expandable_segments:True"], 0.0),
    "oversize": ("max_split_size_mb: requests below it never take a block at or above it; an "
                 "oversize request takes an oversize block only within 20 MiB",
                 ["max_split_size_mb:64"], 0.0),
    "expandable": ("expandable segments: pages mapped at the lowest address that fits, one "
                   "reservation per stream and pool", ["expandable_segments:True"], 0.0),
    "gc": ("garbage_collection_threshold with a memory fraction: aged cached blocks released "
           "before cudaMalloc", ["garbage_collection_threshold:0.5"], 0.0028),
    "streams": ("blocks belong to their stream; a block used on another stream is freed when "
                "that use completes (free_requested, later free_completed)",
                ["expandable_segments:True"], 0.0),
    "placement": ("where cudaMalloc puts a segment decides best fit's tie between equal blocks: "
                  "a 20 MiB segment in the rest of a 40 MiB one's 64 MiB range, above it, so a "
                  "10 MiB request splits the 40 MiB segment and a 32 MiB one needs a third; then "
                  "small segments about a new stream", ["roundup_power2_divisions:4"], 0.0),
    "mixed": ("a seeded random mix of 3000 allocations and frees from 256 bytes to 96 MiB on two "
              "streams", ["expandable_segments:True", "max_split_size_mb:64",
                          "roundup_power2_divisions:4",
                          "max_split_size_mb:64,roundup_power2_divisions:[256:1,512:2,>:8]"], 0.0),
}


def tag_of(conf):
    """A file-name tag for a PYTORCH_CUDA_ALLOC_CONF text ('default' for none)."""
    if not conf:
        return "default"
    out = conf
    for a, b in (("expandable_segments:True", "es"), ("max_split_size_mb:", "ms"),
                 ("roundup_power2_divisions:", "r"), ("garbage_collection_threshold:", "gc"),
                 (",", "_"), (":", "-"), ("[", ""), ("]", ""), (">", "gt"), (".", "")):
        out = out.replace(a, b)
    return out


class Driver:
    """Requests go through here: on CUDA a uint8 tensor of `size` bytes, in --dry-run a line."""

    def __init__(self, torch, dry):
        self.torch = torch
        self.dry = dry
        self.live = {}
        self.n = 0
        self.streams = {}

    def stream(self, k):
        if self.dry or k == 0:
            return None
        if k not in self.streams:
            self.streams[k] = self.torch.cuda.Stream()
        return self.streams[k]

    def alloc(self, name, size, stream=0):
        self.n += 1
        if self.dry:
            print(f"alloc {name} {size} stream {stream}")
            self.live[name] = size
            return
        s = self.stream(stream)
        if s is None:
            self.live[name] = self.torch.empty(size, dtype=self.torch.uint8, device="cuda")
        else:
            with self.torch.cuda.stream(s):
                self.live[name] = self.torch.empty(size, dtype=self.torch.uint8, device="cuda")

    def free(self, name):
        if self.dry:
            print(f"free {name}")
        del self.live[name]

    def use_on(self, name, stream):
        """The tensor is used on another stream (record_stream): its free completes later."""
        if self.dry:
            print(f"use {name} on stream {stream}")
            return
        s = self.stream(stream)
        t = self.live[name]
        with self.torch.cuda.stream(s):
            t.add_(1)
        t.record_stream(s)

    def sync(self):
        if not self.dry:
            self.torch.cuda.synchronize()


def pools_rounding(d):
    sizes = [1, 511, 512, 513, 4 * KiB, MiB - 1, MiB, MiB + 1, MiB + MiB // 2, 9 * MiB,
             10 * MiB - 1, 10 * MiB, 10 * MiB + 1, 11 * MiB, 23 * MiB, 33 * MiB + 5,
             3 * MiB + 300 * KiB, 5 * MiB + 100 * KiB, 70 * MiB + 7]
    for k, s in enumerate(sizes):
        d.alloc(f"t{k}", s)
    for k in range(0, len(sizes), 2):
        d.free(f"t{k}")
    for k, s in enumerate(sizes[::-1]):
        d.alloc(f"u{k}", s)
    for k in range(1, len(sizes), 2):
        d.free(f"t{k}")
    for k in range(len(sizes)):
        d.free(f"u{k}")


def small_split(d):
    for k in range(100):  # 64 KiB x 100: 32 per 2 MiB segment
        d.alloc(f"a{k}", 64 * KiB)
    for k in range(0, 100, 2):
        d.free(f"a{k}")
    for k in range(20):  # 128 KiB fits no 64 KiB hole: the rest of the 4th segment, then new ones
        d.alloc(f"b{k}", 128 * KiB)
    for k in range(30):  # splits leaving >= 512 bytes, and exact fits
        d.alloc(f"c{k}", 64 * KiB - 512 * (k % 3))
    for k in range(1, 100, 2):
        d.free(f"a{k}")
    d.alloc("big_small", MiB)  # the largest small request
    for k in range(20):
        d.free(f"b{k}")
    for k in range(30):
        d.free(f"c{k}")
    d.free("big_small")


def large_split(d):
    d.alloc("a", 18 * MiB)          # a 20 MiB segment, 2 MiB remain (> 1 MiB): split
    d.alloc("b", MiB + MiB // 2)    # takes the 2 MiB remainder, 0.5 MiB remains: no split
    d.alloc("c", 19 * MiB + MiB // 2)  # a new 20 MiB segment, 0.5 MiB remains: no split
    d.free("a")
    d.alloc("d", 6 * MiB)           # into a's 18 MiB block: 12 MiB remain, split
    d.alloc("e", 11 * MiB)          # the 12 MiB remainder: 1 MiB remains, not more than 1 MiB
    d.free("c")
    d.alloc("f", 4 * MiB)           # best fit: the 19.5-MiB-requested block (20 MiB), split
    d.alloc("g", 40 * MiB)          # a 40 MiB segment
    d.free("g")
    d.alloc("h", 30 * MiB)          # splits the 40 MiB block (unless max_split_size forbids)
    d.alloc("i", 9 * MiB)
    for n in ("b", "d", "e", "f", "h", "i"):
        d.free(n)


def no_merge(d):
    d.alloc("a", 12 * MiB)
    d.alloc("b", 12 * MiB)
    d.free("a")
    d.free("b")
    d.alloc("c", 22 * MiB)   # 24 MiB free in two segments: a new segment
    for k in range(4):
        d.alloc(f"p{k}", 4 * MiB)  # a 20 MiB segment split in four (and a 4 MiB tail)
    d.free("p1")
    d.free("p2")             # p1 and p2 merge: 8 MiB
    d.alloc("q", 8 * MiB)    # fits the merged block: no new segment
    d.free("c")
    d.free("q")
    d.alloc("r", 30 * MiB)   # 22 + 8 + ... free, in different segments: a new segment
    for n in ("p0", "p3", "r"):
        d.free(n)


def oversize(d):
    d.alloc("a", 100 * MiB)
    d.alloc("b", 80 * MiB)
    d.free("a")
    d.free("b")
    d.alloc("c", 60 * MiB)   # default: splits b's 80 MiB; max_split 64: a new segment
    d.alloc("d", 90 * MiB)   # 100 MiB block: within 90 + 20 MiB, taken whole
    d.free("c")
    d.alloc("e", 70 * MiB)   # oversize request: 80 MiB block within 70 + 20
    d.alloc("f", 30 * MiB)
    d.free("d")
    d.free("e")
    d.alloc("g", 65 * MiB)   # the 80 MiB block is within 20 MiB, the 100 MiB one is not
    for n in ("f", "g"):
        d.free(n)


def expandable(d):
    d.alloc("a", 30 * MiB)
    d.alloc("b", 50 * MiB)
    d.alloc("s1", 100 * KiB)
    d.free("a")
    d.alloc("c", 70 * MiB)
    d.alloc("d", 8 * MiB)
    d.alloc("s2", 700 * KiB)
    d.free("b")
    d.alloc("e", 45 * MiB)
    d.free("c")
    d.alloc("f", 3 * MiB, stream=1)
    d.sync()
    for n in ("d", "e", "f", "s1", "s2"):
        d.free(n)
    d.alloc("g", 120 * MiB)
    d.free("g")


def gc(d):
    # A fraction of 0.0028 allows about 400 MiB; the threshold 0.5 collects above about 200.
    for r in range(3):
        d.alloc(f"a{r}", 100 * MiB)
        d.free(f"a{r}")
        d.alloc(f"b{r}", 120 * MiB)
        d.free(f"b{r}")
        d.alloc(f"c{r}", 140 * MiB)
        d.alloc(f"s{r}", 30 * MiB)
        d.free(f"c{r}")
        d.free(f"s{r}")


def streams(d):
    d.alloc("a", 4 * MiB, stream=1)
    d.free("a")
    d.alloc("b", 4 * MiB, stream=2)  # a's block belongs to stream 1: a new segment
    d.alloc("c", 4 * MiB, stream=1)  # a's block again
    d.alloc("x", 6 * MiB)            # default stream
    d.use_on("x", 1)
    d.free("x")                      # free requested; completes once stream 1 is done
    d.sync()
    d.alloc("y", 6 * MiB)            # processes the completed free first: reuses x's block
    d.alloc("k", 300 * KiB, stream=2)
    d.free("k")
    d.alloc("m", 300 * KiB, stream=1)
    for n in ("b", "c", "y", "m"):
        d.free(n)


def placement(d):
    # docs/allocator.md, Conformance: the driver puts a new segment in the lowest free range that
    # holds it, else in a new range of whole 32 MiB units below every earlier one. Every size is
    # on a step of roundup_power2_divisions:4, so both runs make the same requests.
    d.alloc("x", 40 * MiB)   # a 64 MiB range, 24 MiB free above the segment
    d.alloc("y", 20 * MiB)   # a second segment, in those 24 MiB: above x's
    d.free("x")
    d.alloc("a", 20 * MiB)   # splits x's segment: 20 MiB free at its end
    d.free("y")              # two free 20 MiB blocks; x's is the lower
    d.alloc("b", 10 * MiB)   # best fit's tie: the lower block, in x's segment
    d.free("a")              # no merge with b between: 20 + 10 free there, 20 in y's
    d.alloc("c", 32 * MiB)   # no block of 32 MiB: a third segment (y's below x's: none)
    d.alloc("s0", 300 * KiB)             # a small segment, then one made with a new stream,
    d.alloc("s1", 300 * KiB, stream=1)   # and one after it: where do they go?
    d.alloc("s2", 1 * MiB)
    d.alloc("s3", 1 * MiB)
    d.sync()
    for n in ("b", "c", "s0", "s1", "s2", "s3"):
        d.free(n)


def mixed(d):
    state = 12345  # a fixed LCG: the same requests on every run
    live = []

    def rnd():
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return state >> 33

    for k in range(3000):
        if live and (rnd() % 100) < 45:
            name = live.pop(rnd() % len(live))
            d.free(name)
            continue
        exp = 8 + rnd() % 19  # 256 B .. 64 MiB, log-uniform
        size = (1 << exp) + rnd() % (1 << exp)
        size = min(size, 96 * MiB)
        stream = 1 if rnd() % 10 == 0 else 0
        name = f"m{k}"
        d.alloc(name, size, stream)
        live.append(name)
    d.sync()
    for name in live:
        d.free(name)


FUNCTIONS = {"pools_rounding": pools_rounding, "small_split": small_split,
             "large_split": large_split, "no_merge": no_merge, "oversize": oversize,
             "expandable": expandable, "gc": gc, "streams": streams, "placement": placement,
             "mixed": mixed}


def record(args):
    import torch

    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    _, _, fraction = SEQUENCES[args.sequence]
    torch.cuda.init()
    if fraction > 0:
        torch.cuda.set_per_process_memory_fraction(fraction, 0)
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, context=None, stacks="python")
    d = Driver(torch, False)
    FUNCTIONS[args.sequence](d)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    st = torch.cuda.memory_stats(0)
    tag = tag_of(conf)
    base = os.path.join(args.out, f"{args.sequence}__{tag}")
    with open(os.path.join(args.out, f"snap_{args.sequence}__{tag}.pickle"), "wb") as f:
        pickle.dump(snap, f, protocol=4)
    real = {"sequence": args.sequence, "config": conf, "memory_fraction": fraction,
            "requests": d.n, "reserved": st["reserved_bytes.all.current"],
            "peak_reserved": st["reserved_bytes.all.peak"],
            "segments_stat": st["segment.all.current"],
            "snapshot_segments": len(snap["segments"]),
            "device_allocs": st["num_device_alloc"], "device_frees": st["num_device_free"],
            "retries": st["num_alloc_retries"], "torch": torch.__version__,
            "total_memory": torch.cuda.get_device_properties(0).total_memory}
    with open(os.path.join(args.out, f"real_{args.sequence}__{tag}.json"), "w") as f:
        json.dump(real, f, indent=1)
    print(json.dumps(real))
    del base


def overhead(args):
    """Seconds per 20000 alloc/free pairs (1 MiB, from a warm cache) with recording off, with
    context=None, with context="alloc", stacks="python" (racelab's capture) and with the default
    context="all", stacks="all"; the median of 5 runs each."""
    import torch

    torch.cuda.init()
    x = torch.empty(MiB, dtype=torch.uint8, device="cuda")
    del x
    settings = [("off", None), ("context=None", dict(context=None, stacks="python")),
                ("context=alloc,stacks=python", dict(context="alloc", stacks="python")),
                ("context=all,stacks=all", dict(context="all", stacks="all"))]
    out = {}

    def inner(depth):  # a few Python frames above the allocation, as a model's forward has
        if depth:
            return inner(depth - 1)
        for _ in range(20000):
            t = torch.empty(MiB, dtype=torch.uint8, device="cuda")
            del t

    for name, kw in settings:
        times = []
        for _ in range(5):
            if kw is not None:
                torch.cuda.memory._record_memory_history(max_entries=100_000, **kw)
            t0 = time.perf_counter()
            inner(8)
            times.append(time.perf_counter() - t0)
            if kw is not None:
                torch.cuda.memory._record_memory_history(enabled=None)
        out[name] = sorted(times)[2]
    base = out["off"]
    res = {k: {"seconds": v, "us_per_pair": v / 20000 * 1e6, "vs_off": v / base}
           for k, v in out.items()}
    with open(os.path.join(args.out, "overhead.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sequence", choices=sorted(SEQUENCES))
    p.add_argument("--out", default=".")
    p.add_argument("--list", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--overhead", action="store_true")
    args = p.parse_args()
    if args.list:
        for name, (what, confs, fraction) in SEQUENCES.items():
            for conf in [""] + confs:
                print(f"{name}\t{conf}\t{fraction}")
        return
    if args.overhead:
        overhead(args)
        return
    if not args.sequence:
        p.error("--sequence, --list or --overhead")
    if args.dry_run:
        d = Driver(None, True)
        FUNCTIONS[args.sequence](d)
        if d.live:
            sys.exit(f"{args.sequence}: {len(d.live)} tensors left: {sorted(d.live)[:5]}")
        return
    record(args)


if __name__ == "__main__":
    main()

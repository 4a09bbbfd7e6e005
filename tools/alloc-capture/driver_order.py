#!/usr/bin/env python3
"""Where cudaMalloc put each segment, against the rule racelab's what-if gives synthetic segments
(CachingAllocator::driver_address, docs/allocator.md, Conformance): a new segment goes to the lowest
free range that holds it, at its start; with none, to a new range of whole 32 MiB units, 32 MiB
aligned, below every earlier range, at its start, the rest of the range left free; a freed
segment's range is free again.

Best fit breaks ties between free blocks of one stream and size by address, so what a what-if needs
right is the order of segments of one size. For every trace without expandable segments this counts
the pairs of same-size segments the rule orders otherwise than the real addresses do.

  driver_order.py SNAPSHOT.pickle|DIR... [--max-inverted N]

(a DIR: its snap_*.pickle)

Exit 1 when more than N pairs (all files together) are inverted."""
import argparse
import glob
import itertools
import os
import pickle
import sys

MiB = 1 << 20
UNIT = 32 * MiB


class Driver:
    def __init__(self, top=0x7F0000000000):
        self.low = top
        self.free = []  # [start, end), kept sorted and merged

    def _release(self, start, end):
        self.free.append([start, end])
        self.free.sort()
        merged = []
        for r in self.free:
            if merged and merged[-1][1] == r[0]:
                merged[-1][1] = r[1]
            else:
                merged.append(r)
        self.free = merged

    def alloc(self, size):
        for r in self.free:  # the lowest range that holds it
            if r[1] - r[0] >= size:
                a = r[0]
                r[0] += size
                if r[0] == r[1]:
                    self.free.remove(r)
                return a
        span = -(-size // UNIT) * UNIT
        a = self.low - span  # both 32 MiB aligned
        if size < span:
            self._release(a + size, a + span)
        self.low = a
        return a

    def release(self, addr, size):
        self._release(addr, addr + size)


def check(trace):
    """(inverted pairs, same-size pairs, segments, the inverted pairs as (i, j, MiB))"""
    driver = Driver()
    live = {}
    segs = []  # (size, real address, rule's address)
    for e in trace:
        if e["action"] == "segment_alloc":
            a = driver.alloc(e["size"])
            live[e["addr"]] = (a, e["size"])
            segs.append((e["size"], e["addr"], a))
        elif e["action"] == "segment_free" and e["addr"] in live:
            driver.release(*live.pop(e["addr"]))
    inverted, pairs = [], 0
    for (i, (si, ri, mi)), (j, (sj, rj, mj)) in itertools.combinations(enumerate(segs), 2):
        if si != sj:
            continue
        pairs += 1
        if (ri < rj) != (mi < mj):
            inverted.append((i, j, si // MiB))
    return len(inverted), pairs, len(segs), inverted


def main():
    p = argparse.ArgumentParser()
    p.add_argument("snapshots", nargs="+")
    p.add_argument("--max-inverted", type=int)
    a = p.parse_args()
    total_inverted = total_pairs = 0
    paths = []
    for s in a.snapshots:
        paths += sorted(glob.glob(os.path.join(s, "snap_*.pickle"))) if os.path.isdir(s) else [s]
    for path in paths:
        with open(path, "rb") as f:
            snap = pickle.load(f)
        for dev, trace in enumerate(snap["device_traces"]):
            if not any(e["action"] == "segment_alloc" for e in trace):
                continue
            if any(e["action"] == "segment_map" for e in trace):
                continue  # expandable segments: one reservation per stream and pool
            n, pairs, segs, inverted = check(trace)
            total_inverted += n
            total_pairs += pairs
            detail = "; ".join(f"segments {i} and {j} ({s} MiB)" for i, j, s in inverted[:5])
            print(f"{os.path.basename(path)} device {dev}: {segs} segments, {pairs} same-size "
                  f"pairs, {n} ordered otherwise{': ' + detail if detail else ''}")
    print(f"{total_inverted} of {total_pairs} same-size pairs ordered otherwise than the driver did")
    if a.max_inverted is not None and total_inverted > a.max_inverted:
        sys.exit(1)


if __name__ == "__main__":
    main()

"""A pipeline written the way users write them, one loader thread per shard, the shards named by
a set of strings (for tests/live/check_cpython.py). A set of strings iterates in the order of the
strings' hashes, which CPython seeds at random in every process unless PYTHONHASHSEED fixes the
seed: racelab's interpreter fixes it, so the loaders start in the same order in every process
and a schedule replays in a fresh one.

    named_shards.py                every loader counts its shard's records: clean
    named_shards.py --first train  main checks that the train shard was loaded first: an
                                   AssertionError in the interleavings where another was
    named_shards.py --print-hash   also prints hash("racelab"), to compare with python3's
"""
import sys
import threading

SHARDS = {"train", "valid", "test", "holdout", "calibration", "smoke", "extra", "dev"}
counts = {}
loaded = []
lock = threading.Lock()


def load(shard):
    records = len(shard) * 100
    with lock:
        counts[shard] = records
        loaded.append(shard)


if "--print-hash" in sys.argv:
    print(f"hash: {hash('racelab')}")
loaders = [threading.Thread(target=load, args=(s,), name=f"load {s}") for s in SHARDS]
for t in loaders:
    t.start()
for t in loaders:
    t.join()
assert len(counts) == len(SHARDS)
if "--first" in sys.argv:
    want = sys.argv[sys.argv.index("--first") + 1]
    if loaded[0] != want:
        raise AssertionError(f"{loaded[0]} was loaded first, not {want}")

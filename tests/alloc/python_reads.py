"""Python's own unpickler reads what racelab writes, and gets the snapshot it started from.

Usage: python3 python_reads.py RACELAB_BIN SNAPSHOT.pickle WORKDIR
"""
import pickle
import subprocess
import sys

racelab, source, work = sys.argv[1:4]
subprocess.run([racelab, "alloc", "convert", source, f"{work}/converted.pickle"], check=True)
subprocess.run([racelab, "alloc", "replay", source, "--out", work], check=True, stdout=subprocess.DEVNULL)
with open(source, "rb") as f:
    original = pickle.load(f)
with open(f"{work}/converted.pickle", "rb") as f:
    converted = pickle.load(f)
with open(f"{work}/replay.pickle", "rb") as f:
    replayed = pickle.load(f)
assert converted == original, "converted snapshot differs from the source"
assert replayed["segments"] == [
    {**s, "frames": [], "blocks": [{**b, "frames": []} for b in s["blocks"]]} for s in original["segments"]
], "replayed final segments differ from the real ones"
strip = lambda t: [(e["action"], e["addr"], e["size"], e["stream"]) for e in t]
assert strip(replayed["device_traces"][0]) == strip(original["device_traces"][0]), "replayed trace differs"
assert set(replayed) == set(original)
print("python reads racelab's pickles: converted == source; replay segments and trace == source")

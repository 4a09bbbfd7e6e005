"""Snapshots Python's pickler writes at protocols 4 and 5 (bench/memory_viz_pickle.py: torch's shape,
frames memoised as torch's are) read the same with the tree reader and the streaming one, and a
truncated or corrupted one is a single line on stderr and exit 2, with nothing written.

Usage: python3 check_pickle_stream.py RACELAB RACELAB_PICKLE_READ SOURCE_DIR WORKDIR
"""
import os
import pickletools
import subprocess
import sys

racelab, reader, source, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
generator = os.path.join(source, "bench", "memory_viz_pickle.py")


def digests(path):
    out = {}
    for kind in ("tree", "stream"):
        r = subprocess.run([reader, kind, path], capture_output=True, text=True, check=True)
        words = r.stdout.split()
        out[kind] = (words[words.index("events") + 1], words[words.index("trace") + 2],
                     words[words.index("replay") + 2])
    return out


for protocol in (4, 5):
    path = os.path.join(work, f"snap_p{protocol}.pickle")
    subprocess.run([sys.executable, generator, path, "0.4", "--protocol", str(protocol)],
                   check=True, stdout=subprocess.DEVNULL)
    with open(path, "rb") as f:
        assert f.read(2) == bytes([0x80, protocol]), "not the protocol asked for"
    d = digests(path)
    assert d["tree"] == d["stream"], f"protocol {protocol}: {d}"
    assert int(d["tree"][0]) > 5000, d

data = open(os.path.join(work, "snap_p5.pickle"), "rb").read()
# An opcode well inside the device traces, replaced by one that no pickle has.
op_at = [pos for _, _, pos in pickletools.genops(data)][len(data) // 200]
bad = os.path.join(work, "bad.pickle")
for name, content in [("truncated", data[: len(data) // 2]), ("cut at the end", data[:-1]),
                      ("corrupted", data[:op_at] + b"\xff" + data[op_at + 1:])]:
    with open(bad, "wb") as f:
        f.write(content)
    out = os.path.join(work, "out-" + name.replace(" ", "-"))
    r = subprocess.run([racelab, "alloc", "replay", bad, "--out", out], capture_output=True, text=True)
    assert r.returncode == 2, f"{name}: exit {r.returncode}: {r.stderr}"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "bad.pickle: byte " in lines[0], f"{name}: {r.stderr!r}"
    assert not os.path.exists(out) or not os.listdir(out), f"{name}: wrote {os.listdir(out)}"
print("protocols 4 and 5: tree and stream agree; truncated and corrupted: one line, exit 2")

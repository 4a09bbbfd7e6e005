"""A recorded snapshot (frames memoised as torch's are) written again at pickle protocol 5 by both of
this Python's picklers, the C one and the pure-Python one, with what a snapshot can hold added: every
opcode a protocol-5 pickler writes for those types is in the files (checked), and racelab reads them
as Python does, with the tree reader (`alloc convert`) and the streaming one (`alloc replay`).

Python 3.14 made protocol 5 its default and added no opcode: protocol 5's own opcodes are
BYTEARRAY8 (a bytearray, read as bytes) and NEXT_BUFFER / READONLY_BUFFER (out-of-band buffers,
which a file cannot carry: both readers refuse them in one line, exit 2).

Usage: python3 check_protocol5.py RACELAB SNAPSHOT.pickle WORKDIR
"""
import os
import pickle
import pickletools
import subprocess
import sys

racelab, source, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
with open(source, "rb") as f:
    snap = pickle.load(f)

# What torch's snapshots can hold beyond the recording: a string of 64 KiB and more (written outside
# any frame), bytes short and long, a bytearray, a tuple of more than three items, True, False,
# None, negative and large integers (up to 64 bits, as the reader takes), and more than 256 memoised strings (LONG_BINGET).
extra = {
    "long_text": "x" * (70 * 1024),
    "short_bytes": b"\x00\x01",
    "long_bytes": bytes(range(256)) * 300,
    "buffer": bytearray(b"bytearray"),
    "tuple": (1, -2, 300, 70000, 2**40, -(2**40)),
    "flags": [True, False, None],
    "names": [f"name{i}" for i in range(300)] * 2,
}
snap["allocator_settings"] = {**snap.get("allocator_settings", {}), "racelab_protocol5": extra}
events = snap["device_traces"][0]
events[0] = {**events[0], "user_metadata": "m" * (66 * 1024)}

required = {"PROTO", "FRAME", "MEMOIZE", "SHORT_BINUNICODE", "BINUNICODE", "BINGET", "LONG_BINGET",
            "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "APPENDS", "APPEND", "BININT1",
            "BININT2", "BININT", "LONG1", "BINFLOAT", "NEWTRUE", "NEWFALSE", "NONE", "TUPLE",
            "TUPLE2", "SHORT_BINBYTES", "BINBYTES", "BYTEARRAY8", "STOP"}

for name, pickler in (("c", pickle.Pickler), ("python", pickle._Pickler)):
    path = os.path.join(work, f"snap_p5_{name}.pickle")
    with open(path, "wb") as f:
        pickler(f, protocol=5).dump(snap)
    data = open(path, "rb").read()
    assert data[:2] == b"\x80\x05", "not protocol 5"
    used = {op.name for op, _, _ in pickletools.genops(data)}
    assert required <= used, f"{name}: missing {sorted(required - used)}"

    # The tree reader: converted back to a pickle, Python reads what it wrote.
    converted = os.path.join(work, f"converted_{name}.pickle")
    subprocess.run([racelab, "alloc", "convert", path, converted], check=True)
    with open(converted, "rb") as f:
        assert pickle.load(f) == snap, f"{name}: convert changed the snapshot"

    # The streaming reader: every allocation replays at its real address, and the trace is the
    # source's.
    out = os.path.join(work, f"replay_{name}")
    r = subprocess.run([racelab, "alloc", "replay", "--compare", path, "--out", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"{name}: replay exit {r.returncode}: {r.stdout[-400:]} {r.stderr}"
    with open(os.path.join(out, "replay.pickle"), "rb") as f:
        replayed = pickle.load(f)
    strip = lambda t: [(e["action"], e["addr"], e["size"], e["stream"]) for e in t]
    assert strip(replayed["device_traces"][0]) == strip(events), f"{name}: replayed trace differs"

# Out-of-band buffers: the pickler writes NEXT_BUFFER (and READONLY_BUFFER for a read-only one)
# and keeps the data; no file can hold it.
for readonly in (False, True):
    buf = pickle.PickleBuffer(b"data" if readonly else bytearray(b"data"))
    data = pickle.dumps({"segments": [], "device_traces": [[{"buffer": buf}]]}, protocol=5,
                        buffer_callback=lambda b: False)
    names = [op.name for op, _, _ in pickletools.genops(data)]
    assert "NEXT_BUFFER" in names and ("READONLY_BUFFER" in names) == readonly, names
    bad = os.path.join(work, "out_of_band.pickle")
    with open(bad, "wb") as f:
        f.write(data)
    for cmd in (["convert", bad, os.path.join(work, "oob.json")], ["replay", bad]):
        r = subprocess.run([racelab, "alloc"] + cmd, capture_output=True, text=True)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and "out_of_band.pickle: byte " in lines[0], \
            f"{cmd[0]} readonly={readonly}: exit {r.returncode}: {r.stderr!r}"
    assert not os.path.exists(os.path.join(work, "oob.json"))
print("protocol 5 from the C and Python picklers: every opcode present, tree and stream read it as "
      "Python does; out-of-band buffers: one line, exit 2")

#!/usr/bin/env python3
"""The allocator conformance table: racelab's model against PyTorch's allocator driven on purpose
(tools/alloc-capture/sequences.py, recorded on the H200 by tools/gpu/alloc-conformance-h200.sh).

For every recorded run (snap_<sequence>__<tag>.pickle with real_<sequence>__<tag>.json beside it):
  replay   racelab alloc replay --compare: every allocation at the real address, every segment
           event identical, and the model's final reserved bytes and segment count (as the
           snapshot lists them: mapped ranges with expandable segments) equal to the real ones;
  whatif   for each non-default run, racelab alloc whatif from the same sequence's default run
           with --config <its settings>: the predicted final reserved bytes, peak reserved and
           segment count against the real run's.

  conformance.py RACELAB DIR [--markdown FILE] [--json FILE] [--known-different ROW ...]

Exit 0 when every row is equal, or differs exactly where --known-different names it (a row's name
is '<sequence> replay <tag>' or '<sequence> whatif default -> <tag>'); 1 otherwise (a known
difference that became equal counts too: the list must be kept true)."""
import argparse
import glob
import json
import os
import pickle
import subprocess
import sys
import tempfile


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def fraction_args(real):
    f = real.get("memory_fraction", 0.0)
    return ["--memory-fraction", repr(f)] if f else []


def replay_row(racelab, snap, real, tmp):
    out = os.path.join(tmp, "replay-" + os.path.basename(snap))
    r = run([racelab, "alloc", "replay", "--compare", snap, "--out", out] + fraction_args(real))
    agreement = next((l for l in r.stdout.splitlines() if l.startswith("allocations:")),
                     r.stderr.strip())
    model = {"reserved": None, "peak_reserved": None, "segments": None, "device_allocs": None}
    if os.path.exists(os.path.join(out, "replay.json")):
        dev = json.load(open(os.path.join(out, "replay.json")))["devices"][0]
        ms = dev["memory_stats"]
        model["reserved"] = ms["reserved_bytes.all.current"]
        model["peak_reserved"] = ms["reserved_bytes.all.peak"]
        model["device_allocs"] = ms["num_device_alloc"]
        model["segments"] = len(pickle.load(open(os.path.join(out, "replay.pickle"), "rb"))["segments"])
    return {"compare_exit": r.returncode, "agreement": agreement, "model": model}


def whatif_row(racelab, default_snap, real_default, conf, tmp, tag):
    out = os.path.join(tmp, "whatif-" + tag)
    r = run([racelab, "alloc", "whatif", default_snap, "--config", conf, "--out", out] +
            fraction_args(real_default))
    model = {"reserved": None, "peak_reserved": None, "segments": None, "device_allocs": None}
    path = os.path.join(out, "whatif.json")
    if r.returncode == 0 and os.path.exists(path):
        line = json.load(open(path))["devices"][0]["settings"][1]
        model = {"reserved": line["final_reserved"], "peak_reserved": line["peak_reserved"],
                 "segments": line["segments"], "device_allocs": line["device_allocs"]}
    return {"exit": r.returncode, "model": model, "stderr": r.stderr.strip()}


def mib(b):
    return "?" if b is None else f"{b / 1048576:.0f} MiB"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("racelab")
    p.add_argument("dir")
    p.add_argument("--markdown")
    p.add_argument("--json")
    p.add_argument("--known-different", nargs="*", default=[])
    a = p.parse_args()
    reals = {}
    for path in sorted(glob.glob(os.path.join(a.dir, "real_*.json"))):
        real = json.load(open(path))
        tag = os.path.basename(path)[len("real_"):-len(".json")].split("__", 1)[1]
        reals.setdefault(real["sequence"], {})[tag] = (real, path.replace("real_", "snap_")
                                                      .replace(".json", ".pickle"))
    if not reals:
        sys.exit(f"{a.dir}: no real_*.json")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seq, runs in reals.items():
            for tag, (real, snap) in sorted(runs.items(), key=lambda x: (x[0] != "default", x[0])):
                rr = replay_row(a.racelab, snap, real, tmp)
                m = rr["model"]
                equal = (rr["compare_exit"] == 0 and m["reserved"] == real["reserved"] and
                         m["peak_reserved"] == real["peak_reserved"] and
                         m["segments"] == real["snapshot_segments"] and
                         m["device_allocs"] == real["device_allocs"])
                rows.append({"name": f"{seq} replay {tag}", "sequence": seq, "kind": "replay",
                             "config": real["config"] or "(defaults)", "real": real, "model": m,
                             "detail": rr["agreement"], "equal": equal})
            if "default" not in runs:
                continue
            real_default, snap_default = runs["default"]
            for tag, (real, _) in sorted(runs.items()):
                if tag == "default":
                    continue
                w = whatif_row(a.racelab, snap_default, real_default, real["config"], tmp, tag)
                m = w["model"]
                equal = (w["exit"] == 0 and m["reserved"] == real["reserved"] and
                         m["peak_reserved"] == real["peak_reserved"] and
                         m["segments"] == real["snapshot_segments"])
                rows.append({"name": f"{seq} whatif default -> {tag}", "sequence": seq,
                             "kind": "whatif", "config": real["config"], "real": real, "model": m,
                             "detail": w["stderr"], "equal": equal})
    lines = ["| sequence | run | settings | real: reserved, peak, segments | model | equal? |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        real, m = r["real"], r["model"]
        run_name = "replay" if r["kind"] == "replay" else "whatif from default"
        lines.append(
            f"| {r['sequence']} | {run_name} | `{r['config']}` | {mib(real['reserved'])}, "
            f"{mib(real['peak_reserved'])}, {real['snapshot_segments']} | {mib(m['reserved'])}, "
            f"{mib(m['peak_reserved'])}, {m['segments']} | {'yes' if r['equal'] else '**no**'} |")
    table = "\n".join(lines)
    print(table)
    for r in rows:
        if r["kind"] == "replay":
            print(f"{r['name']}: {r['detail']}")
    if a.markdown:
        open(a.markdown, "w").write(table + "\n")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)
    different = sorted(r["name"] for r in rows if not r["equal"])
    equal_rows = sum(r["equal"] for r in rows)
    print(f"{equal_rows}/{len(rows)} rows equal")
    if different != sorted(a.known_different):
        print(f"rows that differ: {different}; expected: {sorted(a.known_different)}")
        sys.exit(1)


if __name__ == "__main__":
    main()

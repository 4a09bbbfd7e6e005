#!/usr/bin/env python3
"""Growth attributed to code, end to end on CPU: growth_sites.py on the fake torch of
tests/live/pipelines/fakecuda, recorded with `live python --uncontrolled --alloc` (which records
each allocation's Python frames), then `alloc report --settle 1`:

- iteration 4: one allocation went to the device, a 20 MiB request that found 24 MiB free in two
  12 MiB segments (fragmentation), from grow_fragmented's line;
- iteration 7: three, the two 32 MiB ones on fragmentation (44 MiB free, the largest 20 MiB) from
  bigger's line (one call site, count 2), the 64 MiB one with too little cached from largest's;
- the same trace without frames still reports, and says that frames would name the lines;
- alloc diff of the stable run (--mode stable) and the growing one names the growing run and its
  call sites; racelab check with both as variants explains the one that did not settle with it.
Usage: check_attribution.py RACELAB SOURCE_DIR
"""
import json
import os
import pickle
import subprocess
import sys
import tempfile

racelab, src = sys.argv[1], sys.argv[2]
fake = os.path.join(src, "tests", "live", "pipelines", "fakecuda")
script = os.path.join(src, "tests", "alloc", "growth_sites.py")
env = dict(os.environ, PYTHONPATH=fake)
MiB = 1 << 20
failures = []


def run(args):
    return subprocess.run([racelab] + args, capture_output=True, text=True, env=env, timeout=300)


def check(what, got, want):
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


# The line of each '# site: NAME' comment of the script.
lines = {}
for n, text in enumerate(open(script), 1):
    if "# site: " in text:
        lines[text.split("# site: ")[1].strip()] = n


def site(name):
    return f"alloc/growth_sites.py:{lines[name]} in {name}"


with tempfile.TemporaryDirectory() as tmp:
    r = run(["live", "python", "--uncontrolled", "--interpose", "none", "--alloc", f"{tmp}/alloc",
             "--out", f"{tmp}/out", script])
    if r.returncode == 2 and "without the Python bridge" in r.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)
    if r.returncode != 0:
        print(f"live python --alloc exited {r.returncode}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    snap = f"{tmp}/alloc/snap_growth_sites.cuda0.pickle"
    r = run(["alloc", "report", snap, "--settle", "1", "--out", f"{tmp}/report"])
    print(r.stdout, r.stderr)
    check("exit (not stable)", r.returncode, 0)
    rep = json.load(open(f"{tmp}/report/alloc-report.json"))["reports"][0]
    check("frames", rep["frames"], True)
    check("stability", rep["stability"], "unstable")
    growth = {g["label"]: g for g in rep["growth"] if not g["warm"]}
    check("growth after the warm phase", sorted(growth), ["4", "7"])
    if sorted(growth) == ["4", "7"]:
        g4, g7 = growth["4"], growth["7"]
        check("4: allocations", [(a["requested"], a["why"], a["free_bytes"], a["free_segments"],
                                  a["largest_free"], a["device_alloc_size"])
                                 for a in g4["allocations"]],
              [(20 * MiB, "fragmentation", 24 * MiB, 2, 12 * MiB, 20 * MiB)])
        check("4: call sites", [(s["where"], s["count"], s["bytes"]) for s in g4["call_sites"]],
              [(site("grow_fragmented"), 1, 20 * MiB)])
        check("7: allocations", [(a["requested"], a["why"], a["free_bytes"], a["largest_free"])
                                 for a in g7["allocations"]],
              [(32 * MiB, "fragmentation", 44 * MiB, 20 * MiB),
               (32 * MiB, "fragmentation", 44 * MiB, 20 * MiB),
               (64 * MiB, "cache too small", 44 * MiB, 20 * MiB)])
        check("7: call sites", [(s["where"], s["count"], s["bytes"]) for s in g7["call_sites"]],
              [(site("bigger"), 2, 64 * MiB), (site("largest"), 1, 64 * MiB)])
        check("7: caller of bigger", g7["call_sites"][0]["callers"][:1],
              ["alloc/growth_sites.py:{} in <module>".format(
                  next(n for n, t in enumerate(open(script), 1) if "bigger(), bigger()" in t))])
    for want in (f"call site: {site('bigger')} (2 allocations, 64.00 MiB)",
                 "growth at iteration 4: 1 allocation went to the device, 1 on fragmentation",
                 "alloc of 20.00 MiB (large pool, stream 0): no free block of 20.00 MiB; 24.00 MiB "
                 "free in 2 blocks across 2 segments, the largest 12.00 MiB: fragmentation"):
        if want not in r.stdout:
            failures.append(f"report output lacks {want!r}")
    html = open(f"{tmp}/report/report.html").read()
    if 'href="#growth-growth_sites.cuda0-7"' not in html or \
            'id="growth-growth_sites.cuda0-7"' not in html:
        failures.append("report.html: the growth dot of iteration 7 does not link to its call sites")

    # Without frames (a capture with context=None): the same verdict, and the hint.
    data = pickle.load(open(snap, "rb"))
    for trace in data["device_traces"]:
        for e in trace:
            e.pop("frames", None)
    bare = f"{tmp}/alloc/snap_bare.pickle"
    pickle.dump(data, open(bare, "wb"), protocol=4)
    stats = f"{tmp}/alloc/stats_growth_sites.cuda0.json"
    r = run(["alloc", "report", bare, "--iterations", stats, "--settle", "1"])
    check("no frames: exit", r.returncode, 0)
    if "the trace recorded no frames" not in r.stdout or "not stable" not in r.stdout:
        failures.append(f"no frames: expected the verdict and the hint, got\n{r.stdout}{r.stderr}")

    # alloc diff: a stable run against the growing one.
    r = run(["live", "python", "--uncontrolled", "--interpose", "none", "--alloc",
             f"{tmp}/stable", "--out", f"{tmp}/stable-out", script, "--", "--mode", "stable"])
    check("stable capture: exit", r.returncode, 0)
    stable = f"{tmp}/stable/snap_growth_sites.cuda0.pickle"
    r = run(["alloc", "diff", stable, snap, "--settle", "1", "--out", f"{tmp}/diff"])
    print(r.stdout, r.stderr)
    check("diff: exit", r.returncode, 0)
    d = json.load(open(f"{tmp}/diff/alloc-diff.json")) if os.path.exists(
        f"{tmp}/diff/alloc-diff.json") else {}
    check("diff: grew", d.get("grew"), "B growth_sites.cuda0")
    summary = d.get("summary", "")
    for want in ("B growth_sites.cuda0 grew against A growth_sites.cuda0",
                 "it grew after its warm phase at 4, 7",
                 f"from {site('bigger')} (2 allocations), {site('largest')} (1 allocation), "
                 f"{site('grow_fragmented')} (1 allocation)"):
        if want not in summary:
            failures.append(f"diff summary lacks {want!r}: {summary!r}")
    # Same requests from the same lines in both: the sites differ in no count, only the segments
    # (the stable run's first iteration holds everything at once).
    r = run(["alloc", "diff", snap, "--from", "3", "--to", "7", "--settle", "1", "--out",
             f"{tmp}/diff-iter"])
    check("diff --from --to: exit", r.returncode, 0)
    di = json.load(open(f"{tmp}/diff-iter/alloc-diff.json")) if os.path.exists(
        f"{tmp}/diff-iter/alloc-diff.json") else {}
    check("diff 3 -> 7: sites", [(s["where"], s["count_a"], s["count_b"])
                                  for s in di.get("call_sites", [])],
          [(site("bigger"), 0, 2), (site("largest"), 0, 1), (site("grow_fragmented"), 0, 1)])
    check("diff 3 -> 7: large pool added", di.get("pools", [{}])[0].get("added"),
          [20 * MiB, 32 * MiB, 32 * MiB, 64 * MiB])

    # racelab check: the variant that did not settle, explained against the one that did.
    r = run(["check", "--interpose", "none", "--executions", "2", "--settle", "1", "--out",
             f"{tmp}/check", "--variant", "--mode stable", "--variant", "--mode grow", script])
    j = json.load(open(f"{tmp}/check/check.json")) if os.path.exists(
        f"{tmp}/check/check.json") else {"variants": [{}, {}]}
    mem = j["variants"][1].get("memory", {})
    check("check: exit", r.returncode, 1)
    check("check: against", mem.get("against"), "--mode stable")
    if not any("grew against" in line and site("bigger") in line
               for line in mem.get("explanation", [])):
        failures.append(f"check: no explanation naming bigger's line: {mem.get('explanation')}"
                        f"\n{r.stdout}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("attribution: exact on the fake allocator")

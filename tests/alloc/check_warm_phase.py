#!/usr/bin/env python3
"""The warm phase from racelab's own capture, end to end on CPU: the fake torch of
tests/live/pipelines/fakecuda, driven by drafters_pipeline.py (two drafters on cuda:0, AdamW, a
sequential warmup by main, then both at once), recorded with `live python --uncontrolled --alloc`:

- the stats JSON (version 2) names each iteration's thread and optimizer steps;
- alloc report: stable from iteration 2 (the first step with both drafters running), with the warm
  phase 0-5 found from the capture and its growth explained; --expect stable holds (exit 0);
- a new shape after the warm phase is not stable, however flat the rest (exit 1 with --expect);
- one step per drafter is "not measured": exit 0 without --expect, inconclusive (exit 1, a JUnit
  failure of type inconclusive) with it; --settle K stays the user's override;
- racelab check and a suite job with [live] alloc use the same rule: check passes a not-measured
  variant (not a failure), the suite calls it INCONCLUSIVE.
Usage: check_warm_phase.py RACELAB SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

racelab, src = sys.argv[1], sys.argv[2]
fake = os.path.join(src, "tests", "live", "pipelines", "fakecuda")
script = os.path.join(src, "tests", "alloc", "drafters_pipeline.py")
env = dict(os.environ, PYTHONPATH=fake)
failures = []


def run(args, env=env):
    return subprocess.run([racelab] + args, capture_output=True, text=True, env=env, timeout=300)


def capture(tmp, name, args):
    r = run(["live", "python", "--uncontrolled", "--interpose", "none", "--alloc",
             f"{tmp}/{name}/alloc", "--out", f"{tmp}/{name}/out", script, "--"] + args)
    if r.returncode != 0:
        failures.append(f"{name}: live python --alloc exited {r.returncode}\n{r.stdout}{r.stderr}")
    return f"{tmp}/{name}/alloc/snap_drafters_pipeline.cuda0.pickle"


def report(snap, extra=()):
    out = os.path.dirname(snap) + "-report" + str(len(extra))
    r = run(["alloc", "report", snap, "--out", out] + list(extra))
    j = json.load(open(os.path.join(out, "alloc-report.json")))["reports"][0] \
        if os.path.exists(os.path.join(out, "alloc-report.json")) else {}
    return r, j


with tempfile.TemporaryDirectory() as tmp:
    probe = run(["live", "python", "--interpose", "none", "--uncontrolled", "--out", f"{tmp}/probe",
                 script, "--", "--drafters", "1", "--steps", "1"], env=dict(os.environ))
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    # 1. The two-drafter pipeline settles in its warm phase.
    snap = capture(tmp, "settles", ["--steps", "6"])
    stats = json.load(open(snap.replace("snap_", "stats_").replace(".pickle", ".json")))
    rows = stats["rows"]
    if stats["version"] != 2 or len(rows) != 14:
        failures.append(f"stats: version {stats['version']}, {len(rows)} rows (expected 2, 14)")
    firsts = [(r["thread"], s["first"]) for r in rows for s in r["steps"]]
    if firsts[:2] != [("main", True), ("main", True)] or any(f for _, f in firsts[2:]) or \
            {t for t, _ in firsts[2:]} != {"drafter 0.0", "drafter 0.1"}:
        failures.append(f"stats: threads and first steps {firsts}")
    r, j = report(snap)
    segments = [row["segments"] for row in j.get("rows", [])]
    if segments != [5, 7] + [8] * 12:
        failures.append(f"segments per iteration {segments}, expected 5, 7, then 8")
    if r.returncode != 0 or j.get("stability") != "stable" or j.get("stable_from") != 2 or \
            j["warm_phase"]["source"] != "capture" or j["warm_phase"]["iterations"] != 6 or \
            not j["verdict"].startswith("stable from iteration 2: no device allocation in the 8 "
                                        "iterations after the warm phase (iterations 0-5)") or \
            "1: first step of optimizer 1 (AdamW, thread main)" not in j["verdict"] or \
            "2: the 2 drafters starting" not in j["verdict"]:
        failures.append(f"the settling pipeline: exit {r.returncode}, {j.get('verdict')}\n{r.stdout}")
    r = run(["alloc", "report", snap, "--expect", "stable"])
    if r.returncode != 0 or "expectation (stable) holds" not in r.stdout or \
            "warm phase: iterations 0-5 (from the capture" not in r.stdout:
        failures.append(f"--expect stable on the settling pipeline: exit {r.returncode}\n{r.stdout}")
    # The user's override: --settle 1 counts the drafters' growth again.
    r, j = report(snap, ["--settle", "1"])
    if j.get("stability") != "unstable" or j.get("growth_at") != ["1", "2"]:
        failures.append(f"--settle 1: {j.get('verdict')}")

    # 2. A new shape after the warm phase: not stable, named, whatever follows.
    snap = capture(tmp, "late", ["--steps", "6", "--late-grow"])
    r, j = report(snap)
    if j.get("stability") != "unstable" or len(j.get("growth_at", [])) != 1 or \
            int(j["growth_at"][0]) < 6 or "a larger working set" not in j["verdict"]:
        failures.append(f"the late growth: {j.get('verdict')}")
    r = run(["alloc", "report", snap, "--expect", "stable"])
    if r.returncode != 1 or "does not hold" not in r.stdout:
        failures.append(f"--expect stable on the late growth: exit {r.returncode}\n{r.stdout}")

    # 3. One step per drafter: the run ends in its warm phase, not measured.
    snap = capture(tmp, "short", ["--steps", "1"])
    r, j = report(snap)
    if r.returncode != 0 or j.get("stability") != "not_measured" or not j["verdict"].startswith(
            "not measured: too few iterations after the warm phase"):
        failures.append(f"the short run: exit {r.returncode}, {j.get('verdict')}")
    r = run(["alloc", "report", snap, "--expect", "stable", "--junit", f"{tmp}/short.xml"])
    fails = ET.parse(f"{tmp}/short.xml").getroot().findall(".//failure")
    if r.returncode != 1 or "inconclusive" not in r.stdout or "does not hold" in r.stdout or \
            [f.get("type") for f in fails] != ["inconclusive"]:
        failures.append(f"--expect stable on the short run: exit {r.returncode}\n{r.stdout}")

    # 4. racelab check and a suite job judge by the same rule.
    # (check's default dpor proof runs too: 64 executions. It once reached a self-deadlock in the
    # fake torch, a finalizer's free() taking the C lock the allocation it interrupted held; the
    # fake now leaves such a free to the lock's holder.)
    r = run(["check", "--interpose", "none", "--executions", "2", "--out", f"{tmp}/check",
             "--variant", "--steps 6", "--variant", "--steps 1", script])
    j = json.load(open(f"{tmp}/check/check.json")) if os.path.exists(f"{tmp}/check/check.json") \
        else {"variants": []}
    got = [(v["passed"], v["memory"]["verdict"]) for v in j["variants"]]
    summaries = [v["memory"]["summary"] for v in j["variants"]]
    if r.returncode != 0 or got != [(True, "stable"), (True, "not_measured")] or \
            not summaries[0].startswith("stable from iteration 2"):
        failures.append(f"check: exit {r.returncode}, {got}, {summaries}\n{r.stdout}{r.stderr}")
    jobs = os.path.join(tmp, "jobs")
    os.makedirs(jobs)
    for name, args in (("settles", '["--steps", "6"]'), ("short", '["--steps", "1"]')):
        open(os.path.join(jobs, name + ".toml"), "w").write(f"""name = "{name}"
[live]
script = "{script}"
args = {args}
interpose = "none"
python_path = ["{fake}"]
executions = 2
alloc = "stable"
[expect]
must_not = ["deadlock", "exception"]
""")
    r = run(["suite", jobs, "--out", f"{tmp}/jobs-out"], env=dict(os.environ))
    summary = json.load(open(f"{tmp}/jobs-out/summary.json"))
    got = {e["scenario"]: (e["verdict"], e.get("memory")) for e in summary["scenarios"]}
    if r.returncode != 1 or got != {"settles": ("pass", "stable"),
                                    "short": ("inconclusive", "not_measured")}:
        failures.append(f"suite allocator jobs: exit {r.returncode}, {got}\n{r.stdout}{r.stderr}")

if failures:
    sys.exit("\n".join(failures))
print("warm phase from the capture: alloc report, check and suite agree")

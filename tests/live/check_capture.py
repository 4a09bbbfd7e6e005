#!/usr/bin/env python3
"""The allocator capture, alloc report as a CI job, and racelab check, on CPU: a fake torch
(tests/live/pipelines/fakecuda) whose caching allocator records memory_viz events, driven by a
user-style loop (tests/live/pipelines/alloc_loop.py) with known iteration boundaries:

- `live python --alloc` (uncontrolled and under control, optimizer steps and racelab.iteration()
  markers) writes one snapshot and stats JSON per device whose iterations hold exactly the events
  of each loop iteration: the parameter and first activation in iteration 0, then one new segment
  per iteration when the activation grows, none when it does not;
- `alloc report --expect stable|unstable` exits 1 where the traces are not so and --junit writes a
  failure per such trace; --junit without --expect is refused (exit 2, one line);
- `racelab check` puts variants side by side: the stable loop passes, the growing one fails on
  memory; a stand-in compile race fails its variant while the sequential warmup passes;
- a scenario's [live] alloc = "stable" makes `racelab suite` run an allocator-stability job.
Usage: check_capture.py RACELAB SOURCE_DIR
"""
import glob, json, os, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

racelab, src = sys.argv[1], sys.argv[2]
pipelines = os.path.join(src, "tests", "live", "pipelines")
loop = os.path.join(pipelines, "alloc_loop.py")
env = dict(os.environ, PYTHONPATH=os.path.join(pipelines, "fakecuda"))
failures = []


def run(args, **kw):
    return subprocess.run([racelab] + args, capture_output=True, text=True, env=kw.pop("env", env),
                          timeout=kw.pop("timeout", 300), **kw)


def rows_of(report_dir):
    j = json.load(open(os.path.join(report_dir, "alloc-report.json")))
    return {r["name"]: r for r in j["reports"]}


with tempfile.TemporaryDirectory() as tmp:
    probe = run(["live", "python", "--interpose", "none", "--uncontrolled", "--out",
                 f"{tmp}/probe", os.path.join(pipelines, "primitives.py"), "--", "rlock"])
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    # 1. Capture: every mode gives the same, known iterations.
    modes = {
        "uncontrolled": ["--uncontrolled"],
        "controlled": ["--executions", "2", "--strategy", "random"],
    }
    for mode, flags in modes.items():
        for extra in ([], ["--markers"], ["--queue"]):
            for grow in (True, False):
                name = f"{mode}{''.join(extra)}{'-grow' if grow else ''}"
                cap = f"{tmp}/{name}"
                args = ["--grow"] if grow else []
                r = run(["live", "python", "--interpose", "none"] + flags +
                        ["--alloc", f"{cap}/alloc", "--out", f"{cap}/out", loop, "--"] + args + extra)
                if r.returncode != 0:
                    failures.append(f"{name}: live python --alloc exited {r.returncode}\n{r.stdout}{r.stderr}")
                    continue
                snaps = sorted(glob.glob(f"{cap}/alloc/snap_alloc_loop.cuda*.pickle"))
                stats = sorted(glob.glob(f"{cap}/alloc/stats_alloc_loop.cuda*.json"))
                if [os.path.basename(s) for s in snaps] != ["snap_alloc_loop.cuda0.pickle",
                                                             "snap_alloc_loop.cuda1.pickle"] or len(stats) != 2:
                    failures.append(f"{name}: expected one snapshot and stats per device: {snaps} {stats}")
                    continue
                st = json.load(open(stats[0]))
                want = "racelab.iteration()" if extra == ["--markers"] else "optimizer step"
                if st["boundaries"] != want or len(st["rows"]) != 6 or st["device"] != 0:
                    failures.append(f"{name}: stats: boundaries {st['boundaries']}, {len(st['rows'])} rows")
                r = run(["alloc", "report"] + snaps + ["--out", f"{cap}/report"])
                if r.returncode != 0:
                    failures.append(f"{name}: alloc report exited {r.returncode}: {r.stdout}{r.stderr}")
                    continue
                for dev, rep in rows_of(f"{cap}/report").items():
                    got = [row["device_allocs_in"] for row in rep["rows"]]
                    expected = [2, 1, 1, 1, 1, 1] if grow else [2, 0, 0, 0, 0, 0]
                    if got != expected:
                        failures.append(f"{name} {dev}: new segments per iteration {got}, expected {expected}")
                    if rep["recorded_matches"] != 6 or rep["allocations_same_placement"] != rep["allocations"]:
                        failures.append(f"{name} {dev}: stats agree at {rep['recorded_matches']}/6, "
                                        f"placement {rep['allocations_same_placement']}/{rep['allocations']}")
                    if rep["stable"] == grow:
                        failures.append(f"{name} {dev}: verdict {rep['verdict']}")

    # racelab.iteration() outside a capture does nothing.
    r = run(["live", "python", "--interpose", "none", "--uncontrolled", "--out", f"{tmp}/nocap",
             loop, "--", "--markers"])
    if r.returncode != 0:
        failures.append(f"racelab.iteration() without --alloc failed: {r.stdout}{r.stderr}")
    # --alloc where torch does not import: one line, exit 2.
    r = run(["live", "python", "--interpose", "none", "--uncontrolled", "--alloc", f"{tmp}/x",
             "--out", f"{tmp}/x-out", loop], env=dict(os.environ, PYTHONPATH=tmp))
    if r.returncode != 2 or "--alloc:" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        failures.append(f"--alloc without torch: exit {r.returncode}: {r.stderr}")

    # 2. alloc report as a CI job.
    grow = sorted(glob.glob(f"{tmp}/uncontrolled-grow/alloc/snap_*.pickle"))
    flat = sorted(glob.glob(f"{tmp}/uncontrolled/alloc/snap_*.pickle"))
    r = run(["alloc", "report"] + grow + ["--expect", "stable", "--junit", f"{tmp}/grow.xml"])
    suite = ET.parse(f"{tmp}/grow.xml").getroot().find("testsuite")
    if r.returncode != 1 or "does not hold" not in r.stdout or suite.get("failures") != "2" or \
            len(suite.findall(".//failure")) != 2:
        failures.append(f"--expect stable on growing traces: exit {r.returncode}\n{r.stdout}")
    r = run(["alloc", "report"] + grow + ["--expect", "unstable"])
    if r.returncode != 0 or "holds" not in r.stdout:
        failures.append(f"--expect unstable on growing traces: exit {r.returncode}\n{r.stdout}")
    r = run(["alloc", "report"] + flat + ["--expect", "stable", "--junit", f"{tmp}/flat.xml"])
    suite = ET.parse(f"{tmp}/flat.xml").getroot().find("testsuite")
    if r.returncode != 0 or suite.get("failures") != "0" or suite.get("tests") != "2":
        failures.append(f"--expect stable on stable traces: exit {r.returncode}\n{r.stdout}")
    r = run(["alloc", "report"] + flat + ["--junit", f"{tmp}/none.xml"])
    if r.returncode != 2 or "--expect" not in r.stderr or os.path.exists(f"{tmp}/none.xml"):
        failures.append(f"--junit without --expect: exit {r.returncode}: {r.stderr}")

    # 3. racelab check, variants side by side.
    # (--no-prove: the loop's queue multiplies dpor's classes past any small cap, docs/live.md.)
    r = run(["check", "--interpose", "none", "--executions", "3", "--no-prove", "--out", f"{tmp}/check",
             "--variant", "--queue", "--variant", "--queue --grow", loop])
    j = json.load(open(f"{tmp}/check/check.json"))
    verdicts = [(v["variant"], v["passed"], v["races"]["verdict"], v["memory"]["verdict"])
                for v in j["variants"]]
    if r.returncode != 1 or verdicts != [("--queue", True, "clean", "stable"),
                                         ("--queue --grow", False, "clean", "unstable")]:
        failures.append(f"check on the loop: exit {r.returncode}, {verdicts}\n{r.stdout}{r.stderr}")
    page = open(f"{tmp}/check/check.html").read()
    if 'class="variants"' not in page or page.count("<svg") < 4:
        failures.append("check.html lacks the variants table or the memory plots")
    standin = dict(os.environ, PYTHONPATH=os.path.join(src, "tools", "pipelines"))
    r = run(["check", "--interpose", "standin", "--dict", "__main__._attention_cache", "--strategy",
             "random", "--executions", "40", "--proof-executions", "100", "--out", f"{tmp}/check2",
             "--variant", "--warmup none",
             "--variant", "--warmup sequential", os.path.join(pipelines, "train_queue.py")],
            env=standin)
    j = json.load(open(f"{tmp}/check2/check.json"))
    got = [(v["passed"], v["races"]["verdict"], v["races"]["kind"], v["memory"]["verdict"])
           for v in j["variants"]]
    if r.returncode != 1 or got[0][:2] != (False, "found") or \
            got[0][2] not in ("deadlock", "fx_trace_error") or \
            got[1] != (False, "inconclusive", "", "not_measured") or \
            "cut short" not in j["variants"][1]["races"]["reason"]:
        failures.append(f"check on the stand-in pipeline: exit {r.returncode}, {got}\n{r.stdout}{r.stderr}")
    # racelab replay takes the live Python schedule by its header and reproduces the failure.
    sched = j["variants"][0]["races"]["schedule"]
    r = run(["replay", sched, "--out", f"{tmp}/replayed"], env=standin)
    if r.returncode != 1 or got[0][2] not in r.stdout:
        failures.append(f"racelab replay of {sched}: exit {r.returncode}\n{r.stdout}{r.stderr}")

    # 4. A scenario's live case with an allocator expectation: a suite job beside the race jobs.
    jobs = os.path.join(tmp, "jobs")
    os.makedirs(jobs)
    for name, args in (("loop-stable", '["--queue"]'), ("loop-grow", '["--queue", "--grow"]')):
        open(os.path.join(jobs, name + ".toml"), "w").write(f"""name = "{name}"
[live]
script = "{loop}"
args = {args}
interpose = "none"
python_path = ["{os.path.join(pipelines, 'fakecuda')}"]
executions = 3
alloc = "stable"
[expect]
must_not = ["deadlock", "exception"]
""")
    r = run(["suite", jobs, "--out", f"{tmp}/jobs-out", "--junit", f"{tmp}/jobs.xml"],
            env=dict(os.environ))
    summary = json.load(open(f"{tmp}/jobs-out/summary.json"))
    got = {e["scenario"]: (e["verdict"], e.get("memory")) for e in summary["scenarios"]}
    junit_failures = [t.get("name") for t in ET.parse(f"{tmp}/jobs.xml").getroot().iter("testcase")
                      if t.find("failure") is not None]
    if r.returncode != 1 or got != {"loop-stable": ("pass", "stable"),
                                    "loop-grow": ("fail", "unstable")} or \
            junit_failures != ["loop-grow"] or "memory expected stable" not in r.stdout:
        failures.append(f"suite allocator jobs: exit {r.returncode}, {got}, JUnit failures "
                        f"{junit_failures}\n{r.stdout}{r.stderr}")
    r = run(["check", os.path.join(tmp, "missing.py")])
    if r.returncode != 2 or len(r.stderr.strip().splitlines()) != 1:
        failures.append(f"check of a missing script: exit {r.returncode}: {r.stderr}")
if failures:
    sys.exit("\n".join(failures))
print("capture, alloc report --expect and racelab check: every check passed")

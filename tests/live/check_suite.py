#!/usr/bin/env python3
"""Live cases in the suite: `racelab suite scenarios/live` runs each [live] scenario through
`racelab live python` and judges it by its [expect], with the same summary and JUnit as the
model's scenarios; a case that requires CUDA is skipped, with its reason, where there is none; a
case whose expectation does not hold fails the suite.
Usage: check_suite.py RACELAB SOURCE_DIR
"""
import json, os, re, shutil, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

racelab, src = sys.argv[1], sys.argv[2]
failures = []
with tempfile.TemporaryDirectory() as tmp:
    probe = subprocess.run([racelab, "live", "python", "--interpose", "none", "--executions", "1",
                            "--out", f"{tmp}/probe", os.path.join(src, "tests", "live",
                                                                  "pipelines", "primitives.py"),
                            "--", "rlock"], capture_output=True, text=True)
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)
    r = subprocess.run([racelab, "suite", os.path.join(src, "scenarios", "live"), "--out",
                        f"{tmp}/suite", "--junit", f"{tmp}/junit.xml"], capture_output=True,
                       text=True, timeout=900)
    summary = json.load(open(f"{tmp}/suite/summary.json"))
    verdicts = {e["scenario"]: e["verdict"] for e in summary["scenarios"]}
    cuda = os.path.exists("/dev/nvidiactl")
    if r.returncode != 0 or verdicts.get("train-queue-standin-lazy") != "pass" or \
            verdicts.get("train-queue-standin-sequential") != "pass":
        failures.append(f"the live suite did not pass: {verdicts}\n{r.stdout}{r.stderr}")
    # The bundled live proof: dpor exhausts the stand-in's sequential warmup and the suite says so.
    proof = next(e for e in summary["scenarios"] if e["scenario"] == "drafter-standin-sequential")
    if proof["verdict"] != "pass" or not re.search(
            r"drafter-standin-sequential .*proven \(dpor, exhaustive, \d+ executions\)", r.stdout):
        failures.append(f"the live dpor case did not pass as a proof: {proof}\n{r.stdout}")
    # The queue-fed one too: its queue, barrier, condition and event as steps of their own.
    if not re.search(r"train-queue-standin-sequential .*proven \(dpor, exhaustive, \d+ executions\)",
                     r.stdout):
        failures.append(f"the queue-fed live case did not pass as a proof:\n{r.stdout}")
    lazy = next(e for e in summary["scenarios"] if e["scenario"] == "train-queue-standin-lazy")
    if not {"deadlock", "fx_trace_error"} <= set(lazy["kinds_seen"]) or not lazy.get("live"):
        failures.append(f"the lazy live case did not see both kinds: {lazy}")
    if not cuda and verdicts.get("train-queue-h200") != "skipped":
        failures.append(f"the GPU case was not skipped without CUDA: {verdicts}")
    suite = ET.parse(f"{tmp}/junit.xml").getroot().find("testsuite")
    gpu_cases = [n for n in ("train-queue-h200", "train-queue-h200-memory")]
    if not cuda and any(verdicts.get(n) != "skipped" for n in gpu_cases):
        failures.append(f"the GPU cases were not skipped without CUDA: {verdicts}")
    if not cuda and (suite.get("skipped") != str(len(gpu_cases)) or suite.find(".//skipped") is None):
        failures.append("JUnit does not mark the GPU case skipped")
    # An expectation that does not hold fails the suite (exit 1) and is a JUnit failure.
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    text = open(os.path.join(src, "scenarios", "live", "train-queue-standin-sequential.toml")).read()
    text = text.replace('must_not = [', 'must = ["deadlock"]\nmust_not = [').replace(
        '"deadlock", "fx_trace_error", "exception"', '"fx_trace_error", "exception"')
    text = text.replace('"../../', f'"{src}/')
    open(os.path.join(bad, "bad.toml"), "w").write(text.replace(
        'name = "train-queue-standin-sequential"', 'name = "bad"').replace(
        "executions = 20000", "executions = 5"))
    r = subprocess.run([racelab, "suite", bad, "--out", f"{tmp}/bad-out", "--junit",
                        f"{tmp}/bad.xml"], capture_output=True, text=True, timeout=600)
    if r.returncode != 1 or "expected but not found" not in r.stdout or \
            ET.parse(f"{tmp}/bad.xml").getroot().find(".//failure") is None:
        failures.append(f"a live case whose must is missing did not fail the suite\n{r.stdout}")
    # A dfs search that stops before covering its space proves no must_not: inconclusive, exit 1.
    cut = os.path.join(tmp, "cut")
    os.makedirs(cut)
    open(os.path.join(cut, "cut.toml"), "w").write(text.replace(
        'name = "train-queue-standin-sequential"', 'name = "cut"').replace(
        'must = ["deadlock"]\n', '').replace('strategy = "dpor"', 'strategy = "dfs"').replace(
        "executions = 20000", "executions = 3"))
    r = subprocess.run([racelab, "suite", cut, "--out", f"{tmp}/cut-out", "--junit",
                        f"{tmp}/cut.xml"], capture_output=True, text=True, timeout=600)
    entry = json.load(open(f"{tmp}/cut-out/summary.json"))["scenarios"][0]
    if r.returncode != 1 or entry["verdict"] != "inconclusive" or \
            "cut short by the execution cap after 3 executions, before covering its bounded space" not in r.stdout:
        failures.append(f"a live dfs case cut short was not inconclusive: {entry}\n{r.stdout}")
if failures:
    sys.exit("\n".join(failures))
print("live suite: every check passed")

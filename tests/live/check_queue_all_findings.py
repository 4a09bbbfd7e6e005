#!/usr/bin/env python3
"""issue 34: the queue-fed stand-in pipeline's one live search for every kind finishes, and reports
only what a fresh process reproduces (docs/live.md, "Every kind in one search").

tests/live/pipelines/train_queue.py --warmup none --batches 2 under racelab live python
--interpose standin --strategy dpor --all-findings: some executions dpor abandons (sleep-set
blocked) after the two drafters formed the compile_lock cycle through the autograd worker. Their
threads cannot unwind. Until 2026-12-05 such an execution ended without a finding and the search
went on in the same process, beside the worker still busy with the stuck backward; execution 768
then hung (a `hang` kind no fresh process reproduced) and every process after it hung too, so the
search never finished. Now such an execution is the deadlock it is and the search goes on in a
fresh process: it is exhausted, with the model's failure kinds for the setting (deadlock,
fx_trace_error) and no hang.
Usage: check_queue_all_findings.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
script = os.path.join(src, "tests", "live", "pipelines", "train_queue.py")
env = dict(os.environ, PYTHONPATH=os.path.join(src, "tools", "pipelines"))


def live(out, *options, executions="1000000"):
    cmd = [racelab, "live", "python", "--out", out, "--interpose", "standin",
           "--executions", executions, *options, "--dict", "__main__._attention_cache", script,
           "--", "--warmup", "none", "--batches", "2"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)


with tempfile.TemporaryDirectory() as tmp:
    probe = live(f"{tmp}/probe", "--strategy", "random", executions="1")
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    out = f"{tmp}/all"
    r = live(out, "--strategy", "dpor", "--all-findings", "--time-limit", "600")
    failures = []
    if r.returncode != 1 or "exhaustive (dpor" not in r.stdout:
        failures.append(f"the search was not exhausted (exit {r.returncode})")
    with open(os.path.join(out, "report.json")) as f:
        rep = json.load(f)
    kinds = {k["kind"] for k in rep.get("kinds_found", [])}
    if kinds != {"deadlock", "fx_trace_error"}:
        failures.append(f"kinds found: {sorted(kinds)}, expected the model's deadlock and "
                        f"fx_trace_error (no hang)")
    if "hang" in rep.get("kinds_seen", {}):
        failures.append(f"an execution hung: {rep.get('kinds_seen')}")
    if rep.get("processes", 0) < 2:
        failures.append(f"the search did not go on in fresh processes: {rep.get('processes')}")
    if failures:
        sys.exit("\n".join(failures) + f"\n{r.stdout[-3000:]}{r.stderr[-2000:]}")
    print(f"queue-fed stand-in, dpor --all-findings: exhaustive in {rep['executions']} executions "
          f"over {rep['processes']} processes ({rep['dpor']}), kinds {sorted(kinds)}, "
          f"seen {rep['kinds_seen']}")

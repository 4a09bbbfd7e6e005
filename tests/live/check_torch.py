#!/usr/bin/env python3
"""Real torch 2.11 on the CPU (issue 40; docs/live.md, "Real torch on the CPU, in CI"), in the
environment tools/install-torch.sh makes (/opt/racelab/torch-2.11.0, or RACELAB_TORCH_VENV):
tools/pipelines/drafter_torch.py --device cpu under the torch-2.11 table, two drafters compiling a
causal attention with gradients through Dynamo, AOTAutograd and Inductor:

- without a warmup, racelab reaches F10's FX error (fx_trace_error): one drafter's compile traces
  the joint graph with FX's process-wide flag up (autograd.grad under compile_lock) while the other
  enters its compiled function, whose entry check raises; the schedule replays it;
- with the sequential warmup, dpor proves the run clean (exhaustive, exit 0);
- both runs name torch 2.11.0 and record it inside the table's verified range.
Skipped (77), saying why, where the environment is absent: tools/test.sh installs it.
Usage: check_torch.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile, time

from livecheck import TORCH_VENV as venv, need_python_bridge, need_torch_env

racelab, src = os.path.abspath(sys.argv[1]), sys.argv[2]
script = os.path.join(src, "tools", "pipelines", "drafter_torch.py")
# Small tensors: the compile path is what is tested, not the arithmetic.
shape = ["--device", "cpu", "--seq-len", "64", "--heads", "2", "--head-dim", "16", "--steps", "1"]
failures = []

need_torch_env()
need_python_bridge(racelab, src)


def torch_env(tmp):
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    # Inductor compiles in the caller's thread, not in a pool of worker processes whose timing a
    # recorded schedule would otherwise depend on (a replay diverged under load).
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    # Inductor's own cache, not the machine's (/tmp/torchinductor_$USER): every kernel load takes
    # a file lock in it, and where another process holds that lock (compiling the same kernel:
    # another checkout's test) the compiling thread polls with time.sleep, a scheduling point
    # under racelab, as many times as the other process takes: a recorded schedule with such
    # sleeps does not replay ("diverged at step 24: expected drafter 0.1: sleep, got drafter 0.1:
    # compile_fx_forward end", seen under load).
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor-cache")
    return env


def live(out, *args, timeout=900):
    t0 = time.monotonic()
    r = subprocess.run([racelab, "live", "python", "--python", venv, "--interpose", "torch-2.11",
                        "--refuse-other-torch", "--hang-timeout", "300", "--out", out, *args],
                       capture_output=True, text=True, timeout=timeout,
                       env=torch_env(os.path.dirname(out)))
    print(f"{time.monotonic() - t0:6.1f} s: racelab live python ... {' '.join(args)} -> exit "
          f"{r.returncode}", flush=True)
    return r


def said(r):
    return f"\n  exit {r.returncode}\n{r.stdout}{r.stderr}"


def report(out):
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def versions_ok(out, r):
    v = report(out).get("versions", {})
    if not v.get("torch", "").startswith("2.11.0") or v.get("inside") is not True:
        failures.append(f"{out}: report.json versions {v}")
    if "torch 2.11.0" not in r.stdout:
        failures.append(f"{out}: the banner does not name torch 2.11.0{said(r)}")


with tempfile.TemporaryDirectory() as tmp:
    # The sequential warmup: proven clean. First: it fills Inductor's on-disk cache with the
    # graphs the lazy case compiles, so that the lazy case records and replays on a warm cache (a
    # cold compile submits to Inductor's compile pool, a warm one does not: a schedule recorded
    # cold diverges when replayed warm).
    # A cold Inductor compile on 2 busy cores takes tens of seconds without a scheduling point:
    # --hang-timeout 300 (above) keeps it from being lost_control.
    r = live(f"{tmp}/seq", "--strategy", "dpor", "--executions", "40", script, "--", *shape,
             "--warmup", "sequential")
    if r.returncode != 0 or "exhaustive" not in r.stdout:
        failures.append(f"sequential warmup: expected a dpor proof, exit 0{said(r)}")
    else:
        rep = report(f"{tmp}/seq")
        if not rep.get("exhausted") or rep.get("findings"):
            failures.append(f"sequential warmup: report.json {rep}")
        versions_ok(f"{tmp}/seq", r)


    # The lazy compile: F10's FX error, found and replayed.
    # random (seed 1) reaches it in the first execution, the soonest (each execution compiles
    # for seconds). (dpor's second execution used to crash with torch 2.11's F14, a SIGSEGV of
    # CUDA builds without a GPU; the table's process_setup now keeps it away: docs/facts.md.)
    r = live(f"{tmp}/lazy", "--strategy", "random", "--seed", "1", "--executions", "10", script,
             "--", *shape, "--warmup", "none")
    if r.returncode != 1 or "fx_trace_error" not in r.stdout:
        failures.append(f"lazy compile: expected fx_trace_error, exit 1{said(r)}")
    else:
        rep = report(f"{tmp}/lazy")
        kinds = [f["kind"] for f in rep.get("findings", [])]
        if "fx_trace_error" not in kinds or "Detected that you are using FX to symbolically " \
                "trace a dynamo-optimized function" not in json.dumps(rep["findings"]):
            failures.append(f"lazy compile: report.json findings {rep.get('findings')}")
        versions_ok(f"{tmp}/lazy", r)
        schedule = rep.get("schedule", "")
        p = subprocess.run([racelab, "live", "python", "--replay", schedule, "--hang-timeout",
                            "300", "--out", f"{tmp}/replayed"],
                           capture_output=True, text=True, timeout=900, env=torch_env(tmp))
        if p.returncode != 1 or "fx_trace_error" not in p.stdout:
            failures.append(f"lazy compile: the schedule does not replay to fx_trace_error{said(p)}")

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("real torch 2.11 on the CPU: the lazy compile reaches fx_trace_error, the sequential "
      "warmup is proven clean")

#!/usr/bin/env python3
"""Which of the lazy-compile failures each torch release shows on the CPU (issue 40, point 4):
the facts of docs/facts.md measured, not only read, on every release that installs for the Python
racelab embeds. Not a CI job (each release is a 4.6 GB environment and minutes of Inductor
compiles on 2 cores); its output is committed under docs/results/ and docs/facts.md quotes it.

  tools/torch-versions.py RACELAB OUT [VERSION ...]     (default: 2.11.0 2.12.1 2.13.0 2.14.1 2.15.0)
  tools/torch-versions.py RACELAB OUT --table-only      (OUT/table.md again from OUT/results.json)

For each VERSION: tools/install-torch.sh makes /opt/racelab/torch-VERSION (reused when there),
then, in it, under the torch-2.11 table (whose range is 2.11: later releases run with its one-line
warning, which the run records), tools/pipelines/drafter_torch.py --device cpu with two drafters:

  lazy         --warmup none, random seed 1, 10 executions: the first failure random meets
  lazy-dpor    --warmup none, dpor, up to 40 executions or 180 s: the first failure, a proof
               that the lazy compile has none (exhaustive over what racelab sees), or neither
  sequential   --warmup sequential, dpor: the warmup's proof
  recompile    --warmup sequential --warmup-seq-len 32: the drafters recompile for length 64
               (dynamic, F11); the trace says whether a drafter compiled its backward inside
               its forward's compile_lock (F11: ahead of time) or at its backward (F2: lazy)

the F10 probe (tools/pipelines/fx_flag_probe.py, plain Python: a compiled call while another
thread is inside make_fx; raises where FX's flag is process-wide), the F14 probe
(tools/pipelines/fake_guard_probe.py, plain Python, PROBE_RUNS runs each way: a thread enters
FakeTensorMode and ends, then main enters it: how many runs crash with SIGSEGV, and how many when
main entered it first) and, with objdump, how the release's libc10.so keeps that guard (OUT/VERSION/
ensureCUDADeviceGuardSet.txt: a thread_local, freed with its thread, or a process-wide static).

A run adds its releases to OUT's results.json (replacing those it runs again). Writes
OUT/VERSION/CASE/ (racelab's report.json, trace.txt, live.log), OUT/VERSION/probe.txt,
OUT/VERSION/fx-flag-probe.txt,
OUT/install.txt, OUT/results.json and OUT/table.md (the table docs/facts.md quotes). Each run gets
TORCHINDUCTOR_COMPILE_THREADS=1 and a private Inductor cache per release
(OUT/.cache/VERSION, removed at the end), so that no other process's compile of the same kernel
holds Inductor's file locks while a schedule is recorded.
"""
import json, os, re, shutil, subprocess, sys, time

PROBE_RUNS = 6
SHAPE = ["--device", "cpu", "--seq-len", "64", "--heads", "2", "--head-dim", "16", "--steps", "1"]
CASES = [  # name, search, time limit (s), script arguments
    ("sequential", ["--strategy", "dpor", "--executions", "40"], 900, ["--warmup", "sequential"]),
    ("lazy", ["--strategy", "random", "--seed", "1", "--executions", "10"], 900,
     ["--warmup", "none"]),
    # Each execution compiles (tens of seconds on 2 busy cores): a bounded look, said as such.
    ("lazy-dpor", ["--strategy", "dpor", "--executions", "40"], 180, ["--warmup", "none"]),
    ("recompile", ["--strategy", "random", "--seed", "1", "--executions", "1"], 900,
     ["--warmup", "sequential", "--warmup-seq-len", "32"]),
]

racelab, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
versions = sys.argv[3:] or ["2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0"]
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
script = os.path.join(src, "tools", "pipelines", "drafter_torch.py")
probe = os.path.join(src, "tools", "pipelines", "fake_guard_probe.py")
fx_probe = os.path.join(src, "tools", "pipelines", "fx_flag_probe.py")
os.makedirs(out, exist_ok=True)


def install(version):
    t0 = time.monotonic()
    r = subprocess.run([os.path.join(src, "tools", "install-torch.sh")], capture_output=True,
                       text=True, env={**os.environ, "RACELAB_TORCH_VERSION": version})
    if r.returncode != 0:
        return None, f"{version}: install failed (exit {r.returncode}): {r.stderr.strip()}"
    said = [l for l in r.stderr.splitlines() if "installed in" in l]
    return r.stdout.strip().splitlines()[-1], (said[0] if said else
                                               f"racelab: torch {version} reused in "
                                               f"{time.monotonic() - t0:.1f} s")


def compile_pairs(trace):
    """Per drafter: did compile_fx_backward run inside the drafter's own compile_lock (ahead of
    time, F11), or outside it (lazily, F2)? From trace.txt's 'THREAD: OP' lines."""
    held, seen = {}, {}
    for line in trace.splitlines():
        m = re.match(r"\s*[\d.]+\s+\S+\s+(drafter [\d.]+): (.*)$", line)
        if not m:
            continue
        thread, op = m.groups()
        if op == "lock compile_lock":
            held[thread] = held.get(thread, 0) + 1
        elif op == "unlock compile_lock":
            held[thread] = held.get(thread, 0) - 1
        elif op == "compile_fx_backward":
            seen.setdefault(thread, []).append("ahead" if held.get(thread, 0) > 0 else "lazy")
    return seen


def run_case(env_dir, version, name, search, limit, args):
    case_out = os.path.join(out, version, name)
    shutil.rmtree(case_out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(out, ".cache", version)
    argv = [racelab, "live", "python", "--python", env_dir, "--interpose", "torch-2.11",
            "--hang-timeout", "300", "--time-limit", str(limit), "--out", case_out, *search, script,
            "--", *SHAPE, *args]
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds = time.monotonic() - t0
    os.makedirs(case_out, exist_ok=True)
    with open(os.path.join(case_out, "live.log"), "w") as f:
        f.write(f"$ {' '.join(argv[1:])}\n{r.stdout}{r.stderr}")
    row = {"case": name, "exit": r.returncode, "seconds": round(seconds, 1),
           "command": "racelab " + " ".join(argv[1:])}
    try:
        with open(os.path.join(case_out, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        row["error"] = (r.stderr.strip().splitlines() or ["no report.json"])[-1]
        return row
    row["executions"] = rep.get("executions")
    row["crashed_in"] = rep.get("execution") if rep.get("crashed") else None
    row["exhausted"] = rep.get("exhausted")
    row["stopped_by"] = rep.get("stopped_by")
    row["kinds"] = sorted({f["kind"] for f in rep.get("findings", [])})
    row["first"] = next((f.get("message", "").splitlines()[0] for f in rep.get("findings", [])),
                        "")
    row["torch"] = rep.get("versions", {}).get("torch")
    row["outside"] = rep.get("versions", {}).get("outside", "")
    try:
        with open(os.path.join(case_out, "trace.txt")) as f:
            row["backward_compiles"] = compile_pairs(f.read())
    except OSError:
        pass
    return row


def run_probe(env_dir, version):
    counts = {}
    lines = []
    for first in ("thread", "main"):
        crashed = 0
        for k in range(PROBE_RUNS):
            r = subprocess.run([os.path.join(env_dir, "bin", "python"), probe, first],
                               capture_output=True, text=True)
            crashed += r.returncode == -11
            lines.append(f"{first} first, run {k + 1}: exit {r.returncode}")
        counts[first] = crashed
    with open(os.path.join(out, version, "probe.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return counts


def run_fx_probe(env_dir, version):
    """F10 without racelab: another thread's FX trace against a compiled call (fx_flag_probe.py)."""
    r = subprocess.run([os.path.join(env_dir, "bin", "python"), fx_probe], capture_output=True,
                       text=True, timeout=600)
    with open(os.path.join(out, version, "fx-flag-probe.txt"), "w") as f:
        f.write(f"$ python tools/pipelines/fx_flag_probe.py\nexit {r.returncode}\n{r.stdout}")
    lines = r.stdout.strip().splitlines()
    return lines[-1] if r.returncode == 0 and lines else f"error: exit {r.returncode}"


def guard_disassembly(env_dir, version):
    """F14 in the binary: c10::impl::ensureCUDADeviceGuardSet() of the release's libc10.so, which
    either keeps the fake guard in a thread_local (__tls_get_addr, __cxa_thread_atexit: freed when
    the thread ends) or in a function-local static (__cxa_guard_acquire, __cxa_atexit: the
    process's). "" where objdump is missing."""
    lib = next((os.path.join(root, "libc10.so") for root, _, files in os.walk(env_dir)
                if "libc10.so" in files and root.endswith(os.path.join("torch", "lib"))), None)
    if lib is None or shutil.which("objdump") is None:
        return ""
    r = subprocess.run(["objdump", "-d", "--no-show-raw-insn",
                        "--disassemble=_ZN3c104impl24ensureCUDADeviceGuardSetEv", lib],
                       capture_output=True, text=True)
    text = "\n".join(l for l in r.stdout.splitlines() if l.startswith(" ") or "<_ZN3c10" in l)
    with open(os.path.join(out, version, "ensureCUDADeviceGuardSet.txt"), "w") as f:
        f.write(f"$ objdump -d --no-show-raw-insn "
                f"--disassemble=_ZN3c104impl24ensureCUDADeviceGuardSetEv {lib}\n{text}\n")
    if "__cxa_thread_atexit" in text:
        return "thread_local"
    return "static" if "__cxa_guard_acquire" in text else "other"


def warm_note(version, case):
    """Whether the execution trace.txt shows (a search's last, or its failing one) reached none
    of the table's compile points: its compiles were served by a cache the table does not turn
    off, so it did not race the lazy compile (found on 2.12.1 and later)."""
    try:
        with open(os.path.join(out, version, case, "trace.txt")) as f:
            trace = f.read()
    except OSError:
        return ""
    if re.search(r": (autograd\.grad|compile_fx_forward|compile_fx_backward)$", trace, re.M):
        return ""
    return "; its traced execution reached no compile point (warm)"


def verdict(row):
    if "error" in row:
        return f"error: {row['error']}"
    kinds = ", ".join(row["kinds"]) or "none"
    if row.get("crashed_in") is not None:
        return f"{kinds} (the process crashed in execution {row['crashed_in']})"
    if row.get("exhausted"):
        how = f"exhaustive, {row['executions']} executions"
    elif row["kinds"]:
        how = f"in {row['executions']} executions"
    else:
        how = f"{row['executions']} executions, stopped by {row.get('stopped_by')}"
    return f"{kinds} ({how})"


def write_outputs(results, installs):
    with open(os.path.join(out, "install.txt"), "w") as f:
        f.write("\n".join(installs) + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    # The table: a row per release, a column per case.
    head = ["release", "F10 probe: a compiled call during another thread's trace",
            "lazy (random, 10)", "lazy (dpor)", "sequential warmup (dpor)",
            "recompile at another length: backward compile", "F14: fake CUDA guard; probe crashes"]
    table = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for version, v in results["versions"].items():
        if "error" in v:
            table.append(f"| {version} | {v['error']} |" + " |" * (len(head) - 2))
            continue
        by = {row["case"]: row for row in v["cases"]}
        bw = by["recompile"].get("backward_compiles", {})
        bw_text = "; ".join(f"{t}: {', '.join(w)}" for t, w in sorted(bw.items())) or "none seen"
        fx_text = ("raised F10's RuntimeError"
                   if v["fx_probe"].startswith("raised: RuntimeError: Detected") else v["fx_probe"])
        probe_text = (f"{v['fake_guard'] or 'not read'}; "
                      f"{v['probe']['thread']}/{v['probe_runs']} thread first, "
                      f"{v['probe']['main']}/{v['probe_runs']} main first")
        cells = {c: verdict(by[c]) + warm_note(version, c) for c in by}
        table.append(f"| {version} | {fx_text} | {cells['lazy']} | "
                     f"{cells['lazy-dpor']} | {cells['sequential']} | {bw_text} | "
                     f"{probe_text} |")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(table) + "\n")
    return table


if versions == ["--table-only"]:  # OUT/table.md again from OUT/results.json and install.txt
    with open(os.path.join(out, "results.json")) as f:
        results = json.load(f)
    with open(os.path.join(out, "install.txt")) as f:
        print("\n".join(write_outputs(results, f.read().splitlines())))
    sys.exit(0)
# A later run adds its releases to what OUT already has (a run cut short, or one release more).
results, installs = {"versions": {}, "racelab": racelab}, []
if os.path.exists(os.path.join(out, "results.json")):
    with open(os.path.join(out, "results.json")) as f:
        results["versions"] = json.load(f).get("versions", {})
    with open(os.path.join(out, "install.txt")) as f:
        installs = [l for l in f.read().splitlines()
                    if not any(f"torch {v} " in l for v in versions)]
for version in versions:
    env_dir, said = install(version)
    installs.append(said)
    print(said, flush=True)
    if env_dir is None:
        results["versions"][version] = {"error": said}
        continue
    os.makedirs(os.path.join(out, version), exist_ok=True)
    rows = []
    for name, search, limit, args in CASES:
        row = run_case(env_dir, version, name, search, limit, args)
        print(f"{version} {name}: {verdict(row)}, exit {row['exit']}, {row['seconds']} s",
              flush=True)
        rows.append(row)
    counts = run_probe(env_dir, version)
    print(f"{version} F14 probe: {counts['thread']}/{PROBE_RUNS} crashed thread-first, "
          f"{counts['main']}/{PROBE_RUNS} main-first", flush=True)
    guard = guard_disassembly(env_dir, version)
    fx = run_fx_probe(env_dir, version)
    print(f"{version} F10 probe: {fx}", flush=True)
    results["versions"][version] = {"cases": rows, "probe": counts, "probe_runs": PROBE_RUNS,
                                    "fake_guard": guard, "fx_probe": fx}
    write_outputs(results, installs)  # after each release: a run cut short keeps what it has
shutil.rmtree(os.path.join(out, ".cache"), ignore_errors=True)
print("\n".join(write_outputs(results, installs)))

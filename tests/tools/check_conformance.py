#!/usr/bin/env python3
"""tools/conformance.py derives each case's pipeline arguments from its scenario file
(tools/pipelines/settings.py, script_args): the derived arguments are the expected ones, mean what
the hand-written table they replaced meant (its spellings are deprecated aliases now), and a
scenario the pipelines cannot run is refused in one line naming the key. `--help` and `--list`
run. tools/gpu/conformance-v2.sh's rows are the derived arguments too.
Usage: check_conformance.py SOURCE_DIR
"""
import contextlib, importlib.util, io, os, re, subprocess, sys

src = sys.argv[1]
tool = os.path.join(src, "tools", "conformance.py")
spec = importlib.util.spec_from_file_location("conformance", tool)
conformance = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conformance)  # puts tools/pipelines on sys.path
import pipeline  # noqa: E402
import settings  # noqa: E402

failures = []

# scenario: (the derived arguments, the arguments of the table they replaced)
EXPECTED = {
    "lazy-2-drafters": ("--drafters 2 --warmup none", None),
    "lazy-4-drafters": ("--drafters 4 --warmup none", None),
    "per-thread-lock": ("--drafters 2 --warmup per_thread_lock", None),
    "sequential-forward-backward": ("--drafters 2 --warmup sequential", None),
    "sequential-forward-only": ("--drafters 2 --warmup sequential --no-warmup-backward",
                                "--drafters 2 --warmup sequential_forward"),
    "warmup-other-length": ("--drafters 2 --warmup sequential --warmup-seq-len 1024 --seq-len 1536",
                            None),
    "warmup-other-length-static": (
        "--drafters 2 --warmup sequential --warmup-seq-len 1024 --seq-len 1536 "
        "--no-automatic-dynamic",
        "--drafters 2 --warmup sequential --warmup-seq-len 1024 --seq-len 1536 --dynamic false"),
    "lock-first-forward": ("--drafters 2 --warmup lock_first_forward", None),
}
names = [conformance.name_of(s) for s, _ in conformance.CASES]
if sorted(names) != sorted(EXPECTED):
    failures.append(f"the cases are {names}, expected {sorted(EXPECTED)}")
p = pipeline.parser("check")
for scenario, _ in conformance.CASES:
    name = conformance.name_of(scenario)
    if name not in EXPECTED:
        continue
    want, old = EXPECTED[name]
    got = " ".join(conformance.case_args(scenario))
    if got != want:
        failures.append(f"{name}: derived {got!r}, expected {want!r}")
    old = (old or want).split()
    if settings.upgrade_args(old) != want.split():
        failures.append(f"{name}: the old arguments {old} upgrade to {settings.upgrade_args(old)}")
    with contextlib.redirect_stderr(io.StringIO()):
        if vars(p.parse_args(old)) != vars(p.parse_args(got.split())):
            failures.append(f"{name}: the old arguments {old} parse otherwise than {got}")

# What the pipelines cannot run: one ValueError naming the key.
base = {"name": "x", "pipeline": {"drafters_per_device": 2}}
for extra, key in (({"warmup": {"mode": "separate_process"}}, "warmup.mode"),
                   ({"pipeline": {"attention": "sdpa_fused"}}, "pipeline.attention"),
                   ({"pipeline": {"seq_len": [1024, 2048]}}, "pipeline.seq_len"),
                   ({"pipeline": {"batch": 2}}, "pipeline.batch"),
                   ({"torch": {"recompile_limit": 1}}, "torch.recompile_limit"),
                   ({"live": {"script": "x.py"}}, "live")):
    doc = {**base, **extra}
    try:
        settings.script_args(doc, "s.toml")
        failures.append(f"{key}: {extra} was not refused")
    except ValueError as e:
        if not str(e).startswith(f"s.toml: {key}: "):
            failures.append(f"{key}: refused as {e}")
# Two devices: drafters in all, --gpus; the model's own tables are left out.
got = settings.script_args({"name": "x", "pipeline": {"devices": 2, "drafters_per_device": 1,
                                                      "steps": 3, "heads": 16},
                            "warmup": {"mode": "lock_first_step", "backward": False},
                            "gpu": {"memory_gib": 80}, "explore": {"strategy": "dfs"}})
if got != "--drafters 2 --gpus 2 --warmup lock_first_step --steps 3 --heads 16".split():
    failures.append(f"two devices: {got}")

# tools/gpu/conformance-v2.sh keeps its own rows for the GPU run: the same arguments.
with open(os.path.join(src, "tools", "gpu", "conformance-v2.sh")) as f:
    rows = re.findall(r'^\s+"([\w-]+)\|([\w/-]+)\|([^"]*)"$', f.read(), re.M)
if len(rows) != len(conformance.CASES):
    failures.append(f"tools/gpu/conformance-v2.sh has {len(rows)} rows, not {len(conformance.CASES)}")
for name, scenario, args in rows:
    derived = " ".join(conformance.case_args(f"scenarios/{scenario}.toml"))
    if args != derived:
        failures.append(f"tools/gpu/conformance-v2.sh {name}: {args!r}, derived {derived!r}")

for args in (["--help"], ["--list"]):
    r = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        failures.append(f"conformance.py {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    elif args == ["--list"] and "sequential-forward-only: --drafters 2 --warmup sequential " \
            "--no-warmup-backward" not in r.stdout:
        failures.append(f"conformance.py --list:\n{r.stdout}")

if failures:
    sys.exit("\n".join(failures))
print(f"conformance: {len(conformance.CASES)} cases' arguments derived from their scenarios")

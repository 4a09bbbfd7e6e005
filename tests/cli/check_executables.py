#!/usr/bin/env python3
"""racelab is a light core; a live subject's command runs in the sibling executable that has it.

- racelab links neither LibTorch nor libpython (ldd), and --version works.
- Where the build made racelab-python (racelab-torch), `live python` (`live torch`) runs there,
  also through a symbolic link to racelab (tools/build.sh puts one on PATH): the sibling's own
  answer comes back, not the stand-in's.
- A racelab copied alone, without its siblings, says so in one line, exit 2, where the build made
  them; where it did not (the sanitizer builds), the stand-in's one line, exit 2, as before.
Usage: check_executables.py RACELAB HAVE_PYTHON HAVE_TORCH   (the last two 1 or 0)
"""
import os, shutil, subprocess, sys, tempfile

racelab, have_python, have_torch = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
failures = []


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)


def one_line_error(r, must, what):
    lines = r.stderr.strip().splitlines()
    if r.returncode != 2 or len(lines) != 1 or any(m not in lines[0] for m in must):
        failures.append(f"{what}: expected exit 2 and one line with {must}, got exit "
                        f"{r.returncode}:\n{r.stdout}{r.stderr}")


def python_cmd(binary, tmp):
    return run(binary, "live", "python", "--interpose", "standin", "--executions", "1",
               "--out", f"{tmp}/py", f"{tmp}/no-such-script.py")


def torch_cmd(binary, tmp):
    return run(binary, "live", "torch", "--device", "cuda", "--executions", "1", "--hidden", "32",
               "--heads", "2", "--seq-lens", "16", "--out", f"{tmp}/torch")


ldd = subprocess.run(["ldd", racelab], capture_output=True, text=True).stdout
heavy = [l.strip() for l in ldd.splitlines() if any(k in l for k in ("libtorch", "libc10",
                                                                     "libpython"))]
if heavy:
    failures.append("racelab links what only its siblings need:\n  " + "\n  ".join(heavy))
v = run(racelab, "--version")
if v.returncode != 0 or not v.stdout.startswith("racelab "):
    failures.append(f"racelab --version: exit {v.returncode}: {v.stdout}{v.stderr}")

with tempfile.TemporaryDirectory() as tmp:
    # Through a symbolic link, as on PATH: the siblings are found beside the real file.
    link = os.path.join(tmp, "linked", "racelab")
    os.makedirs(os.path.dirname(link))
    os.symlink(os.path.abspath(racelab), link)
    r = python_cmd(link, tmp)
    if have_python:
        one_line_error(r, ["no-such-script.py"], "live python in racelab-python")
        if "without the Python bridge" in r.stderr or "missing" in r.stderr:
            failures.append(f"live python did not run in racelab-python:\n{r.stderr}")
    else:
        one_line_error(r, ["without the Python bridge"], "live python without the bridge")
    r = torch_cmd(link, tmp)
    if have_torch:
        # This LibTorch's own answer about CUDA (a CPU build: none; a GPU machine may run it).
        if "without LibTorch" in r.stderr or "missing" in r.stderr or (
                r.returncode == 2 and "CUDA" not in r.stderr):
            failures.append(f"live torch did not run in racelab-torch: exit {r.returncode}\n"
                            f"{r.stdout}{r.stderr}")
    else:
        one_line_error(r, ["without LibTorch"], "live torch without LibTorch")

    # A copy alone: its siblings are missing.
    alone = os.path.join(tmp, "alone", "racelab")
    os.makedirs(os.path.dirname(alone))
    shutil.copy2(racelab, alone)
    one_line_error(python_cmd(alone, tmp),
                   ["racelab-python", "missing"] if have_python else ["without the Python bridge"],
                   "live python beside no racelab-python")
    one_line_error(torch_cmd(alone, tmp),
                   ["racelab-torch", "missing"] if have_torch else ["without LibTorch"],
                   "live torch beside no racelab-torch")
    # Commands that run no live subject need no sibling.
    v = run(alone, "--version")
    if v.returncode != 0:
        failures.append(f"racelab --version alone: exit {v.returncode}: {v.stderr}")

if failures:
    sys.exit("\n".join(failures))
print(f"racelab links neither LibTorch nor libpython; live python runs in "
      f"{'racelab-python' if have_python else 'the stand-in'}, live torch in "
      f"{'racelab-torch' if have_torch else 'the stand-in'}; a copy alone says what is missing")

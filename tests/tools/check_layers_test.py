#!/usr/bin/env python3
"""tools/check_layers.py passes on the tree as it is, and fails, naming each one, on includes
planted in a copy that go up a layer (model/ -> run/, live/ -> harness/, results/ -> report/),
sideways between equal ranks (model/ -> live/), and on a run/ file other than run/live_job.cc that
includes a live subject.
Usage: check_layers_test.py SOURCE_DIR
"""
import pathlib, shutil, subprocess, sys, tempfile

src = pathlib.Path(sys.argv[1])
tool = src / "tools" / "check_layers.py"
failures = []


def run(root):
    r = subprocess.run([sys.executable, str(tool), str(root)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


code, out = run(src)
if code != 0:
    failures.append(f"the tree as it is: exit {code}\n{out}")

PLANTED = {  # file (relative to the copy): the include planted at its top
    "src/model/scenario.h": "run/live_job.h",
    "src/live/live.h": "harness/live.h",
    "src/results/verdict.h": "report/report.h",
    "src/model/pipeline.h": "live/live.h",
}
with tempfile.TemporaryDirectory() as tmp:
    root = pathlib.Path(tmp)
    shutil.copytree(src / "src", root / "src")
    shutil.copytree(src / "harness", root / "harness")
    code, out = run(root)
    if code != 0:
        failures.append(f"an unchanged copy: exit {code}\n{out}")
    planted = dict(PLANTED)
    runs = sorted(p for p in (root / "src" / "run").glob("*.cc") if p.name != "live_job.cc")
    if runs:
        planted[runs[0].relative_to(root).as_posix()] = "live/python/bridge.h"
    for rel, header in planted.items():
        path = root / rel
        path.write_text(f'#include "{header}"\n' + path.read_text())
    code, out = run(root)
    if code != 1:
        failures.append(f"planted includes: exit {code}, want 1\n{out}")
    for rel, header in planted.items():
        if f"{rel}:1: " not in out or header not in out:
            failures.append(f"planted {rel} -> {header} not reported:\n{out}")
    if len(out.strip().splitlines()) != len(planted):
        failures.append(f"want {len(planted)} lines, one per planted include:\n{out}")

code, out = run(src / "no-such-folder")
if code != 2:
    failures.append(f"a root without src/: exit {code}, want 2")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)

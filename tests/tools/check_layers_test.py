#!/usr/bin/env python3
"""tools/check_layers.py passes on the tree as it is, and fails, naming each one, on includes
planted in a copy that go up a layer (model/ -> run/, live/ -> harness/, results/ -> report/,
sched/ -> model/ and live/ -> results/, the way the model <-> results cycle went),
sideways between equal ranks (model/ -> live/), and on a run/ file other than run/live_job.cc that
includes a live subject; and on a strategy named outside src/sched/strategies/, by its kind or its
name (not in a comment, not as a default).
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
    "src/results/scenario_run.h": "report/report.h",
    "src/model/pipeline.h": "live/live.h",
    "src/sched/verdict.h": "model/scenario.h",
    "src/live/search.cc": "results/live_case_run.h",
}
# file: (the line planted at its top, what the report names): a strategy named outside
# src/sched/strategies/, by its kind and by its name, and one in a comment that is not reported.
NAMED = {
    "harness/live_search.cc": ("bool planted(sched::StrategyKind k) { return k == sched::StrategyKind::kDfs; }", "kDfs"),
    "src/run/suite.cc": ('static bool planted(const std::string& s) { return s == "pct"; }', '"pct"'),
    "src/report/report.cc": ("using enum sched::StrategyKind;", "StrategyKind"),
}
UNREPORTED = {  # file: a line planted at its top that names a strategy only in words or a default
    "src/run/merge.cc": '// as "dpor" would: StrategyKind::kDpor',
    "src/sched/verdict.cc": "struct Planted { sched::StrategyKind kind = sched::StrategyKind::kPos; };",
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
    for rel, (line, _) in NAMED.items():
        path = root / rel
        path.write_text(line + "\n" + path.read_text())
    for rel, line in UNREPORTED.items():
        path = root / rel
        path.write_text(line + "\n" + path.read_text())
    code, out = run(root)
    if code != 1:
        failures.append(f"planted includes and names: exit {code}, want 1\n{out}")
    lines = out.strip().splitlines()
    for rel, header in planted.items():
        if not any(l.startswith(f"{rel}:1: ") and header in l for l in lines):
            failures.append(f"planted {rel} -> {header} not reported:\n{out}")
    for rel, (_, named) in NAMED.items():
        if not any(l.startswith(f"{rel}:1: names the strategy {named} ") for l in lines):
            failures.append(f"planted {rel} naming {named} not reported:\n{out}")
    for rel in UNREPORTED:
        if any(l.startswith(f"{rel}:") for l in lines):
            failures.append(f"{rel}: a comment or a default reported:\n{out}")
    if len(lines) != len(planted) + len(NAMED):
        failures.append(f"want {len(planted) + len(NAMED)} lines, one per planted line:\n{out}")

code, out = run(src / "no-such-folder")
if code != 2:
    failures.append(f"a root without src/: exit {code}, want 2")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)

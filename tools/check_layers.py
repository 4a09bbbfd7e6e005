#!/usr/bin/env python3
"""Fails when an #include goes up a layer (docs/architecture.md, "Layers").

usage: check_layers.py [ROOT]   (ROOT: the repository, default this file's parent's parent)

Every `#include "folder/..."` in src/ and harness/ is checked against the rank table below: a file
may include its own folder and any folder of a lower rank, never one of an equal or higher rank
(so model/ and live/, both rank 2, do not include each other). The few exceptions are listed in
ALLOWED with their reason. run/ files other than run/live_job.cc include no live subject
(live/python/, live/torch/): racelab_run links none (src/CMakeLists.txt). Exit 0 when every
include keeps to the table, 1 with one line per include that does not, 2 for a bad ROOT.
"""
import pathlib
import re
import sys

RANK = {
    "racelab": -1,  # generated headers (build/.../generated/racelab/): below everything
    "util": 0,
    "sched": 1,
    "alloc": 1,
    "model": 2,
    "live": 2,
    "results": 3,
    "report": 4,
    "run": 5,
    "harness": 6,
}

# (including file or folder prefix, included header or folder prefix): allowed although it goes
# sideways or up.
ALLOWED = {
    # Torch facts shared by the model's pipeline and the LibTorch workload: sideways.
    ("live/torch/", "model/settings.h"): "torch facts shared by the model and the LibTorch workload",
    # The typed --expect of a live search (live::SearchOptions::expect) and live's judge(), which
    # calls results::judge with racelab live's wording.
    ("live/search.h", "results/verdict.h"): "live::judge and SearchOptions::expect",
    ("live/search.cc", "results/verdict.h"): "live::judge",
    # Interim, until issue 38's group B moves the use cases up (docs/plans/issue-38-house.md):
    ("model/suite.h", "results/"): "interim: explore moves to run/ (S7)",
    ("model/live_case.h", "results/"): "interim: the live case moves to run/ (S9)",
    ("model/check.h", "results/"): "interim: check moves to run/ (S9)",
}

SUBJECTS = ("live/python/", "live/torch/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def folder_of(rel):
    parts = rel.split("/")
    return "harness" if parts[0] == "harness" else parts[1]


def allowed(rel_in_src, header):
    for (who, what), _ in ALLOWED.items():
        header_matches = header == what or (what.endswith("/") and header.startswith(what))
        if header_matches and (rel_in_src == who or (who.endswith("/") and rel_in_src.startswith(who))):
            return True
    return False


def check(root):
    problems = []
    files = sorted(
        p for d in ("src", "harness") for p in (root / d).rglob("*") if p.suffix in (".h", ".cc", ".in")
    )
    for path in files:
        rel = path.relative_to(root).as_posix()
        mine = folder_of(rel)
        # The path as an #include spells it (src/ is on the include path; harness/ is not).
        spelled = rel[len("src/"):] if rel.startswith("src/") else rel
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            theirs, header = m.group(1), m.group(1) + "/" + m.group(2)
            if theirs not in RANK or theirs == mine:
                continue
            where = f"{rel}:{number}"
            if mine == "run" and spelled != "run/live_job.cc" and header.startswith(SUBJECTS):
                problems.append(f"{where}: run/ includes a live subject ({header}); only run/live_job.cc may")
                continue
            if RANK[theirs] < RANK[mine] or allowed(spelled, header):
                continue
            problems.append(
                f"{where}: {mine}/ (rank {RANK[mine]}) includes {header} (rank {RANK[theirs]}): "
                "a layer includes only lower ones (tools/check_layers.py)"
            )
    return problems


def main(argv):
    root = pathlib.Path(argv[1]) if len(argv) > 1 else pathlib.Path(__file__).resolve().parent.parent
    if not (root / "src").is_dir():
        print(f"check_layers.py: {root} has no src/ folder", file=sys.stderr)
        return 2
    unknown = sorted(p.name for p in (root / "src").iterdir() if p.is_dir() and p.name not in RANK)
    if unknown:
        print(f"check_layers.py: src/{unknown[0]} has no rank: add it to RANK", file=sys.stderr)
        return 1
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

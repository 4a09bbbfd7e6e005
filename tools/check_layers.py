#!/usr/bin/env python3
"""Fails when an #include goes up a layer (docs/architecture.md, "Layers"), or when a file outside
src/sched/strategies/ names a strategy (StrategyKind::kDpor, "dpor").

usage: check_layers.py [ROOT]   (ROOT: the repository, default this file's parent's parent)

Every `#include "folder/..."` in src/ and harness/ is checked against the rank table below: a file
may include its own folder and any folder of a lower rank, never one of an equal or higher rank
(so model/ and live/, both rank 2, do not include each other). The exceptions are listed in
ALLOWED with their reason. run/ files other than run/live_job.cc include no live subject
(live/python/, live/torch/): racelab_run links none (src/CMakeLists.txt). Exit 0 when every
include keeps to the table, 1 with one line per include that does not (and per line that names a
strategy), 2 for a bad ROOT.
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
}

SUBJECTS = ("live/python/", "live/torch/")

# Strategy names: only src/sched/strategies/ (its table, factory.cc) names a strategy, by its kind
# (StrategyKind::kDpor) or its name as a string ("dpor"); everything else asks the table's row for a
# capability (docs/architecture.md, "Strategies"). Comments are not read. A default (a declaration
# `StrategyKind strategy = StrategyKind::kPct;`) is a command's choice, not a branch: allowed.
STRATEGY_HOME = "src/sched/strategies/"
# (file, string literal): the same word meaning something else.
WORDS_ALLOWED = {
    ("src/sched/loop.cc", '"states"'): "a word of the coverage sentence (... {} states)",
    ("src/report/live_report.cc", '"dpor"'): "live report.json's key for dpor's classes (a format)",
    ("src/live/python/bridge.cc", '"random"'): "PYTHONHASHSEED=random",
    ("src/run/replay.cc", '"random"'): "--on-divergence random (run::divergence_name)",
}
DEFAULT = re.compile(r"\bStrategyKind\s+\w+\s*=\s*(?:sched::)?StrategyKind::k\w+\s*;")
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


def strategy_names(root):
    """The kinds (kDpor ...) and names ("dpor" ...) of the strategy table, read from its home."""
    home = root / STRATEGY_HOME
    enum = re.search(r"enum class StrategyKind\s*\{([^}]*)\}", (home / "strategies.h").read_text())
    kinds = re.findall(r"\bk\w+", enum.group(1)) if enum else []
    names = re.findall(r'\.name\s*=\s*"(\w+)"', (home / "factory.cc").read_text())
    return kinds, names


def code_of(line):
    """The line without its // comment (a // inside a string literal stays)."""
    quote, i = None, 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1  # the escaped character
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def check_strategy_names(root, files):
    kinds, names = strategy_names(root)
    if not kinds or not names:
        return [f"{STRATEGY_HOME}: no StrategyKind enum or table names found (tools/check_layers.py)"]
    # By the enum's name (bare kDpor would also match another enum's kRandom): `using enum` on it
    # counts as naming every kind.
    kind = re.compile(r"\bStrategyKind::(" + "|".join(kinds) + r")\b|\busing\s+enum\s+[\w:]*(StrategyKind)\b")
    name = re.compile(r'"(' + "|".join(names) + r')"')
    problems = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        if rel.startswith(STRATEGY_HOME):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = DEFAULT.sub("", code_of(line))
            m = kind.search(code)
            found = (m.group(1) or m.group(2)) if m else None
            if found is None:
                for n in name.finditer(code):
                    if (rel, n.group(0)) not in WORDS_ALLOWED:
                        found = n.group(0)
                        break
            if found is not None:
                problems.append(
                    f"{rel}:{number}: names the strategy {found} outside {STRATEGY_HOME}: ask its "
                    "row (sched::strategy_info) for the capability (tools/check_layers.py)"
                )
    return problems


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
    return problems + check_strategy_names(root, files)


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

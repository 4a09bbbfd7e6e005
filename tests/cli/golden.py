"""Golden outputs: the one normaliser of what racelab prints and writes, and the comparison.

Only what varies from run to run is replaced, nothing else, so that a changed word, count or key
shows as a difference:
  - wall-clock seconds: "0.04 s", "(53541 executions/s)", JSON "seconds": 0.000286, JUnit
    time="0.050" -> $T;
  - the scratch directory and the source tree's path -> $DIR, $SRC;
  - racelab's version (`racelab 0.1.0`, "racelab_version") -> $VERSION;
  - the embedded interpreter's patch version (CPython 3.11.2) -> CPython $PYTHON;
  - torch's own log lines (glog: "W1204 21:28:27.432000 10769 torch/...") are dropped;
  - `racelab doctor` describes the machine: only its first column (what it checks) is kept.
A live trace.txt's first column (wall-clock seconds) -> $T. HTML pages and a hang's Python thread
dump (stacks.txt: thread ids) are listed, not compared (tests/browser loads them and checks their data-expect);
binary files are compared by their digest.

Used by readme_golden.py (the test) and tools/update-golden.sh (RACELAB_UPDATE_GOLDEN=1).
"""
import difflib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Env:
    scratch: str
    source: str
    version: str


_SECONDS = re.compile(r"\b\d+\.\d+ s\b")
_RATE = re.compile(r"\(\d+ executions/s\)")
_JSON_SECONDS = re.compile(r'("seconds": )-?\d+(\.\d+)?(e-?\d+)?')
_JUNIT_TIME = re.compile(r'( time=")\d+(\.\d+)?"')
_GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ .*\n", re.M)
_CPYTHON = re.compile(r"CPython \d+\.\d+\.\d+")
_TRACE_TIME = re.compile(r"^ *\d+\.\d+ ", re.M)  # a live trace.txt line's wall-clock seconds


def normalise_text(text, env):
    for path, name in ((env.scratch, "$DIR"), (str(Path(env.scratch).resolve()), "$DIR"),
                       (env.source, "$SRC")):
        text = text.replace(path, name)
    text = _GLOG.sub("", text)
    text = _SECONDS.sub("$T s", text)
    text = _RATE.sub("($N executions/s)", text)
    text = _JSON_SECONDS.sub(r"\1$T", text)
    text = _JUNIT_TIME.sub(r'\1$T"', text)
    text = text.replace(f'"racelab_version": "{env.version}"', '"racelab_version": "$VERSION"')
    text = text.replace(f"racelab {env.version}", "racelab $VERSION")
    text = _CPYTHON.sub("CPython $PYTHON", text)
    return text


def normalise_output(command, out, env):
    text = normalise_text(out, env)
    if command.split()[:2] == ["racelab", "doctor"]:
        text = "".join((line.split()[0] if line.split() else "") + "\n"
                       for line in text.splitlines())
    return text


def normalise_file(rel, data, env):
    """The text a written file is compared by, or None to leave it out."""
    if rel.endswith(".html"):
        return "(an HTML page: listed, not compared; tests/browser checks it)\n"
    if rel.endswith("stacks.txt"):  # Python's thread dump: thread ids, the bridge's line numbers
        return "(the Python stacks of a hang: listed, not compared)\n"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"(binary: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()})\n"
    text = normalise_text(text, env)
    if rel.endswith("trace.txt"):
        text = _TRACE_TIME.sub("$T ", text)
    return text


def compare(name, where, fixture):
    """Differences between `fixture` (name -> text) and the files under `where`, as lines."""
    problems = []
    if not where.is_dir():
        return [f"{name}: no fixture ({where}); RACELAB_UPDATE_GOLDEN=1 tools/update-golden.sh "
                "writes it"]
    on_disk = {p.relative_to(where).as_posix() for p in where.rglob("*") if p.is_file()}
    for rel in sorted(on_disk - set(fixture)):
        problems.append(f"{name}: {rel}: in the fixture, not written now")
    for rel in sorted(set(fixture) - on_disk):
        problems.append(f"{name}: {rel}: written now, not in the fixture")
    for rel in sorted(on_disk & set(fixture)):
        want = (where / rel).read_text()
        if want != fixture[rel]:
            diff = difflib.unified_diff(want.splitlines(), fixture[rel].splitlines(),
                                        f"fixture/{rel}", f"now/{rel}", lineterm="", n=1)
            lines = list(diff)
            more = f"\n  ... {len(lines) - 40} more diff lines" if len(lines) > 40 else ""
            problems.append(f"{name}: {rel} differs:\n  " + "\n  ".join(lines[:40]) + more)
    return problems

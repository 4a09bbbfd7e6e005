#!/usr/bin/env python3
"""The README's "Using it" commands, run as written, against their golden outputs.

usage: readme_golden.py RACELAB SOURCE_DIR ALLOC_DATA_DIR [SET]

Each command of the README's first ```sh block under "## Using it" runs in a scratch checkout
(/tmp/racelab-cli-readme: scenarios/, tools/, tests/ and the unpacked allocator traces, racelab on
PATH), one after another as a user would type them. What it printed (stdout and stderr, in order),
its exit code and every file it wrote or changed are normalised (golden.py) and compared with
tests/data/golden/readme/NN-<slug>/: `cmd`, `exit`, `out.txt` and `files/<path>`. So "the
README's commands print and write exactly what they did before" is a test, byte for byte apart
from what varies from run to run (timings, the scratch directory, racelab's version).

SET suite-mini runs tests/data/golden/suite-mini/commands instead, one command a line, with that
folder's scenarios as mini/: five model scenarios, one per verdict and reason (a dpor proof that
passes, must kinds found, a must_not kind found, a proof cut short by its execution cap, a must kind
missing from a search that did not finish), as a suite, as two shards and their merge, and explored
alone; then `explore --help` and the refusals of a strategy's own options (their help text and
order come from the strategy table since issue 38's S26). Its fixtures are
tests/data/golden/suite-mini/NN-<command>/.

RACELAB_UPDATE_GOLDEN=1 writes the fixtures instead of comparing (tools/update-golden.sh); review
the diff as you would review the output change itself.

Skipped, as the README test always skipped them: the whole suite (the main job runs it; its shard
is pinned), `live python` where racelab was built without the Python bridge, and the commands on
`--python /opt/racelab/...` where that environment is not installed (tools/install-torch.sh).
RACELAB_SKIP_README_COMMANDS (tools/test-asan.sh) skips them all.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden  # noqa: E402

SCRATCH = Path("/tmp/racelab-cli-readme")  # suite-mini: /tmp/racelab-cli-suite-mini


def readme_commands(source):
    text = (source / "README.md").read_text()
    section = text.index("## Using it")
    begin = text.index("```sh\n", section) + len("```sh\n")
    end = text.index("```", begin)
    commands, cmd = [], ""
    for line in text[begin:end].splitlines():
        cmd += line
        if cmd.endswith("\\"):
            cmd = cmd[:-1]
            continue
        commands.append(cmd)
        cmd = ""
    return commands


def slug(command):
    words = [w for w in re.sub(r"#.*", "", command).split()[1:] if not w.startswith("-")][:3]
    text = "-".join(re.sub(r"[^a-z0-9]+", "-", Path(w).stem.lower()) for w in words)
    return re.sub(r"-+", "-", text).strip("-")[:40]


def snapshot(root):
    """Relative path -> content digest of every file under root, not following the links
    into the source tree (scenarios/, tools/, tests/, build/)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
        if Path(dirpath) == root:
            dirnames[:] = [d for d in dirnames if d != "build"]
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                continue
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def skipped(command, code, out):
    if "racelab suite scenarios/" in command and "--shard" not in command:
        return "the whole suite: the main job runs it"
    if code == 2 and "live python" in command and "python3-dev" in out:
        return "racelab was built without the Python bridge"
    if (code == 2 and "--python /opt/racelab/" in command
            and "not a virtual environment" in out):
        return "no torch environment (tools/install-torch.sh makes it)"
    return None


def record(command, code, out, files, env):
    """The fixture's files for one command: name -> text."""
    fixture = {"cmd": command + "\n", "exit": f"{code}\n",
               "out.txt": golden.normalise_output(command, out, env)}
    for rel in files:
        text = golden.normalise_file(rel, (SCRATCH / rel).read_bytes(), env)
        if text is not None:
            fixture["files/" + rel] = text
    return fixture


def main():
    global SCRATCH
    racelab, source, alloc = (Path(a).resolve() for a in sys.argv[1:4])
    which = sys.argv[4] if len(sys.argv) > 4 else "readme"
    if os.environ.get("RACELAB_SKIP_README_COMMANDS"):
        print("RACELAB_SKIP_README_COMMANDS is set: the README's commands run in tools/test.sh")
        return 0
    update = os.environ.get("RACELAB_UPDATE_GOLDEN") == "1"
    golden_dir = source / "tests/data/golden" / which
    if which != "readme":
        SCRATCH = Path(f"/tmp/racelab-cli-{which}")
    shutil.rmtree(SCRATCH, ignore_errors=True)
    SCRATCH.mkdir(parents=True)
    if which == "suite-mini":
        (SCRATCH / "mini").symlink_to(golden_dir / "scenarios")
    for d in ("scenarios", "tools", "tests"):
        (SCRATCH / d).symlink_to(source / d)
    (SCRATCH / "build/ci/tests/data").mkdir(parents=True)
    (SCRATCH / "build/ci/tests/data/alloc").symlink_to(alloc)
    version = subprocess.run([str(racelab), "--version"], capture_output=True,
                             text=True).stdout.split()[-1]
    env = golden.Env(scratch=str(SCRATCH), source=str(source), version=version)
    path = f"{racelab.parent}:/usr/bin:/bin"
    commands = (readme_commands(source) if which == "readme" else
                (golden_dir / "commands").read_text().splitlines())
    if which == "readme" and len(commands) < 10:
        print(f"README: {len(commands)} commands under \"Using it\", expected at least 10")
        return 1
    problems, seen, compared = [], set(), 0
    for n, command in enumerate(commands):
        name = f"{n:02d}-{slug(command)}"
        seen.add(name)
        if not command.startswith("racelab "):
            problems.append(f"{name}: does not start with `racelab `: {command}")
            continue
        if skipped(command, 0, "") is not None:
            print(f"{name}: skipped: {skipped(command, 0, '')}")
            continue
        before = snapshot(SCRATCH)
        r = subprocess.run(["bash", "-c", "exec 2>&1; " + command], cwd=SCRATCH,
                           env=dict(os.environ, PATH=path), stdout=subprocess.PIPE)
        out = r.stdout.decode("utf-8", "replace")
        why = skipped(command, r.returncode, out)
        if why is not None:
            print(f"{name}: skipped: {why}")
            continue
        compared += 1
        after = snapshot(SCRATCH)
        files = sorted(p for p, h in after.items() if before.get(p) != h)
        print(f"{name}: exit {r.returncode}, {len(files)} file(s) written", flush=True)
        if "command not found" in out:
            problems.append(f"{name}: command not found:\n{out}")
        fixture = record(command, r.returncode, out, files, env)
        where = golden_dir / name
        if update:
            shutil.rmtree(where, ignore_errors=True)
            for rel, text in fixture.items():
                (where / rel).parent.mkdir(parents=True, exist_ok=True)
                (where / rel).write_text(text)
            continue
        problems += golden.compare(name, where, fixture)
    if update:
        for stale in golden_dir.iterdir() if golden_dir.is_dir() else []:
            if stale.name not in seen and (stale / "cmd").exists():
                shutil.rmtree(stale)
        print(f"wrote {golden_dir}")
        return 0
    for extra in sorted(golden_dir.iterdir()) if golden_dir.is_dir() else []:
        if extra.name not in seen and (extra / "cmd").exists():
            problems.append(f"{extra.name}: a fixture for a command the README no longer has")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} difference(s) from tests/data/golden/{which}; if the change is "
              "meant, RACELAB_UPDATE_GOLDEN=1 tools/update-golden.sh rewrites the fixtures")
        return 1
    shutil.rmtree(SCRATCH, ignore_errors=True)
    print(f"{compared} commands ({which}) print and write what their fixtures say")
    return 0


if __name__ == "__main__":
    sys.exit(main())

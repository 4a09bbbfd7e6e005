#!/usr/bin/env python3
"""Version-aware live runs (issue 40; docs/live.md, "Which Python and which torch"), on the
stand-in, which says it is the torch that RACELAB_STANDIN_TORCH_VERSION names (2.11.0 by default):

- inside the table's verified range (standin: torch 2.11.x) a run says nothing of it, and
  report.json's "versions" records the torch and Python it met, "inside": true;
- outside it (2.12.1), the terminal says so in one line before any result, report.json records
  the same line as "versions"."outside", and the run goes on to its usual verdict;
- racelab check says it once in the terminal, in check.json and on check.html; racelab suite under
  the live case's line and in summary.json;
- --refuse-other-torch makes that bad input: one line, exit 2, before any execution (no
  report.json), while a torch inside the range runs as before;
- a table entry whose target the imported module lacks (an attribute, a module) is one line,
  exit 2, naming the entry;
- racelab doctor lists the embedded Python, torch (version, CUDA build, devices) and the table
  against them, for the interpreter's own packages and for a virtual environment (--python; here
  one with a fake torch 2.12.1), where the default table torch-2.11 is outside its range;
- --python refuses a directory that is no virtual environment, one line, exit 2;
- a table's process_setup runs once per process, before the first execution, on a thread that is
  no execution's; a target that does not exist, or an entry without a call, is one line, exit 2;
- the embedded interpreter's default encoding (open()'s) is the one python3 has;
- racelab check and racelab suite take --python ENV and --refuse-other-torch as live python does:
  every child of check (hunt, proof, native and memory runs) and every live case of the suite runs
  in ENV (here one whose site-packages make the stand-in say 2.12.1, so only a run in ENV can say
  so), and --refuse-other-torch refuses there: check exits 2 with the one line, the suite fails
  the case with it, while the same commands without ENV run inside the range.
Usage: check_versions.py RACELAB SOURCE_DIR
"""
import json, os, subprocess, sys, tempfile

racelab, src = os.path.abspath(sys.argv[1]), sys.argv[2]
standin = os.path.join(src, "tools", "pipelines", "drafter_standin.py")
failures = []


def run(*args, version=None, timeout=300):
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    if version is not None:
        env["RACELAB_STANDIN_TORCH_VERSION"] = version
    return subprocess.run([racelab, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def live(out, *extra, version=None, table="standin"):
    return run("live", "python", "--interpose", table, "--strategy", "random", "--executions",
               "2", "--out", out, *extra, standin, "--", "--warmup", "sequential",
               version=version)


def said(r):
    return f"\n  exit {r.returncode}\n{r.stdout}{r.stderr}"


def report(out):
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


with tempfile.TemporaryDirectory() as tmp:
    probe = run("live", "python", "--interpose", "none", "--executions", "1", "--out",
                f"{tmp}/probe", standin)
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)

    # Inside the range: nothing said, the versions recorded.
    r = live(f"{tmp}/inside")
    if r.returncode != 0 or "warning: torch" in r.stdout:
        failures.append(f"stand-in 2.11.0: expected a clean run without a version line{said(r)}")
    else:
        v = report(f"{tmp}/inside").get("versions", {})
        if v.get("torch") != "2.11.0" or v.get("inside") is not True or \
                v.get("table") != "standin" or v.get("verified_on", {}).get("torch") != ["2.11"] \
                or not v.get("python", "").startswith("3."):
            failures.append(f"stand-in 2.11.0: report.json versions {v}")
        if "torch 2.11.0" not in r.stdout:
            failures.append(f"stand-in 2.11.0: the banner does not name the torch{said(r)}")

    # Outside: one line in the terminal and in report.json; the verdict as usual.
    r = live(f"{tmp}/outside", version="2.12.1")
    line = ("torch 2.12.1: the interposition table standin was verified on torch 2.11.x; its "
            "entries and the facts behind its findings may not hold here (docs/facts.md)")
    lines = [l for l in r.stdout.splitlines() if "torch 2.12.1:" in l]
    if r.returncode != 0 or len(lines) != 1 or not lines[0].endswith("warning: " + line):
        failures.append(f"stand-in 2.12.1: expected exit 0 and one line '{line}'{said(r)}")
    else:
        v = report(f"{tmp}/outside").get("versions", {})
        if v.get("outside") != line or v.get("inside") is not False or v.get("torch") != "2.12.1":
            failures.append(f"stand-in 2.12.1: report.json versions {v}")
        banner = r.stdout.index("live python:")
        verdict = r.stdout.index("no deadlock, hang or exception")
        if not banner < r.stdout.index(line) < verdict:
            failures.append(f"stand-in 2.12.1: the line is not between banner and verdict{said(r)}")

    # racelab check: the line once in the terminal, in check.json and on check.html.
    r = run("check", "--interpose", "standin", "--strategy", "random", "--executions", "2",
            "--variant", "--warmup sequential", "--out", f"{tmp}/check", standin,
            version="2.12.1")
    try:
        with open(f"{tmp}/check/check.json") as f:
            races = json.load(f)["variants"][0]["races"]
        with open(f"{tmp}/check/check.html") as f:
            page = f.read()
    except (OSError, ValueError, KeyError, IndexError) as e:
        races, page = {}, ""
        failures.append(f"racelab check: no check.json/check.html ({e}){said(r)}")
    if r.stdout.count("warning: " + line) != 1 or races.get("versions_outside") != line or \
            "warning: " + line not in page:
        failures.append(f"racelab check on 2.12.1: expected the line in terminal, check.json and "
                        f"check.html{said(r)}")

    # racelab suite: a live case says it under its line and in summary.json.
    with open(f"{tmp}/standin-version.toml", "w") as f:
        f.write(f'name = "standin-version"\ndescription = "the stand-in says torch 2.12.1"\n\n'
                f'[live]\nscript = "{standin}"\nargs = ["--warmup", "sequential"]\n'
                f'interpose = "standin"\nstrategy = "random"\nexecutions = 2\n\n'
                f'[expect]\nmust_not = ["deadlock"]\n')
    r = run("suite", f"{tmp}/standin-version.toml", "--out", f"{tmp}/suite", version="2.12.1")
    try:
        with open(f"{tmp}/suite/summary.json") as f:
            entry = json.load(f)["scenarios"][0]
    except (OSError, ValueError, KeyError, IndexError) as e:
        entry = {}
        failures.append(f"racelab suite: no summary.json entry ({e}){said(r)}")
    if r.returncode != 0 or "warning: " + line not in r.stdout or \
            entry.get("versions_outside") != line:
        failures.append(f"racelab suite on 2.12.1: expected the line under the case and in "
                        f"summary.json ({entry}){said(r)}")

    # --refuse-other-torch: exit 2, one line, nothing run or written.
    r = live(f"{tmp}/refused", "--refuse-other-torch", version="2.12.1")
    if r.returncode != 2 or r.stderr.strip().count("\n") != 0 or line not in r.stderr or \
            "--refuse-other-torch" not in r.stderr or os.path.exists(f"{tmp}/refused/report.json"):
        failures.append(f"--refuse-other-torch on 2.12.1: expected one line, exit 2{said(r)}")
    r = live(f"{tmp}/accepted", "--refuse-other-torch")
    if r.returncode != 0:
        failures.append(f"--refuse-other-torch on 2.11.0: expected the usual clean run{said(r)}")

    # A table entry whose target the imported module lacks: one line, exit 2.
    with open(os.path.join(src, "data", "interpose", "standin.json")) as f:
        table = json.load(f)
    table["points"][0]["attr"] = "flex_attention_v2"
    with open(f"{tmp}/renamed.json", "w") as f:
        json.dump(table, f)
    r = live(f"{tmp}/renamed", table=f"{tmp}/renamed.json")
    want = (f"--interpose {tmp}/renamed.json: points entry standin_torch.flex_attention_v2: "
            f"module standin_torch has no attribute flex_attention_v2")
    if r.returncode != 2 or r.stderr.strip() != f"racelab: {want}" and want not in r.stderr:
        failures.append(f"a renamed entry: expected one line '{want}', exit 2{said(r)}")
    table["points"][0]["attr"] = "flex_attention"
    table["points"][0]["module"] = "standin_torch_v2"
    with open(f"{tmp}/moved.json", "w") as f:
        json.dump(table, f)
    r = live(f"{tmp}/moved", table=f"{tmp}/moved.json")
    if r.returncode != 2 or "standin_torch_v2" not in r.stderr or \
            r.stderr.strip().count("\n") != 0:
        failures.append(f"a moved module: expected one line, exit 2{said(r)}")

    # doctor: the embedded interpreter's own packages, then an environment with torch 2.12.1.
    def doctor_lines(*args):
        r = run("doctor", *args, timeout=600)
        items = {}
        for l in r.stdout.splitlines():
            parts = l.split(None, 2)
            if len(parts) == 3 and parts[1] in ("ok", "no"):
                items[parts[0]] = (parts[1], parts[2])
        return r, items

    r, items = doctor_lines()
    if r.returncode != 0 or not all(k in items for k in ("python", "torch", "table")) or \
            not items["python"][1].startswith("CPython 3."):
        failures.append(f"doctor: expected python, torch and table lines{said(r)}")
    venv = f"{tmp}/venv"
    made = subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", venv],
                          capture_output=True, text=True)
    if made.returncode != 0:
        failures.append(f"python3 -m venv failed: {made.stderr}")
    else:
        site = subprocess.run([f"{venv}/bin/python", "-c",
                               "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              capture_output=True, text=True).stdout.strip()
        os.makedirs(f"{site}/torch")
        with open(f"{site}/torch/__init__.py", "w") as f:
            f.write("__version__ = '2.12.1'\n\n\nclass version:\n    cuda = None\n\n\n"
                    "class cuda:\n    @staticmethod\n    def is_available():\n"
                    "        return False\n")
        r, items = doctor_lines("--python", venv)
        t = items.get("torch", ("", ""))
        table_line = items.get("table", ("", ""))
        if r.returncode != 0 or t[0] != "ok" or not t[1].startswith("2.12.1 at ") or \
                "CPU build" not in t[1] or f"virtual environment {venv}" not in \
                items.get("python", ("", ""))[1] or table_line[0] != "no" or \
                not table_line[1].startswith("torch 2.12.1: the interposition table torch-2.11 "
                                             "was verified on torch 2.11.x"):
            failures.append(f"doctor --python (fake torch 2.12.1): {items}{said(r)}")

    # check and suite: --python and --refuse-other-torch reach every child. The environment's
    # .pth (run by site at start-up, as for any package) makes the stand-in say 2.12.1 there only.
    shifted = f"{tmp}/venv-2.12.1"
    made = subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", shifted],
                          capture_output=True, text=True)
    site = subprocess.run([f"{shifted}/bin/python", "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    if made.returncode != 0 or not site:
        failures.append(f"python3 -m venv failed: {made.stderr}")
    else:
        with open(f"{site}/standin_version.pth", "w") as f:
            f.write("import os; os.environ['RACELAB_STANDIN_TORCH_VERSION'] = '2.12.1'\n")

        def check(out, *extra):
            r = run("check", "--interpose", "standin", "--strategy", "random", "--executions",
                    "1", "--proof-executions", "40", "--native-runs", "1", *extra, "--variant",
                    "--warmup sequential", "--out", out, standin)
            try:
                with open(f"{out}/check.json") as f:
                    return r, json.load(f)
            except (OSError, ValueError):
                return r, {}

        r, j = check(f"{tmp}/check-venv", "--python", shifted)
        v = (j.get("variants") or [{}])[0]
        commands = [v.get("races", {}).get("command", ""),
                    v.get("races", {}).get("proof", {}).get("command", ""),
                    v.get("native", {}).get("command", ""), v.get("memory", {}).get("command", "")]
        if r.returncode != 0 or r.stdout.count("warning: " + line) != 1 or \
                v.get("races", {}).get("versions_outside") != line or \
                j.get("python") != shifted or \
                not all(f"--python={shifted}" in c for c in commands):
            failures.append(f"check --python (stand-in 2.12.1 in the environment): expected the "
                            f"line once, exit 0, --python on every child {commands}{said(r)}")
        r, j = check(f"{tmp}/check-refused", "--python", shifted, "--refuse-other-torch")
        if r.returncode != 2 or r.stderr.strip().count("\n") != 0 or line not in r.stderr or \
                "--refuse-other-torch" not in r.stderr:
            failures.append(f"check --refuse-other-torch in the 2.12.1 environment: expected one "
                            f"line, exit 2{said(r)}")
        r, j = check(f"{tmp}/check-inside", "--refuse-other-torch", "--no-prove", "--no-memory")
        if r.returncode != 0 or "warning: torch" in r.stdout:
            failures.append(f"check --refuse-other-torch on 2.11.0: expected a pass{said(r)}")

        with open(f"{tmp}/standin-inside.toml", "w") as f:
            f.write(f'name = "standin-inside"\ndescription = "the stand-in, in an environment"'
                    f'\n\n[live]\nscript = "{standin}"\nargs = ["--warmup", "sequential"]\n'
                    f'interpose = "standin"\nstrategy = "random"\nexecutions = 2\n\n'
                    f'[expect]\nmust_not = ["deadlock"]\n')

        def suite(out, *extra):
            r = run("suite", f"{tmp}/standin-inside.toml", "--out", out, *extra)
            try:
                with open(f"{out}/summary.json") as f:
                    return r, json.load(f)["scenarios"][0]
            except (OSError, ValueError, KeyError, IndexError):
                return r, {}

        r, entry = suite(f"{tmp}/suite-venv", "--python", shifted)
        if r.returncode != 0 or entry.get("versions_outside") != line or \
                f"--python={shifted}" not in entry.get("command", ""):
            failures.append(f"suite --python (stand-in 2.12.1 in the environment): expected a "
                            f"pass with the line ({entry}){said(r)}")
        r, entry = suite(f"{tmp}/suite-refused", "--python", shifted, "--refuse-other-torch")
        if r.returncode != 1 or entry.get("verdict") != "fail" or \
                line not in entry.get("verdict_reason", ""):
            failures.append(f"suite --refuse-other-torch in the 2.12.1 environment: expected the "
                            f"case to fail with the line ({entry}){said(r)}")
        r, entry = suite(f"{tmp}/suite-inside", "--refuse-other-torch")
        if r.returncode != 0 or entry.get("verdict") != "pass":
            failures.append(f"suite --refuse-other-torch on 2.11.0: expected a pass ({entry})"
                            f"{said(r)}")

    # A table's process_setup: once per process, before the first execution, on a thread that is
    # no execution's (torch-2.11's F14 entry relies on it); a missing target is one line, exit 2.
    setup_script = os.path.join(src, "tests", "live", "pipelines", "process_setup_script.py")

    def setup_table(path, calls):
        with open(path, "w") as f:
            json.dump({"format": "racelab-interpose", "version": 1, "name": "setup-probe",
                       "process_setup": calls}, f)

    setup_table(f"{tmp}/setup.json", [{"call": "process_setup_probe.setup", "why": "test"}])
    r = run("live", "python", "--interpose", f"{tmp}/setup.json", "--strategy", "random",
            "--executions", "3", "--out", f"{tmp}/setup", setup_script)
    if r.returncode != 0 or "no deadlock, hang or exception" not in r.stdout or \
            report(f"{tmp}/setup").get("executions") != 3:
        failures.append(f"process_setup: expected 3 clean executions, each seeing one call made "
                        f"on another thread{said(r)}")
    # skip_if: an entry whose callable says true is not called (two calls would fail the script).
    setup_table(f"{tmp}/setup-skip.json", [
        {"call": "process_setup_probe.setup", "skip_if": "process_setup_probe.yes"},
        {"call": "process_setup_probe.setup", "skip_if": "process_setup_probe.no"}])
    r = run("live", "python", "--interpose", f"{tmp}/setup-skip.json", "--strategy", "random",
            "--executions", "2", "--out", f"{tmp}/setup-skip", setup_script)
    if r.returncode != 0 or report(f"{tmp}/setup-skip").get("executions") != 2:
        failures.append(f"process_setup skip_if: expected the skipped entry not called and the "
                        f"other called once{said(r)}")
    setup_table(f"{tmp}/setup-skip-bad.json", [{"call": "process_setup_probe.setup",
                                                "skip_if": "process_setup_probe.nosuch"}])
    r = run("live", "python", "--interpose", f"{tmp}/setup-skip-bad.json", "--out",
            f"{tmp}/setup-skip-bad", setup_script)
    want = "process_setup entry process_setup_probe.nosuch: module process_setup_probe has no " \
           "attribute nosuch"
    if r.returncode != 2 or want not in r.stderr:
        failures.append(f"process_setup, missing skip_if target: expected '{want}', exit 2"
                        f"{said(r)}")
    setup_table(f"{tmp}/setup-missing.json", [{"call": "process_setup_probe.nosuch"}])
    r = run("live", "python", "--interpose", f"{tmp}/setup-missing.json", "--out",
            f"{tmp}/setup-missing", setup_script)
    want = "process_setup entry process_setup_probe.nosuch: module process_setup_probe has no " \
           "attribute nosuch"
    if r.returncode != 2 or want not in r.stderr or r.stderr.strip().count("\n") != 0:
        failures.append(f"process_setup, missing target: expected one line '{want}', exit 2"
                        f"{said(r)}")
    setup_table(f"{tmp}/setup-skip-type.json", [{"call": "process_setup_probe.setup",
                                                 "skip_if": 3}])
    r = run("live", "python", "--interpose", f"{tmp}/setup-skip-type.json", "--out",
            f"{tmp}/setup-skip-type", setup_script)
    if r.returncode != 2 or "skip_if must be MODULE.FUNC" not in r.stderr:
        failures.append(f"process_setup, skip_if not a string: expected one line, exit 2"
                        f"{said(r)}")
    setup_table(f"{tmp}/setup-bad.json", [{"call": 3}])
    r = run("live", "python", "--interpose", f"{tmp}/setup-bad.json", "--out",
            f"{tmp}/setup-bad", setup_script)
    if r.returncode != 2 or "every entry of process_setup needs a call" not in r.stderr:
        failures.append(f"process_setup, malformed entry: expected one line, exit 2{said(r)}")

    # The embedded interpreter's default encoding is python3's (a C locale would make it ASCII,
    # which failed torch 2.13.0's import of Inductor).
    with open(f"{tmp}/encoding.py", "w") as f:
        f.write("import locale\nprint('encoding', locale.getpreferredencoding(False))\n")
    r = run("live", "python", "--interpose", "none", "--executions", "1", "--out",
            f"{tmp}/encoding", f"{tmp}/encoding.py")
    want = subprocess.run(["/usr/bin/python3", f"{tmp}/encoding.py"], capture_output=True,
                          text=True).stdout.strip()
    if r.returncode != 0 or want not in r.stdout.splitlines():
        failures.append(f"encoding: expected '{want}' as python3 says{said(r)}")

    r = run("live", "python", "--python", tmp, "--interpose", "none", standin)
    if r.returncode != 2 or "not a virtual environment" not in r.stderr:
        failures.append(f"--python with no environment: expected one line, exit 2{said(r)}")

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("version checks: inside, outside, refused, missing entries, doctor: all as expected")

#!/usr/bin/env python3
"""One vocabulary of pipeline settings: the Python copy (tools/pipelines/settings.py) against the
C++ one (src/model/settings.h) as racelab uses it, and the Python pipelines against settings.py.

- the scenario parser's names (its errors list them: `racelab explore` on a bad scenario) are
  settings.ATTENTIONS and settings.WARMUP_MODES;
- `racelab live torch --help`: --warmup lists settings.LIVE_WARMUP_MODES, --attention
  settings.WORKLOAD_ATTENTIONS, and its table of scenario keys is settings.SETTINGS' live torch
  column, key for key; every option named there is one of live torch's; live torch refuses the
  model-only warmup;
- the drafter pipelines (pipeline.parser) and train_queue.py take the live modes, every Python
  option settings.SETTINGS names exists in some pipeline, and each deprecated spelling parses as
  its replacement with one warning line on stderr.
Usage: check_settings.py RACELAB SOURCE_DIR
"""
import argparse, contextlib, io, os, re, subprocess, sys, tempfile

racelab, src = sys.argv[1], sys.argv[2]
pipelines = os.path.join(src, "tools", "pipelines")
sys.path.insert(0, pipelines)
import settings  # noqa: E402
import pipeline  # noqa: E402

failures = []


def check(ok, msg):
    if not ok:
        failures.append(msg)


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60, **kw)


# The scenario parser's names, from its errors.
with tempfile.TemporaryDirectory() as tmp:
    for table, key, want in (("pipeline", "attention", settings.ATTENTIONS),
                             ("warmup", "mode", settings.WARMUP_MODES)):
        path = os.path.join(tmp, f"{key}.toml")
        with open(path, "w") as f:
            f.write(f'name = "x"\n[{table}]\n{key} = "no-such-name"\n')
        r = run(racelab, "explore", path, "--out", os.path.join(tmp, "out"))
        m = re.search(rf'{table}\.{key}: unknown value "no-such-name": expected (.*)', r.stderr)
        got = tuple(m.group(1).strip().split(" | ")) if m else None
        check(r.returncode == 2 and got == want,
              f"the scenario parser's {table}.{key} names are {got}, settings.py's {want} "
              f"(exit {r.returncode}: {r.stderr.strip()})")

# racelab live torch --help: the option lists and the table of scenario keys.
r = run(racelab, "live", "torch", "--help")
check(r.returncode == 0, f"racelab live torch --help: exit {r.returncode}")
helptext = r.stdout
options = set(re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", helptext, re.M))


def listed(option):
    m = re.search(rf"^\s+{option} TEXT=\S+\s+(.*)$", helptext, re.M)
    return tuple(m.group(1).split(" (")[0].split(" | ")) if m else None


check(listed("--warmup") == settings.LIVE_WARMUP_MODES,
      f"live torch --warmup lists {listed('--warmup')}, settings.py {settings.LIVE_WARMUP_MODES}")
check(listed("--attention") == settings.WORKLOAD_ATTENTIONS,
      f"live torch --attention lists {listed('--attention')}, settings.py "
      f"{settings.WORKLOAD_ATTENTIONS}")
head = "Scenario settings (docs/scenarios.md) and their options here:"
check(head in helptext, "live torch --help has no table of scenario keys")
rows = {}
for line in helptext.split(head, 1)[-1].splitlines():
    cols = re.split(r"\s{2,}", line.strip())
    if len(cols) >= 2 and "." in cols[0]:
        rows[cols[0]] = "" if cols[1] == "-" else cols[1]
want = {key: live for key, (live, _, _) in settings.SETTINGS.items()}
check(rows == want, f"live torch's scenario keys and options differ from settings.py's:\n"
      f"  only in live torch: {sorted(set(rows.items()) - set(want.items()))}\n"
      f"  only in settings.py: {sorted(set(want.items()) - set(rows.items()))}")
for key, option in rows.items():
    check(not option or option in options, f"{key}: {option} is no option of live torch")
# The older spellings stay accepted as aliases (docs/cli.md), outside the table.
for alias in ("--seq-lens", "--hidden"):
    check(alias in options, f"live torch no longer takes {alias}, the alias docs/cli.md promises")
    check(alias not in rows.values(), f"{alias} is an alias, not the table's spelling")
with tempfile.TemporaryDirectory() as tmp:
    r = run(racelab, "live", "torch", "--warmup", settings.MODEL_ONLY_WARMUP, "--executions", "1",
            "--out", tmp)
check(r.returncode == 2 and "not available live" in r.stderr,
      f"live torch --warmup {settings.MODEL_ONLY_WARMUP}: exit {r.returncode}: {r.stderr}")

# The Python pipelines.
p = pipeline.parser("check")
for mode in settings.LIVE_WARMUP_MODES:
    check(p.parse_args(["--warmup", mode]).warmup == mode, f"pipeline.py refuses --warmup {mode}")
with contextlib.redirect_stderr(io.StringIO()):
    try:
        p.parse_args(["--warmup", settings.MODEL_ONLY_WARMUP])
        failures.append("pipeline.py takes the model-only warmup")
    except SystemExit:
        pass
python_options = set()
for parser_file in ("pipeline.py", "drafter_torch.py", "train_queue_torch.py"):
    with open(os.path.join(pipelines, parser_file)) as f:
        text = f.read()
    python_options |= set(re.findall(r'"(--[a-z][\w-]*)"', text))
with open(os.path.join(pipelines, "settings.py")) as f:
    python_options |= set(re.findall(r'add_argument\(\s*"(--[a-z][\w-]*)"', f.read()))
for key, (_, option, _) in settings.SETTINGS.items():
    check(not option or option in python_options, f"{key}: no Python pipeline has {option}")

for (option, old), new in settings.DEPRECATED.items():
    if option == "--attention":
        target = argparse.ArgumentParser(prog="check")
        settings.add_attention(target, ("flex_compiled", "sdpa_chunked"), "flex_compiled")
    else:
        target = pipeline.parser("check")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        got = vars(target.parse_args([option, old]))
    check(got == vars(target.parse_args(new)),
          f"{option} {old} parses as {got}, not as {' '.join(new)}")
    lines = err.getvalue().splitlines()
    check(len(lines) == 1 and "deprecated" in lines[0],
          f"{option} {old}: stderr was {err.getvalue()!r}, not one warning line")
    check(settings.upgrade_args([option, old]) == new, f"upgrade_args({option} {old})")

# train_queue.py (the stand-in's user pipeline) takes its two modes from settings.py.
env = dict(os.environ, PYTHONPATH=pipelines)
train = os.path.join(src, "tests", "live", "pipelines", "train_queue.py")
r = run(sys.executable, train, "--help", env=env)
check(r.returncode == 0 and "none | sequential" in r.stdout, f"train_queue.py --help: {r.stdout}"
      f"{r.stderr}")

if failures:
    sys.exit("\n".join(failures))
print(f"settings: the scenario parser, racelab live torch and the Python pipelines agree "
      f"({len(settings.SETTINGS)} keys)")

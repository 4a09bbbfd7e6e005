"""Runs the racelab commands of docs/examples/ (GitHub Actions matrix, Slurm array, Kubernetes
Indexed Job) locally, shard by shard, merges, and checks the merged result equals one unsharded
run byte for byte apart from timings and output paths.

Usage: python3 check_examples.py RACELAB_BIN SOURCE_DIR WORKDIR
The scenarios are the bundled deadlock scenarios found by sampling, sdpa-fused as bundled (a dpor
proof) and sdpa-fused under bounded dfs (74,272 executions): they check how dpor's and DFS's
subtrees are dealt to shards and merged. The unsharded run has --jobs 2: a split runs dpor
stateless (its state cache belongs to one job), so one split run, not one job, is what the merged
shards must equal; dfs and the sampling strategies give the same for any number of jobs.
lazy-one-drafter-per-gpu is left out: it checks nothing sdpa-fused does not.
"""
import json
import os
import re
import shutil
import subprocess
import sys

racelab, src, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
shutil.copytree(os.path.join(src, "scenarios/deadlock"), os.path.join(work, "scenarios/deadlock"),
                ignore=shutil.ignore_patterns("lazy-one-drafter-per-gpu.toml"))
os.makedirs(os.path.join(work, "scenarios/warmup"))
shutil.copy(os.path.join(src, "scenarios/sdpa/sdpa-fused.toml"), os.path.join(work, "scenarios/warmup/"))
fused = open(os.path.join(src, "scenarios/sdpa/sdpa-fused.toml")).read()
assert 'strategy = "dpor"\n' in fused, "sdpa-fused is no longer a dpor proof: update this test"
fused_dfs = fused.replace('name = "sdpa-fused"', 'name = "sdpa-fused-dfs"').replace(
    'strategy = "dpor"\n', 'strategy = "dfs"\nmax_preemptions = 2\n')
open(os.path.join(work, "scenarios/warmup/sdpa-fused-dfs.toml"), "w").write(fused_dfs)

N = 4
SUBST = [
    ("${{ matrix.shard }}", "{K}"),
    ("$SLURM_ARRAY_TASK_ID", "{K}"),
    ("$SLURM_ARRAY_TASK_COUNT", str(N)),
    ("$SLURM_CPUS_PER_TASK", "2"),
    ("$JOB_COMPLETION_INDEX", "{K}"),
    ("/results/", "results/"),
]


def sh(cmd, ok=(0, 1)):
    r = subprocess.run(cmd, shell=True, cwd=work, capture_output=True, text=True)
    assert r.returncode in ok, f"{cmd}\n-> {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def normalised(out_dir):
    """Every JSON file under out_dir, with timings and the out_dir prefix taken out."""
    files = {}
    base = os.path.join(work, out_dir)
    for root, _, names in os.walk(base):
        for n in names:
            if not n.endswith(".json"):
                continue
            path = os.path.join(root, n)
            text = open(path).read().replace(out_dir + "/", "OUT/")
            data = json.loads(text)

            def strip(d):
                if isinstance(d, dict):
                    return {k: strip(v) for k, v in d.items() if k != "seconds"}
                if isinstance(d, list):
                    return [strip(v) for v in d]
                return d

            files[os.path.relpath(path, base)] = strip(data)
    return files


sh(f"{racelab} suite scenarios --jobs 2 --out full")
reference = normalised("full")
assert "summary.json" in reference and len(reference) > 5, sorted(reference)
# Both proofs are in it, exhaustive: dpor's (split, stateless) and dfs's within its bound.
verdicts = {s["scenario"]: s for s in reference["summary.json"]["scenarios"]}
for name, coverage in (("sdpa-fused", "every interleaving class explored (dpor(unbounded), split"),
                       ("sdpa-fused-dfs", "exhaustive within the bound (dfs(max_preemptions=2))")):
    assert verdicts[name]["verdict"] == "pass" and verdicts[name]["exhausted"], verdicts[name]
    assert coverage in verdicts[name]["coverage"], verdicts[name]

for example in ["github-actions.yml", "slurm-array.sh", "k8s-indexed-job.yaml"]:
    text = open(os.path.join(src, "docs/examples", example)).read()
    for a, b in SUBST:
        text = text.replace(a, b)
    commands = re.findall(r"racelab (?:suite|explore|merge) [^\"\n;|]*", text)
    shard_cmds = [c.strip() for c in commands if "--shard" in c]
    merge_cmds = [c.strip() for c in commands if c.startswith("racelab merge")]
    assert len(shard_cmds) == 1 and len(merge_cmds) == 1, (example, commands)
    for f in os.listdir(work):
        if f not in ("scenarios", "full"):
            shutil.rmtree(os.path.join(work, f))
    for k in range(N):
        cmd = shard_cmds[0].replace("{K}", str(k))
        out = re.search(r"--out (\S+)", cmd).group(1)
        os.makedirs(os.path.join(work, os.path.dirname(out) or "."), exist_ok=True)
        # A shard that found no failure exits 0: what it cannot settle alone waits for merge.
        r = sh(cmd.replace("racelab ", racelab + " ", 1), ok=(0,))
        assert f"shard {k}/{N}: " in r.stdout and "exhaustive" not in r.stdout, r.stdout
    merge = merge_cmds[0]
    sh(merge.replace("racelab ", racelab + " ", 1))
    merged_dir = re.search(r"--out (\S+)", merge).group(1)
    merged = normalised(merged_dir)
    merged.pop("junit.xml", None)
    assert set(merged) == set(reference), (example, sorted(set(merged) ^ set(reference)))
    for name in reference:
        assert merged[name] == reference[name], (example, name)
    print(f"{example}: {N} shards merged == one unsharded run ({len(reference)} JSON files)")

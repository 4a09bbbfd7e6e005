#!/usr/bin/env python3
"""Executions to the first deadlock of live searches, per strategy, over the same seeds: the live
counterpart of tools/bench/first-deadlock.sh (docs/performance.md).

For each case (lazy-2: two drafters, lazy-4: four, warmup none), strategy and seed 1..SEEDS it runs
  racelab live python PIPELINE --interpose TABLE --strategy S --seed N --executions CAP
      --expect deadlock --hang-timeout H --cycle-confirm-ms 2000 -- --drafters D --warmup none
(--expect deadlock searches past other failures, such as the FX tracing crash) and reads the
deadlock's execution from report.json. One process per search: a deadlock leaves threads stuck.

  first_deadlock_live.py --racelab R --mode torch|standin --seeds N --cap C --out DIR [--cases ...]

Writes DIR/runs.tsv (one line per search) and DIR/table.txt (per case and strategy: median, min,
max and mean executions to the deadlock among the searches that found it, and how many did; a
median over fewer than half the seeds is given as "> CAP").
"""
import argparse, json, os, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = {"lazy-2": ["--drafters", "2", "--warmup", "none"],
         "lazy-4": ["--drafters", "4", "--warmup", "none"]}
STRATEGIES = ["random", "pct", "pos", "surw"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--racelab", required=True)
    p.add_argument("--mode", choices=["torch", "standin"], required=True)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--cap", type=int, default=12)
    p.add_argument("--out", required=True)
    p.add_argument("--cases", nargs="*", default=list(CASES))
    p.add_argument("--strategies", nargs="*", default=STRATEGIES)
    p.add_argument("--hang-timeout", default="90")
    p.add_argument("--time-limit", type=float, default=0, help="seconds per search (0: none)")
    a = p.parse_args()
    for c in a.cases:
        if c not in CASES:
            sys.exit(f"first_deadlock_live.py: unknown case {c!r}: expected {', '.join(CASES)}")
    script = os.path.join(ROOT, "tools", "pipelines",
                          "drafter_torch.py" if a.mode == "torch" else "drafter_standin.py")
    table = "torch-2.11" if a.mode == "torch" else "standin"
    os.makedirs(a.out, exist_ok=True)
    rows = []
    with open(os.path.join(a.out, "runs.tsv"), "w") as tsv:
        tsv.write("case\tstrategy\tseed\tdeadlock_at\texecutions\tseconds\texit\tkinds\n")
        for case in a.cases:
            for s in a.strategies:
                for seed in range(a.first_seed, a.first_seed + a.seeds):
                    d = os.path.join(a.out, case, s, f"seed-{seed}")
                    cmd = [a.racelab, "live", "python", "--interpose", table, "--strategy", s,
                           "--seed", str(seed), "--executions", str(a.cap), "--expect",
                           "deadlock", "--hang-timeout", a.hang_timeout, "--cycle-confirm-ms",
                           "2000", "--out", d]
                    if a.time_limit:
                        cmd += ["--time-limit", str(a.time_limit)]
                    cmd += [script, "--"] + CASES[case]
                    t0 = time.time()
                    r = subprocess.run(cmd, capture_output=True, text=True)
                    secs = time.time() - t0
                    os.makedirs(d, exist_ok=True)
                    with open(os.path.join(d, "live.log"), "w") as log:
                        log.write(" ".join(cmd) + "\n" + r.stdout + r.stderr)
                    try:
                        rep = json.load(open(os.path.join(d, "report.json")))
                    except (OSError, ValueError):
                        rep = {}
                    at = next((f["execution"] + 1 for f in rep.get("findings", [])
                               if f.get("kind") == "deadlock"), None)
                    kinds = ",".join(f"{k}:{n}" for k, n in sorted(rep.get("kinds_seen", {}).items()))
                    rows.append((case, s, seed, at))
                    tsv.write(f"{case}\t{s}\t{seed}\t{at if at else '-'}\t"
                              f"{rep.get('executions', '-')}\t{secs:.1f}\t{r.returncode}\t{kinds}\n")
                    tsv.flush()
                    print(f"{case} {s} seed {seed}: deadlock at {at or '-'} "
                          f"({rep.get('executions', '?')} executions, {secs:.0f} s)", flush=True)
    lines = [f"executions to the first deadlock ({a.mode}), seeds {a.first_seed}.."
             f"{a.first_seed + a.seeds - 1}, cap {a.cap} "
             "executions per search",
             f"{'case':8} {'strategy':8} {'median':>7} {'min':>4} {'max':>4} {'mean':>6} {'found':>6}"]
    for case in a.cases:
        for s in a.strategies:
            got = sorted(at for c, st, _, at in rows if c == case and st == s and at)
            n = sum(1 for c, st, _, _ in rows if c == case and st == s)
            if 2 * len(got) > n or (2 * len(got) == n and n > 0):
                # The searches that did not find it count as beyond the cap.
                med = statistics.median(got + [a.cap + 1] * (n - len(got)))
                med_s = f"> {a.cap}" if med > a.cap else f"{med:g}"
            else:
                med_s = f"> {a.cap}"
            lines.append(f"{case:8} {s:8} {med_s:>7} {min(got) if got else '-':>4} "
                         f"{max(got) if got else '-':>4} "
                         f"{statistics.mean(got) if got else float('nan'):6.1f} {len(got):>3}/{n}")
    text = "\n".join(lines) + "\n"
    open(os.path.join(a.out, "table.txt"), "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()

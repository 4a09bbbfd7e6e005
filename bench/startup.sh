#!/usr/bin/env bash
# Start-up cost of racelab's commands that run no live subject (docs/performance.md, Start-up):
# for each binary, `racelab --version` and `racelab explore` of the lazy-2 scenario, each run N
# times in turn; prints the median wall time, explore's overhead (wall time minus the seconds its
# report.json says the exploration took), the median CPU time (user + system: what the process
# cost, whatever else the machine runs), the largest resident set and the shared libraries the
# binary loads (ldd).
#   bench/startup.sh RACELAB [RACELAB...] [-n RUNS]
#   e.g. bench/startup.sh /work/main/build/ci/harness/racelab build/ci/harness/racelab -n 20
set -euo pipefail
runs=15
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs="$2"; shift 2 ;;
    *) bins+=("$1"); shift ;;
  esac
done
[ ${#bins[@]} -gt 0 ] || { echo "usage: bench/startup.sh RACELAB [RACELAB...] [-n RUNS]" >&2; exit 2; }
scenario="$(cd "$(dirname "$0")/.." && pwd)/scenarios/deadlock/lazy-2-drafters.toml"
exec python3 - "$runs" "$scenario" "${bins[@]}" <<'EOF'
import json, os, statistics, subprocess, sys, tempfile, time

runs, scenario, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]


def run(argv):
    """Wall seconds, CPU seconds and peak resident set (MB) of one run, its output discarded."""
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # explore exits 1: lazy-2 has failures to find
        sys.exit(f"{' '.join(argv)}: exit {code}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def libraries(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    return sum(1 for line in out.splitlines() if line.strip())


with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "explore")
    commands = [("--version", lambda b: [b, "--version"], None),
                ("explore lazy-2", lambda b: [b, "explore", scenario, "--out", out], out)]
    print(f"{runs} runs each, interleaved; wall: median (min-max); rss: largest")
    print(f"{'binary':<44} {'command':<15} {'wall ms':>22} {'overhead ms':>12} {'cpu ms':>8} "
          f"{'rss MB':>7} {'libs':>5}")
    for name, argv_of, report_dir in commands:
        samples = {b: [] for b in bins}
        work = {b: [] for b in bins}
        for _ in range(runs):
            for b in bins:  # in turn, so that the machine's load falls on each alike
                samples[b].append(run(argv_of(os.path.abspath(b))))
                if report_dir:
                    work[b].append(json.load(open(os.path.join(report_dir, "report.json")))["seconds"])
        for b in bins:
            walls = [w * 1000 for w, _, _ in samples[b]]
            cpu = statistics.median(c * 1000 for _, c, _ in samples[b])
            med = statistics.median(walls)
            over = med - statistics.median(work[b]) * 1000 if work[b] else med
            rss = max(r for _, _, r in samples[b])
            label = b if len(b) <= 44 else "..." + b[-41:]
            wall = f"{med:.1f} ({min(walls):.0f}-{max(walls):.0f})"
            print(f"{label:<44} {name:<15} {wall:>22} {over:>12.1f} {cpu:>8.1f} {rss:>7.1f} "
                  f"{libraries(b):>5}")
EOF

#!/usr/bin/env bash
# The bundled suite's proofs (docs/performance.md, "The suite's proofs: dpor, not bounded dfs"):
# each bundled scenario that proves with dpor, under dfs within 2 preemptions (the suite's proof
# until 2026-12-04), under its own dpor on one job (state cache) and split over 2 jobs
# (stateless, as tools/run-suite.sh's --jobs 0 runs it on 2 cores). Executions and seconds of
# each (report.json), and whether all three are exhaustive with the same finding kinds.
#   bench/suite_proofs.sh RACELAB
set -euo pipefail
racelab=${1:?usage: bench/suite_proofs.sh RACELAB}
racelab=$(readlink -f "$racelab")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$(dirname "$0")/.."
echo "machine: $(nproc) cores; date: $(date -u +%F); $("$racelab" --version)"
printf '%-30s %12s %8s %8s %8s %10s %8s %s\n' scenario "dfs execs" "dfs s" "dpor" "dpor s" \
  "dpor j2" "j2 s" "exhaustive, same kinds"
for f in $(grep -l '^strategy = "dpor"' scenarios/*/*.toml); do
  n=$(basename "$f" .toml)
  "$racelab" explore "$f" --strategy dfs --max-preemptions 2 --iterations 100000000 --no-shrink \
    --out "$out/dfs-$n" >/dev/null 2>&1 || true
  "$racelab" explore "$f" --no-shrink --out "$out/dpor-$n" >/dev/null 2>&1 || true
  "$racelab" explore "$f" --no-shrink --jobs 2 --out "$out/j2-$n" >/dev/null 2>&1 || true
  python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1:3]
a, b, c = (json.load(open(f"{out}/{k}-{n}/report.json")) for k in ("dfs", "dpor", "j2"))
kinds = lambda r: sorted({f["kind"] for f in r["findings"]})
ok = kinds(a) == kinds(b) == kinds(c) and all(r["exhausted"] for r in (a, b, c))
print(f'{n:<30} {a["executions"]:>12} {a["seconds"]:>8.2f} {b["executions"]:>8} '
      f'{b["seconds"]:>8.3f} {c["executions"]:>10} {c["seconds"]:>8.3f} {ok} {kinds(b)}')
PY
done

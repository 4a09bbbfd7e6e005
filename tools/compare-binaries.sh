#!/usr/bin/env bash
# Behaviour unchanged? Runs `racelab explore` on every bundled model scenario under every model
# strategy with two racelab binaries and compares what they wrote: the terminal output, report.json
# (less seconds and racelab_version) and every schedule file, byte for byte. For refactors that must
# not change a trace (issue 20's "byte-identical traces for the same seeds").
#   tools/compare-binaries.sh OLD_RACELAB NEW_RACELAB [OUTDIR]   (exit 1 when anything differs)
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: tools/compare-binaries.sh OLD_RACELAB NEW_RACELAB [OUTDIR]}
new=${2:?usage: tools/compare-binaries.sh OLD_RACELAB NEW_RACELAB [OUTDIR]}
out=${3:-/tmp/racelab-compare}
rm -rf "$out"
mkdir -p "$out/old" "$out/new"
differ=0
runs=0
for f in scenarios/deadlock/*.toml scenarios/recompile/*.toml scenarios/sdpa/*.toml \
  scenarios/warmup/*.toml; do
  n=$(basename "$f" .toml)
  for s in pct random pos surw dfs dpor; do
    extra=()
    case $s in dfs | dpor) extra=(--iterations 20000) ;; esac
    for side in old new; do
      bin=$old
      [ $side = new ] && bin=$new
      "$bin" explore "$f" --strategy $s "${extra[@]}" --out "$out/$side/$n-$s" \
        >"$out/$side/$n-$s.txt" 2>&1
      echo "rc=$?" >>"$out/$side/$n-$s.txt"
      # Timings and the output directory's own name are all that may differ.
      sed -i -E "s|$out/$side|OUT|g; s/[0-9.]+ s \\([0-9]+ executions\\/s\\)/T/; s/; [0-9.]+ s$//" \
        "$out/$side/$n-$s.txt"
    done
    runs=$((runs + 1))
    cmp -s "$out/old/$n-$s.txt" "$out/new/$n-$s.txt" || { echo "differs: $n $s (terminal)"; differ=1; }
    for j in "$out"/old/$n-$s/schedules/*.json; do
      [ -e "$j" ] || continue
      cmp -s "$j" "$out/new/$n-$s/schedules/$(basename "$j")" ||
        { echo "differs: $n $s $(basename "$j")"; differ=1; }
    done
    python3 - "$out" "$n-$s" <<'PY' || differ=1
import json, sys
out, name = sys.argv[1], sys.argv[2]
def load(side):
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("seconds", "racelab_version")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, str):
            return x.replace(f"{out}/{side}", "OUT")
        return x
    return strip(json.load(open(f"{out}/{side}/{name}/report.json")))
if load("old") != load("new"):
    print(f"differs: {name} (report.json)")
    sys.exit(1)
PY
  done
done
echo "$runs explorations compared ($out)"
exit $differ

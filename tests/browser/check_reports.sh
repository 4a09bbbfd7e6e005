#!/usr/bin/env bash
# Opens racelab's HTML reports in headless Chromium: one deadlock finding (interleaving table and
# wait-for cycle) as explore and as replay write it, four drafters deadlocked, a 150+ step
# interleaving with out-of-memory and recompile-limit findings, one allocator report (memory plots
# and segment map) and one what-if. Fails on any console message (racelab's pages write none, so
# any is an error), on a failed self-check (which also counts the step labels laid out and not cut
# off), on a missing element or on a property of the rendered page that does not hold (props());
# takes a screenshot of each.
# Usage: check_reports.sh RACELAB_BIN SOURCE_DIR ALLOC_DATA WORKDIR   (exit 77: no chromium)
set -euo pipefail
racelab=$1 src=$2 data=$3 work=$4
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: no chromium on this machine (Debian: apt-get install chromium; tools/install-deps.sh does)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
cd "$src"
"$racelab" explore scenarios/deadlock/lazy-2-drafters.toml --out "$work/explore" >/dev/null || test $? -eq 1
"$racelab" replay "$work/explore/schedules/lazy-2-drafters.deadlock.json" --out "$work/replay" >/dev/null || test $? -eq 1
"$racelab" explore scenarios/deadlock/lazy-4-drafters.toml --out "$work/lazy4" >/dev/null || test $? -eq 1
"$racelab" explore scenarios/recompile/eight-gpus-long-context.toml --out "$work/long" >/dev/null || test $? -eq 1
"$racelab" alloc report "$data/fixtures-h200/snap_sdpa_chunked_1.pickle" --out "$work/alloc" >/dev/null
"$racelab" alloc whatif "$data/fixtures-h200/snap_sdpa_chunked_1.pickle" --config expandable_segments:True \
  --out "$work/whatif" >/dev/null

# Properties of a rendered page (its DOM after the scripts ran), one check per name.
props() {  # dom, name, report.json (or -)
  python3 - "$@" <<'PY'
import json, re, sys
dom, name, report = sys.argv[1], sys.argv[2], sys.argv[3]
html = open(dom, encoding="utf-8").read()
bad = []
def need(cond, what):
    if not cond: bad.append(what)
tables = re.findall(r'<table class="lanes[^"]*"[^>]*>.*?</table>', html, re.S)
if name in ("explore", "replay", "lazy4", "long"):
    need(tables, "no interleaving table")
    for t in tables:
        m = re.search(r'data-labels-visible="(\d+)/(\d+)"', t)
        steps = len(re.findall(r'<tr class="step"', t))
        if 'lanes folded' in t[:40]:
            need(len(re.findall(r'<span class="label">', t)) == steps, "a folded step without a label")
            continue
        need(m and m.group(1) == m.group(2) == str(steps), "step labels not all laid out: %s of %d" % (m and m.group(0), steps))
    kinds = re.findall(r'<h3 class="finding" data-kind="([a-z_]+)"', html)
    need(kinds, "no finding headings")
    if name != "long":
        need(kinds and kinds[0] == "deadlock", "the deadlock is not the first finding: %s" % kinds)
        cycle = re.search(r'<svg class="cycle".*?</svg>', html, re.S).group(0)
        labels = re.findall(r'<text class="edge-label"[^>]*>([^<]+)</text>', cycle)
        need(len(labels) == cycle.count('class="edge"') and all(l.startswith("waits for ") and len(l) > 12 for l in labels),
             "cycle edges without a label of what they wait for: %s" % labels)
        need('class="legend"' in html, "no legend")
    # Every thread the deadlock names as blocked is marked blocked at the end of its interleaving.
    if report != "-" and name != "long":
        r = json.load(open(report))
        d = next(f for f in r["findings"] if f["kind"] == "deadlock")
        first = tables[0] if 'lanes folded' not in tables[0][:40] else tables[1]
        blocked = re.findall(r'<td class="end-blocked"><span class="label">blocked: ([^<]*)</span>', first)
        need(len(blocked) == len(d["details"]) and len(blocked) >= 2,
             "%d threads marked blocked, the deadlock names %d" % (len(blocked), len(d["details"])))
        marked = len(re.findall(r'<th class="thread[^"]*is-blocked', first))
        need(marked == len(d["details"]), "%d column heads marked blocked" % marked)
    if name == "lazy4":
        need(len(blocked) >= 5, "four drafters and the worker are not all shown blocked")
    if name == "long":
        main = [t for t in tables if 'lanes folded' not in t[:40]]
        m = re.search(r'data-steps="(\d+)" data-shown="(\d+)"', main[0])
        need(int(m.group(1)) >= 150 and int(m.group(2)) <= 60, "a long interleaving not opened at its end: %s" % m.group(0))
        need('<details class="fold">' in html, "no folded steps")
        for k in ("oom", "recompile_limit"):
            need('<tr class="event ev-%s">' % k in html, "no %s event in the interleaving" % k)
if name == "alloc":
    plots = re.findall(r'<svg class="plot"[^>]*data-y-min="([-\d.e+]+)" data-y-max="([-\d.e+]+)"', html)
    need(len(plots) >= 2, "fewer than two memory plots")
    lo, hi = float(plots[0][0]), float(plots[0][1])
    need(lo > 0 and lo > hi / 2, "the reserved plot's y axis starts at %g (data up to %g)" % (lo, hi))
    need("y axis starts at" in html, "no note where the y axis starts")
    for cls in ("settle", "marker-settle", "marker", "s-a2", "s-b2", "axis-title"):
        need('class="%s"' % cls in html, "no %s in the plots" % cls)
    need(re.search(r'<text class="axis-title"[^>]*>memory \(MiB\)</text>', html), "no y axis title with its unit")
if name == "whatif":
    need(re.search(r'<p class="device"><b>Device assumed:</b> [0-9.]+ GiB', html), "no device memory assumed")
    over = re.search(r'<svg class="plot"[^>]*data-y-min="([-\d.e+]+)" data-y-max="([-\d.e+]+)"', html)
    need(over and float(over.group(1)) > 0, "no memory plot over the trace with its y axis scaled to the data")
if bad:
    print("FAIL %s: %s" % (name, "; ".join(bad)))
    sys.exit(1)
print("ok %s: properties hold" % name)
PY
}

check() {  # page, then the CSS classes that must be drawn
  local page=$1; shift
  local name; name=$(basename "$(dirname "$page")")
  local flags=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run
               --user-data-dir="$work/profile" --enable-logging=stderr --v=0)
  "$browser" "${flags[@]}" --dump-dom "file://$page" >"$work/$name.dom" 2>"$work/$name.log"
  "$browser" "${flags[@]}" --window-size=1200,900 --screenshot="$work/$name.png" "file://$page" \
    >/dev/null 2>>"$work/$name.log"
  if grep -q "CONSOLE" "$work/$name.log"; then
    echo "FAIL $name: console output:"; grep "CONSOLE" "$work/$name.log"; return 1
  fi
  if ! grep -q 'data-selfcheck="ok"' "$work/$name.dom"; then
    echo "FAIL $name: self-check: $(grep -o 'data-selfcheck="[^"]*"' "$work/$name.dom" || echo 'did not run')"
    return 1
  fi
  for cls in "$@"; do
    if ! grep -q "<[a-z]* class=\"$cls\"" "$work/$name.dom"; then echo "FAIL $name: no <... class=\"$cls\">"; return 1; fi
  done
  local report=-
  [ -f "$(dirname "$page")/report.json" ] && report=$(dirname "$page")/report.json
  [ "$name" = replay ] && report=$work/explore/report.json
  props "$work/$name.dom" "$name" "$report" || return 1
  local size; size=$(stat -c %s "$work/$name.png" 2>/dev/null || echo 0)
  if [ "$size" -lt 10000 ]; then echo "FAIL $name: screenshot missing or blank ($size bytes)"; return 1; fi
  echo "ok $name: self-check ok, no console output, ${*} drawn, screenshot $size bytes"
}
check "$work/explore/report.html" lanes cycle
check "$work/replay/report.html" lanes cycle
check "$work/lazy4/report.html" lanes cycle
check "$work/long/report.html" lanes
check "$work/alloc/report.html" plot segmap
check "$work/whatif/whatif.html" plot

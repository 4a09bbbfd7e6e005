#!/usr/bin/env bash
# Opens racelab's HTML reports in headless Chromium: one deadlock finding (lanes and wait-for
# cycle) as explore and as replay write it, one allocator report (memory plot and segment map) and one what-if. Fails on any console
# message (racelab's pages write none, so any is an error), on a failed self-check, or on a missing
# element; takes a screenshot of each.
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
"$racelab" alloc report "$data/fixtures-h200/snap_sdpa_chunked_1.pickle" --out "$work/alloc" >/dev/null
"$racelab" alloc whatif "$data/fixtures-h200/snap_sdpa_chunked_1.pickle" --config expandable_segments:True \
  --out "$work/whatif" >/dev/null

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
    if ! grep -q "<svg class=\"$cls\"" "$work/$name.dom"; then echo "FAIL $name: no <svg class=\"$cls\">"; return 1; fi
  done
  local size; size=$(stat -c %s "$work/$name.png" 2>/dev/null || echo 0)
  if [ "$size" -lt 10000 ]; then echo "FAIL $name: screenshot missing or blank ($size bytes)"; return 1; fi
  echo "ok $name: self-check ok, no console output, ${*} drawn, screenshot $size bytes"
}
check "$work/explore/report.html" lanes cycle
check "$work/replay/report.html" lanes cycle
check "$work/alloc/report.html" plot segmap
check "$work/whatif/whatif.html" plot

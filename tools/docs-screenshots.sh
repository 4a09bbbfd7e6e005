#!/usr/bin/env bash
# Regenerates docs/img/report-*.png from the reports the browser test writes (run the tests first:
# tools/test.sh, or ctest -L browser in build/ci). Needs chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-build/ci/tests/browser/work}
[ -f "$work/explore/report.html" ] || { echo "no reports under $work: run ctest -L browser first" >&2; exit 2; }
shot() { chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files \
           --virtual-time-budget=3000 --window-size="$1" --screenshot="$2" "file://$PWD/$3" 2>/dev/null; }
# frame DIR PAGE SELECTOR WIDTH,HEIGHT PNG: the page in a frame scrolled to the first SELECTOR.
frame() {
  local w=${4%,*} h=${4#*,} sel
  sel=$(printf '%s' "$3" | sed 's/"/\&quot;/g')
  cat >"$work/$1/docshot.html" <<HTML
<html><body style="margin:0"><iframe id="f" src="$2" style="width:${w}px;height:${h}px;border:0"
onload="var e=this.contentDocument.querySelector('$sel'); if (e) e.scrollIntoView(true);"></iframe></body></html>
HTML
  shot "$4" "$5" "$work/$1/docshot.html"
}
# The suite opens on its answer: the totals, a verdict per scenario (live ones too), the causes.
shot 1100,1300 docs/img/report-suite.png "$work/suite/report.html"
# A shard says it is one: partial searches, PENDING what merge judges.
shot 1100,900 docs/img/report-shard.png "$work/shard1/report.html"
# The thread that raised FX's error: the exception in its column, "crashed" in its end row.
frame crash report.html 'tr.crash-row' 1100,700 docs/img/report-crash.png
# The deadlock first (findings by severity): its message, cycle, blocked threads and interleaving.
frame explore report.html 'h3.finding' 1100,1500 docs/img/report-deadlock.png
# The replay page: its legend and the table's end row (every thread blocked, and on what).
frame replay report.html 'h3' 1100,1300 docs/img/report-replay.png
# Four drafters and their worker deadlocked: the end of the interleaving, every one blocked.
frame lazy4 report.html 'tr.step[data-step="20"]' 1100,900 docs/img/report-blocked.png
# 163 steps on 8 GPUs: opened at the steps before the finding, the rest folded, oom marked.
frame long report.html 'tr.step[data-step="146"]' 1100,900 docs/img/report-long.png
shot 1100,1250 docs/img/report-alloc.png "$work/alloc/report.html"
shot 1100,900 docs/img/report-whatif.png "$work/whatif/whatif.html"
# racelab check opens on its verdicts, the FX crash and the thread that raised it under its row.
shot 1100,600 docs/img/report-check.png "$work/check/check.html"
ls -la docs/img/report-*.png

#!/usr/bin/env bash
# Regenerates docs/img/report-*.png from the reports the browser test writes (run the tests first:
# tools/test.sh, or ctest -L browser in build/ci). Needs chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-build/ci/tests/browser/work}
[ -f "$work/explore/report.html" ] || { echo "no reports under $work: run ctest -L browser first" >&2; exit 2; }
shot() { chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --allow-file-access-from-files \
           --window-size="$1" --screenshot="$2" "file://$PWD/$3" 2>/dev/null; }
# The deadlock finding sits below the other findings: frame it.
cat >"$work/explore/docshot.html" <<'HTML'
<html><body style="margin:0"><div style="overflow:hidden;height:980px;width:1100px"><iframe src="report.html"
style="width:1100px;height:4000px;border:0;margin-top:-1330px"></iframe></div></body></html>
HTML
shot 1100,980 docs/img/report-deadlock.png "$work/explore/docshot.html"
shot 1100,1250 docs/img/report-alloc.png "$work/alloc/report.html"
shot 1100,520 docs/img/report-whatif.png "$work/whatif/whatif.html"
ls -la docs/img/report-*.png

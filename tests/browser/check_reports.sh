#!/usr/bin/env bash
# Opens racelab's HTML reports in headless Chromium: the bundled suite, one shard of it and the
# merge of its 4 shards (every scenario, live ones included, on the page with the totals of the
# terminal, summary.json and junit.xml; the verdicts first, interleavings folded; a shard says it
# is one and never "exhaustive"), one deadlock and FX crash finding (interleaving table and wait-for
# cycle) as explore and as replay write it, four drafters deadlocked, a 150+ step interleaving with
# out-of-memory and recompile-limit findings, one allocator report (memory plots and segment map),
# one what-if and two racelab checks (the stand-in's FX crash, and a fake torch's memory plots).
# Fails on any console message (racelab's pages write none, so
# any is an error), on a failed self-check (which also counts the step labels laid out and not cut
# off, labels broken inside a word, open interleavings narrower than the page, text cut off at the
# edge of a drawing and legend keys unlike what they stand for), on a missing
# element or on a property of the rendered page or of the command's output that does not hold
# (props(), outputs()); takes a screenshot of each.
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
# The suite as one run, as 4 shards (each exits 0: nothing it finds fails) and merged.
"$racelab" suite scenarios/ --jobs 0 --out "$work/suite/" --junit "$work/suite/junit.xml" >"$work/suite.out" 2>&1 || test $? -eq 1
for k in 0 1 2 3; do
  "$racelab" suite scenarios/ --jobs 0 --shard $k/4 --out "$work/shard$k" --junit "$work/shard$k/junit.xml" \
    >"$work/shard$k.out" 2>&1 || { echo "FAIL shard $k/4 exited $?:"; cat "$work/shard$k.out"; exit 1; }
done
"$racelab" merge "$work/shard3" "$work/shard1" "$work/shard0" "$work/shard2" --out "$work/merge" \
  --junit "$work/merge/junit.xml" >"$work/merge.out" 2>&1 || test $? -eq 1
"$racelab" explore scenarios/deadlock/lazy-2-drafters.toml --out "$work/explore" >"$work/explore.out" || test $? -eq 1
"$racelab" replay "$work/explore/schedules/lazy-2-drafters.deadlock.json" --out "$work/replay" >"$work/replay.out" || test $? -eq 1
"$racelab" replay "$work/explore/schedules/lazy-2-drafters.fx_trace_error.json" --out "$work/crash" >/dev/null || test $? -eq 1
"$racelab" explore scenarios/deadlock/lazy-4-drafters.toml --out "$work/lazy4" >/dev/null || test $? -eq 1
"$racelab" explore scenarios/recompile/eight-gpus-long-context.toml --out "$work/long" >/dev/null || test $? -eq 1
"$racelab" alloc report "$data"/fixtures-h200/snap_*.pickle --out "$work/alloc" >"$work/alloc.out"
"$racelab" alloc whatif "$data/fixtures-h200/snap_sdpa_chunked_1.pickle" --config expandable_segments:True \
  --out "$work/whatif" >"$work/whatif.out"
"$racelab" check --interpose standin --strategy random --variant "--warmup none" --variant "--warmup sequential" \
  --out "$work/check" tools/pipelines/drafter_standin.py >"$work/check.out" 2>&1 || test $? -eq 1
# Memory plots on the check page: the fake CUDA torch (its races sampled: the memory is under test).
PYTHONPATH=tests/live/pipelines/fakecuda "$racelab" check --interpose none --executions 2 --no-prove \
  --variant "--steps 6" --variant "--steps 6 --late-grow" --out "$work/checkmem" tests/alloc/drafters_pipeline.py \
  >"$work/checkmem.out" 2>&1 || test $? -eq 1

# What the commands printed and wrote, beside their pages.
outputs() {
  python3 - "$work" <<'PY'
import json, os, re, sys, xml.etree.ElementTree as ET
work = sys.argv[1]
bad = []
def need(cond, what):
    if not cond: bad.append(what)
def text(name): return open(os.path.join(work, name), encoding="utf-8").read()
suite, merge = text("suite.out"), text("merge.out")
# One run and the merge of 4 shards print the same lines, timings and directories apart (and the
# suite's progress line before a live case runs, "....  NAME running live: SCRIPT ...").
def norm(out, d):
    # (a live case's log lies where it ran: shard 0's directory)
    return [re.sub(re.escape(work) + r"/[a-z0-9]+/", "OUT/", re.sub(r"[0-9]+\.[0-9]+ s\b", "T s", l))
            for l in out.splitlines() if not l.startswith(("note:", "...."))]
need(norm(merge, "merge") == norm(suite, "suite"), "merge does not print what the suite prints:\n%s\n---\n%s" % (merge, suite))
need("//" not in suite, "a double slash in the suite's output")
summary = json.load(open(os.path.join(work, "suite/summary.json")))
names = [e["scenario"] for e in summary["scenarios"]]
need(len(names) >= 19 and any(e.get("live") for e in summary["scenarios"]), "the suite's summary lacks the live cases")
for d in ("suite", "merge"):
    s = json.load(open(os.path.join(work, d, "summary.json")))
    need(sorted(e["scenario"] for e in s["scenarios"]) == sorted(names), "%s/summary.json: other scenarios" % d)
    suites = ET.parse(os.path.join(work, d, "junit.xml")).getroot()
    cases = [c.get("name") for c in suites.iter("testcase")]
    need(sorted(cases) == sorted(names), "%s/junit.xml: %d testcases, the suite has %d" % (d, len(cases), len(names)))
    ts = suites.find("testsuite")
    need(int(ts.get("skipped")) == s["skipped"] and int(ts.get("failures")) == s["failed"] + s["inconclusive"],
         "%s/junit.xml: skipped/failures differ from summary.json" % d)
    need("%d scenarios: %d passed, %d failed, %d inconclusive" % (len(names), s["passed"], s["failed"], s["inconclusive"]) in text(d + ".out"),
         "%s: the totals line differs from summary.json" % d)
for k in range(4):
    out = text("shard%d.out" % k)
    # A split search never says exhaustive; a live case runs whole on shard 0 (its line: "(live)").
    split = "\n".join(l for l in out.splitlines() if "(live)" not in l)
    need("shard %d/4: " % k in out and "exhaustive" not in split, "shard %d: no 'shard %d/4' totals, or 'exhaustive'" % (k, k))
    need("partial (" in out, "shard %d: no partial coverage" % k)
    s = json.load(open(os.path.join(work, "shard%d/summary.json" % k)))
    need(s["partition"] == {"shard": k, "shards": 4} and s["failed"] == 0, "shard %d: summary.json" % k)
    need('name="racelab.suite (shard %d/4)"' % k in text("shard%d/junit.xml" % k), "shard %d: junit.xml does not say it is a shard" % k)
# explore: the suite's verdict word, and why its exit code differs.
need(re.search(r"^PASS: expectations hold \(exit 1: explore exits 1 when it finds a failure", text("explore.out"), re.M),
     "explore does not say PASS with its exit code explained")
# replay --out writes report.json beside report.html, and says so.
r = json.load(open(os.path.join(work, "replay/report.json")))
need(r["format"] == "racelab-replay-report" and r["reproduced"] and r["findings"][0]["kind"] == "deadlock", "replay/report.json")
need("wrote %s/replay/report.json, %s/replay/report.html" % (work, work) in text("replay.out"), "replay's wrote line")
# alloc report and whatif list every file they wrote; the table's columns stay apart.
alloc = text("alloc.out")
written = re.search(r"^wrote (.*)$", alloc, re.M).group(1).split(", ")
need(sorted(os.path.basename(f) for f in written) == sorted(os.listdir(os.path.join(work, "alloc"))),
     "alloc report's wrote line %s, the directory %s" % (written, os.listdir(os.path.join(work, "alloc"))))
rows = [l for l in alloc.splitlines() if re.search(r"\d+ -> \d+ +[\d.]+ MiB -> ", l)]
need(len(rows) >= 2 and all(re.search(r"\d+ -> \d+ {2,}[\d.]+ MiB -> ", l) for l in rows), "alloc report's table runs columns together: %s" % rows[:2])
written = re.search(r"^wrote (.*)$", text("whatif.out"), re.M).group(1).split(", ")
need(sorted(os.path.basename(f) for f in written) == sorted(os.listdir(os.path.join(work, "whatif"))), "whatif's wrote line: %s" % written)
if bad:
    print("FAIL outputs: " + "\n  ".join(bad)); sys.exit(1)
print("ok outputs: merge prints the suite's lines, shards say so, every file listed")
PY
}
outputs

# Properties of a rendered page (its DOM after the scripts ran), one check per name.
props() {  # dom, name, report.json (or -)
  python3 - "$@" <<'PY'
import json, re, sys
dom, name, report = sys.argv[1], sys.argv[2], sys.argv[3]
# The line-break opportunities in identifiers (<wbr>) are layout, not text.
html = open(dom, encoding="utf-8").read().replace("<wbr>", "")
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
if name in ("suite", "merge", "shard1"):
    import html as H
    summary = json.load(open(report))
    rows = re.findall(r'<tr class="verdict" data-scenario="([^"]+)" data-verdict="([A-Z]+)"', html)
    names = [e["scenario"] for e in summary["scenarios"]]
    need(sorted(r[0] for r in rows) == sorted(names), "the page's scenarios %d, summary.json's %d" % (len(rows), len(names)))
    words = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE", "skipped": "SKIP", "pending": "PENDING"}
    need(dict(rows) == {e["scenario"]: words[e["verdict"]] for e in summary["scenarios"]}, "verdicts differ from summary.json")
    t = re.search(r'<p class="totals[^"]*" data-scenarios="(\d+)" data-passed="(\d+)" data-failed="(\d+)" '
                  r'data-inconclusive="(\d+)" data-skipped="(\d+)" data-pending="(\d+)">([^<]*)</p>', html)
    need(t, "no totals line")
    if t:
        need([int(x) for x in t.groups()[1:5]] == [summary[k] for k in ("passed", "failed", "inconclusive", "skipped")],
             "the totals differ from summary.json")
        terminal = re.sub(r"[0-9]+\.[0-9]+ s", "T s", open(report.rsplit("/", 2)[0] + "/%s.out" % name).read())
        need(re.sub(r"[0-9]+\.[0-9]+ s", "T s", H.unescape(t.group(7))) in terminal, "the totals line is not the terminal's: %s" % t.group(7))
    # The answer first: the verdicts before any scenario's section; each failure's cause under it.
    need(0 <= html.find('<table class="verdicts"') < html.find('<details class="scenario"') and "<h2" not in html,
         "the verdict table is not first, or a scenario is not folded under it")
    for n, v in rows:
        if v in ("FAIL", "INCONCLUSIVE", "PENDING"):
            need(re.search(r'data-scenario="%s" data-verdict="%s">.*?</tr><tr class="cause">' % (re.escape(n), v), html), "%s: no one-line cause" % n)
    need('<details class="evidence" open' not in html and '<details class="scenario" open' not in html, "interleavings open on a suite page")
    height = int(re.search(r'data-height="(\d+)"', html).group(1))
    need(height <= 4 * 900, "the page is %d px tall before unfolding (over 4 screens)" % height)
    need(re.search(r"<td>train-queue-standin-lazy|data-scenario=\"train-queue-standin-lazy\"", html), "the live case train-queue-standin-lazy is not on the page")
    if name == "shard1":
        need("<h1>racelab suite · shard 1/4</h1>" in html and 'class="shard-note"' in html, "the shard page does not say it is shard 1/4")
        need("exhaustive" not in html, "a shard's page says exhaustive")
        live = [e for e in json.load(open(report.replace("shard1", "shard0")))["scenarios"] if e.get("live")]
        need(len(re.findall(r'<tr class="elsewhere"', html)) == len(live) > 0, "shard 1's page does not list the live cases of shard 0")
if name in ("crash", "explore"):
    # The thread that raised FX's error: the exception in its column, and its end row says so.
    need(re.search(r'<td class="crash" title="RuntimeError: [^"]*"><span class="label">raised RuntimeError', html), "no cell shows the exception raised")
    need(re.search(r'<td class="end-crashed"><span class="label">crashed: RuntimeError', html), "no end row says crashed")
if name == "alloc":
    plots = re.findall(r'<svg class="plot"[^>]*data-y-min="([-\d.e+]+)" data-y-max="([-\d.e+]+)"', html)
    need(len(plots) >= 2, "fewer than two memory plots")
    lo, hi = float(plots[0][0]), float(plots[0][1])
    need(lo > 0 and lo > hi / 2, "the reserved plot's y axis starts at %g (data up to %g)" % (lo, hi))
    need("y axis starts at" in html, "no note where the y axis starts")
    for cls in ("settle", "marker-settle", "marker", "s-a2", "s-b2", "axis-title"):
        need('class="%s"' % cls in html, "no %s in the plots" % cls)
    need(re.search(r'<text class="axis-title"[^>]*>memory \(MiB\)</text>', html), "no y axis title with its unit")
if name in ("alloc", "whatif"):
    # Charts: y ticks at a round step (1, 2 or 5 times a power of ten), every tick a multiple of
    # it; the last x tick label ends at its tick (not cut at the edge); a warm-phase band is seen.
    import math
    for svg in re.findall(r'<svg class="plot"[^>]*data-y-min.*?</svg>', html, re.S):
        ys = [float(v) for v in re.findall(r'<text class="muted" x="[\d.]+" y="[\d.]+" text-anchor="end">([-\d.e+]+) ', svg)]
        steps = {round(b - a, 6) for a, b in zip(ys, ys[1:])}
        need(len(ys) >= 3 and len(steps) == 1, "y ticks not evenly stepped: %s" % ys)
        if len(steps) == 1:
            st = steps.pop(); m = st / 10 ** math.floor(math.log10(st))
            need(any(abs(m - r) < 1e-6 for r in (1, 2, 5)), "y tick step %g is not 1, 2 or 5 times a power of ten" % st)
            need(all(abs(y / st - round(y / st)) < 1e-6 for y in ys), "y ticks not multiples of their step: %s" % ys)
        xt = re.findall(r'<text class="muted x-tick" x="([\d.]+)"[^>]*text-anchor="(\w+)">([^<]*)<', svg)
        need(xt, "no x ticks")
        # Centred on their ticks, apart from one at an edge (none cut: data-cut-labels, below).
        need(all(a == "middle" for x, a, _ in xt if 120 <= float(x) <= 840), "an x tick label off its tick: %s" % xt)
        for w in re.findall(r'<rect class="settle" x="[\d.]+" y="[\d.]+" width="([\d.]+)"', svg):
            need(float(w) >= 8, "a warm-phase band %s px wide" % w)
# Every legend key looks like what it stands for: the page's script wrote the computed colours of
# the key and of the first element it stands for (a chart's series, markers and band; a lane cell).
for legend in re.findall(r'<div class="legend[^"]*">.*?</div>', html, re.S):
    chart_legend = "chart-legend" in legend[:40]
    entries = re.findall(r'<span data-key="([^"]+)"(?: data-key-props="[^"]*")? data-key-style="([^"]*)" data-drawn-style="([^"]*)">', legend)
    need(entries and len(entries) == legend.count("data-key="), "a legend entry without measured colours: %s" % legend[:200])
    for key, mine, drawn in entries:
        if drawn == "absent" and not chart_legend:
            continue  # a lane legend names cells this interleaving may not have (no crash)
        need(mine == drawn, "legend key %s is %s, the page draws %s" % (key, mine, drawn))
    if chart_legend:
        series = [e for e in entries if e[0].startswith("polyline.")]
        need(len({e[1] for e in series}) == len(series), "two series of one chart look the same: %s" % series)
charts = re.findall(r'(<svg class="plot"[^>]*data-x="[a-z]+".*?</svg>)(<div class="legend chart-legend">.*?</div>)', html, re.S)
for svg, legend in charts:
    drawn = set(re.findall(r'<polyline class="([^"]+)"', svg))
    named = set(re.findall(r'data-key="polyline\.([^"]+)"', legend))
    need(drawn == named, "the legend names series %s, the chart draws %s" % (sorted(named), sorted(drawn)))
    for kind in set(re.findall(r'<circle class="([^"]+)"', svg)) | ({"settle"} if '<rect class="settle"' in svg else set()):
        need(('data-key="circle.%s"' % kind in legend) or (kind == "settle" and 'data-key="rect.settle"' in legend), "no legend entry for %s" % kind)
    # X ticks: round numbers (every one a multiple of a 1, 2 or 5 step, evenly stepped) placed where
    # the number falls on the axis, where the points are numbers (iterations, trace events).
    if 'data-x="numbers"' in svg:
        import math
        lo, hi = (float(v) for v in re.search(r'data-x-min="([-\d.e+]+)" data-x-max="([-\d.e+]+)"', svg).groups())
        left, right = (float(v) for v in re.search(r'<line class="axis" x1="([\d.]+)" x2="([\d.]+)"', svg).groups())
        xt = [(float(x), l) for x, l in re.findall(r'<text class="muted x-tick" x="([\d.]+)"[^>]*>([^<]*)<', svg)]
        need(len(xt) >= 3 and all(re.fullmatch(r"-?\d+(\.\d+)?", l) for _, l in xt), "x tick labels that are not plain numbers: %s" % xt)
        if len(xt) >= 3 and all(re.fullmatch(r"-?\d+(\.\d+)?", l) for _, l in xt):
            vs = [float(l) for _, l in xt]
            st = vs[1] - vs[0]
            m = st / 10 ** math.floor(math.log10(st)) if st > 0 else 0
            need(any(abs(m - r) < 1e-6 for r in (1, 2, 5)), "x tick step %g is not 1, 2 or 5 times a power of ten: %s" % (st, vs))
            need(all(abs((b - a) - st) < 1e-6 * st for a, b in zip(vs, vs[1:])), "x ticks not evenly stepped: %s" % vs)
            need(all(abs(v / st - round(v / st)) < 1e-6 for v in vs), "x ticks not multiples of their step: %s" % vs)
            need(all(lo <= v <= hi for v in vs), "x ticks outside the data %g..%g: %s" % (lo, hi, vs))
            need(all(abs(x - (left + (right - left) * (v - lo) / (hi - lo))) < 0.2 for (x, _), v in zip(xt, vs)),
                 "x ticks not where their numbers fall: %s" % xt)
# Scenario names and a variant's arguments are never broken inside (lazy-2-/drafters).
if name in ("suite", "merge", "shard1", "explore", "check", "checkmem"):
    need(re.search(r'<body[^>]*data-wrapped-names="0"', html) and re.search(r'class="nw"', html), "a name wrapped inside, or none kept whole")
for svg in re.findall(r'<svg class="(?!key)[^"]*"[^>]*>', html):
    m = re.search(r'data-cut-labels="(\d+)"', svg)
    need(m is None or m.group(1) == "0", "text cut off at the edge of a drawing: %s" % svg[:120])
if name in ("alloc", "whatif", "checkmem"):
    need(charts and all("data-cut-labels=" in re.match(r"<svg[^>]*>", c[0]).group(0) for c in charts),
         "charts without a cut-label count or a legend")
if name in ("check", "checkmem"):
    # The answer first: the verdict table before any variant's evidence, every variant folded under
    # it, each one that did not pass with its one-line cause; the page a screen or two tall.
    j = json.load(open(report))
    rows = re.findall(r'<tr class="verdict" data-variant="([^"]*)" data-verdict="([A-Z]+)">', html)
    import html as H
    need([(H.unescape(a), b) for a, b in rows] == [(v["variant"], v["verdict"]) for v in j["variants"]],
         "the page's verdicts %s, check.json's %s" % (rows, [(v["variant"], v["verdict"]) for v in j["variants"]]))
    need(0 <= html.find('<table class="variants"') < html.find('<details class="variant') and "<h2" not in html,
         "the verdict table is not first, or a variant is not folded under it")
    need(html.count('<details class="variant') == len(j["variants"]) and "open=" not in html and "<details open" not in html,
         "variants not folded until asked for")
    for v in j["variants"]:
        if v["verdict"] != "PASS":
            msg = v["races"].get("message") or ""
            cause = re.search(r'data-variant="%s" data-verdict="%s">.*?</tr><tr class="cause"><td></td><td colspan="3">([^<]*)</td>'
                              % (re.escape(H.escape(v["variant"])), v["verdict"]), html, re.S)
            need(cause, "%s: no one-line cause under its verdict" % v["variant"])
            if cause and msg:
                need(H.unescape(cause.group(1)) == msg.split("\n")[0], "%s: the cause is not the race's message" % v["variant"])
    height = int(re.search(r'data-height="(\d+)"', html).group(1))
    need(height <= 2 * 900, "the check page is %d px tall before unfolding" % height)
if name == "check":
    # The FX crash: which thread raised what, on the first screen.
    need(re.search(r'<tr class="cause"><td></td><td colspan="3">RuntimeError: Detected that you are using FX[^<]*raised in drafter', html),
         "the crash and the thread that raised it are not under the failing variant's verdict")
if name == "checkmem":
    need(html.count('<svg class="plot"') >= 2 and '<circle class="marker"' in html, "no memory plots with growth markers")
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
  "$browser" "${flags[@]}" --window-size=1200,900 --dump-dom "file://$page" >"$work/$name.dom" 2>"$work/$name.log"
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
  [ -f "$(dirname "$page")/summary.json" ] && report=$(dirname "$page")/summary.json
  [ -f "$(dirname "$page")/check.json" ] && report=$(dirname "$page")/check.json
  [ "$name" = replay ] && report=$work/explore/report.json
  props "$work/$name.dom" "$name" "$report" || return 1
  local size; size=$(stat -c %s "$work/$name.png" 2>/dev/null || echo 0)
  if [ "$size" -lt 10000 ]; then echo "FAIL $name: screenshot missing or blank ($size bytes)"; return 1; fi
  echo "ok $name: self-check ok, no console output, ${*} drawn, screenshot $size bytes"
}
check "$work/suite/report.html" verdicts
check "$work/shard1/report.html" verdicts shard-note
check "$work/merge/report.html" verdicts
check "$work/explore/report.html" lanes cycle
check "$work/crash/report.html" lanes crash end-crashed
check "$work/replay/report.html" lanes cycle
check "$work/lazy4/report.html" lanes cycle
check "$work/long/report.html" lanes
check "$work/alloc/report.html" plot segmap
check "$work/whatif/whatif.html" plot
check "$work/check/check.html" variants cause
check "$work/checkmem/check.html" variants plot "legend chart-legend"

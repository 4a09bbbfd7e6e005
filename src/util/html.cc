#include "util/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace racelab::html {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

constexpr const char* kStyle = R"css(
:root { --fg:#1d2330; --muted:#667085; --line:#d0d5dd; --bg:#ffffff; --pass:#127a3c; --fail:#b42318;
        --blue:#2e62c9; --orange:#d97706; --grey:#98a2b3; --purple:#7a3fc4; --teal:#0e7490; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg);
       margin: 24px auto; max-width: 1200px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; } h3 { font-size: 15px; margin: 18px 0 6px; }
.sub { color: var(--muted); margin-bottom: 16px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { font-weight: 600; background: #f5f6f8; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--pass); font-weight: 600; } .fail { color: var(--fail); font-weight: 600; }
.copy { display: flex; gap: 8px; align-items: center; margin: 6px 0; }
.copy code { background: #f2f4f7; padding: 4px 8px; border-radius: 4px; font-size: 13px; }
.copy button { font: inherit; font-size: 12px; padding: 2px 8px; cursor: pointer; }
.scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; padding: 6px; }
svg text { font: 11px system-ui, sans-serif; fill: var(--fg); } svg .muted { fill: var(--muted); }
svg .axis { stroke: var(--line); } svg .s-a { stroke: var(--blue); fill: none; stroke-width: 2; }
svg .s-b { stroke: var(--orange); fill: none; stroke-width: 2; } svg .s-c { stroke: var(--purple); fill: none; stroke-width: 2; }
svg .marker { fill: var(--fail); } svg .bar { fill: var(--blue); }
svg .op { fill: var(--grey); } svg .op-lock { fill: var(--blue); } svg .op-unlock { fill: #8fb0ee; }
svg .op-submit { fill: var(--orange); } svg .op-wait { fill: var(--purple); } svg .op-point { fill: var(--teal); }
svg .op-event { fill: #a3a3a3; } svg .blocked { fill: var(--fail); } svg .lane-bg { fill: #f8f9fb; }
svg .edge { stroke: var(--fail); stroke-width: 2; fill: none; } svg .node { fill: #fff; stroke: var(--fail); stroke-width: 2; }
svg .blk-alloc { fill: var(--blue); } svg .blk-inactive { fill: #e4e7ec; stroke: #c4c9d2; }
svg .blk-pending { fill: var(--orange); } svg .seg-outline { fill: none; stroke: #667085; }
.legend span { display: inline-block; margin-right: 14px; } .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
.legend svg.key { vertical-align: middle; margin-right: 4px; } .legend svg.key rect.settle { stroke: #c4c9d2; } .legend i.cell { width: 14px; height: 12px; box-sizing: border-box; }
details { margin: 6px 0; } summary { cursor: pointer; color: var(--blue); }
svg .s-a2 { stroke: var(--purple); fill: none; stroke-width: 1.5; stroke-dasharray: 6 4; }
svg .s-b2 { stroke: var(--teal); fill: none; stroke-width: 1.2; stroke-dasharray: 6 4; }
svg .settle-end { stroke: var(--muted); stroke-dasharray: 3 3; } svg .y-axis { stroke: var(--muted); }
svg .settle { fill: #eef1f6; } svg .marker-settle { fill: #fff; stroke: var(--muted); stroke-width: 2; }
svg .axis-title { fill: var(--muted); font-size: 12px; } svg .axis-note { fill: var(--orange); font-size: 11px; }
svg .axis-break { stroke: var(--orange); stroke-width: 1.5; fill: none; }
svg .edge-label { fill: var(--fail); font-size: 12px; }
table.lanes { table-layout: fixed; width: 100%; margin: 0; font-size: 12.5px; line-height: 1.3; }
table.lanes th, table.lanes td { padding: 3px 6px; border-bottom: 1px solid #eef0f3; overflow-wrap: break-word; }
table.lanes col.c-step { width: 52px; }
table.lanes th.thread { text-align: left; } table.lanes th.in-cycle { color: var(--fail); }
table.lanes th.is-blocked::after { content: " (blocked)"; color: var(--fail); font-weight: 400; }
table.lanes td.num { color: var(--muted); }
td.op, .legend i.op { border-left: 4px solid var(--grey); background: #f8f9fb; }
td.op-lock, .legend i.op-lock { border-left-color: var(--blue); background: #eef3fc; } td.op-unlock, .legend i.op-unlock { border-left-color: #8fb0ee; }
td.op-submit, .legend i.op-submit { border-left-color: var(--orange); background: #fdf3e6; } td.op-wait, .legend i.op-wait { border-left-color: var(--purple); background: #f4eefb; }
td.op-point, .legend i.op-point { border-left-color: var(--teal); background: #e9f4f6; } td.op-event, .legend i.op-event { border-left-color: #a3a3a3; }
td.end-blocked, .legend i.end-blocked { border-left: 4px solid var(--fail); background: #fdecea; color: var(--fail); font-weight: 600; }
td.end-done, td.end-idle { color: var(--muted); } td.end-stopped { color: var(--orange); }
td.crash, td.end-crashed, .legend i.crash { border-left: 4px solid var(--fail); background: #fdecea; color: var(--fail); font-weight: 600; }
table.verdicts, table.variants { width: 100%; } tr.cause td { border-top: none; padding-top: 0; font-weight: 400; }
tr.verdict td { border-bottom: none; } .pending { color: var(--orange); font-weight: 600; } .skipped { color: var(--muted); font-weight: 600; }
.tag { font-size: 12px; font-weight: 400; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; }
p.totals { font-size: 15px; margin: 8px 0; } p.shard-note { background: #fff7e6; border-left: 4px solid var(--orange); padding: 6px 10px; }
td.muted, span.muted { color: var(--muted); } .nw { white-space: nowrap; } table.verdicts td.num { white-space: nowrap; }
details.scenario { border-bottom: 1px solid var(--line); padding: 4px 0; margin: 0; } details.scenario > summary { color: var(--fg); font-size: 15px; } details.evidence > summary { margin: 4px 0; }
tr.event td, .legend i.ev { background: #fff4e5; border-top: 2px solid var(--orange); } tr.event span.ev-text { display: block; max-width: 1040px; } tr.event td.fail { color: var(--fail); }
tr.gap td, tr.end td.num { color: var(--muted); font-style: italic; } tr.end td { border-top: 2px solid var(--line); }
.legend { margin: 6px 0; }
)css";

// Runs before anything else on the page: collects script errors, then checks the expected
// elements once the page is loaded.
constexpr const char* kSelfCheck = R"js(
window.__racelab_errors = [];
window.addEventListener('error', function (e) { window.__racelab_errors.push(String(e.message)); });
document.addEventListener('DOMContentLoaded', function () {
  var want = (document.body.getAttribute('data-expect') || '').split(' ').filter(Boolean);
  var missing = want.filter(function (s) { return !document.querySelector(s); });
  var problems = window.__racelab_errors.concat(missing.map(function (s) { return 'missing ' + s; }));
  // Every step of an interleaving shown open has one label, drawn and not cut off.
  document.querySelectorAll('table.lanes').forEach(function (t) {
    if (t.closest('details:not([open])')) return;
    var rows = t.querySelectorAll('tr.step'), ok = 0;
    rows.forEach(function (r) {
      var l = r.querySelectorAll('span.label');
      if (l.length !== 1 || !l[0].textContent.trim()) return;
      var b = l[0].getBoundingClientRect(), c = l[0].parentElement;
      if (b.width > 0 && b.height > 0 && c.scrollWidth <= c.clientWidth + 1) ok++;
    });
    t.setAttribute('data-labels-visible', ok + '/' + rows.length);
    if (ok !== rows.length) problems.push('step labels hidden or cut off: ' + ok + '/' + rows.length);
    // No label breaks a line inside a word: a new line starts only after a space or a <wbr>
    // (after '_', '.', ':', '/').
    var broken = 0;
    t.querySelectorAll('span.label').forEach(function (l) {
      var walk = document.createTreeWalker(l, NodeFilter.SHOW_TEXT), n, prev = null, top = null;
      while ((n = walk.nextNode())) {
        for (var i = 0; i < n.length; i++) {
          var r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);
          var rect = r.getClientRects()[0], ch = n.data[i];
          if (!rect) continue;
          if (top !== null && rect.top > top + 2 && /[A-Za-z0-9]/.test(ch) && prev && /[A-Za-z0-9]/.test(prev)) broken++;
          top = rect.top; prev = ch;
        }
      }
    });
    t.setAttribute('data-midword-breaks', String(broken));
    if (broken) problems.push('labels broken inside a word: ' + broken);
  });
  // Names kept on one line (.nw: scenario names, a variant's arguments) are: none wraps.
  var wrapped = 0;
  document.querySelectorAll('.nw').forEach(function (e) {
    if (!e.closest('details:not([open])') && e.getClientRects().length > 1) wrapped++;
  });
  document.body.setAttribute('data-wrapped-names', String(wrapped));
  if (wrapped) problems.push('names wrapped inside: ' + wrapped);
  // The page's width is used: an open interleaving is as wide as its container.
  document.querySelectorAll('table.lanes').forEach(function (t) {
    if (t.closest('details:not([open])')) return;
    var box = t.parentElement.getBoundingClientRect().width, w = t.getBoundingClientRect().width;
    t.setAttribute('data-width', Math.round(w) + '/' + Math.round(box));
    if (w < box - 20) problems.push('an interleaving narrower than the page: ' + Math.round(w) + ' of ' + Math.round(box) + ' px');
  });
  // No text of a chart or drawing is cut off at its edges (an <svg> clips what lies outside it);
  // a drawing folded away is unfolded while it is measured.
  document.querySelectorAll('svg').forEach(function (svg) {
    if (svg.classList.contains('key')) return;
    var folded = [];
    for (var d = svg.closest('details:not([open])'); d; d = d.parentElement.closest('details:not([open])')) {
      d.open = true; folded.push(d);
    }
    var box = svg.getBoundingClientRect(), cut = [];
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.width > 0 && (b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 ||
                          b.bottom > box.bottom + 0.5)) cut.push(t.textContent);
    });
    folded.forEach(function (d) { d.open = false; });
    svg.setAttribute('data-cut-labels', String(cut.length));
    if (cut.length) problems.push('labels cut off at the edge of a drawing: ' + cut.join(', '));
  });
  // Every legend key looks like what it stands for: the key and the first element its data-key
  // selects (in the chart above a chart's legend, anywhere on the page otherwise) have the same
  // computed colours. Both are written on the entry (data-key-style, data-drawn-style) for the
  // browser test; a key whose element is not on the page is "absent".
  document.querySelectorAll('div.legend').forEach(function (lg) {
    var chart = lg.classList.contains('chart-legend') ? lg.previousElementSibling : document;
    lg.querySelectorAll('[data-key]').forEach(function (it) {
      var key = it.querySelector('svg.key > *') || it.querySelector('i'), el = chart && chart.querySelector(it.getAttribute('data-key'));
      var props = (it.getAttribute('data-key-props') || (key && key.namespaceURI === 'http://www.w3.org/2000/svg'
                   ? 'stroke fill stroke-dasharray' : 'background-color border-left-color')).split(' ');
      var style = function (e) { var c = getComputedStyle(e); return props.map(function (p) { return p + ':' + c.getPropertyValue(p); }).join(';'); };
      if (!key) { problems.push('a legend entry without a key: ' + it.textContent); return; }
      it.setAttribute('data-key-style', style(key));
      if (!el) { it.setAttribute('data-drawn-style', 'absent'); return; }
      it.setAttribute('data-drawn-style', style(el));
      if (style(key) !== style(el)) problems.push('the legend key of "' + it.textContent + '" is ' + style(key) + ', the chart draws ' + style(el));
    });
  });
  document.body.setAttribute('data-height', String(document.documentElement.scrollHeight));
  document.body.setAttribute('data-selfcheck', problems.length ? 'fail: ' + problems.join('; ') : 'ok');
});
// A link to a section folded away (a variant, a scenario) unfolds it.
function racelabOpenTarget() {
  var target = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (!target) return;
  for (var d = target.closest('details'); d; d = d.parentElement.closest('details')) d.open = true;
  target.scrollIntoView();
}
window.addEventListener('hashchange', racelabOpenTarget);
document.addEventListener('DOMContentLoaded', racelabOpenTarget);
function racelabCopy(button) {
  var text = button.previousElementSibling.textContent;
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { button.textContent = 'copied'; },
                                                                   function () { button.textContent = 'select and copy'; });
}
)js";

// The round step at or above `raw`: 1, 2 or 5 times a power of ten.
double round_step(double raw) {
  if (raw <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * p * (1 + 1e-9)) return m * p;
  }
  return 10 * p;
}

// A tick value as people write it: 45000, not 4.5e+04; 0.5.
std::string tick_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:g}", v);
}

double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

}  // namespace

std::vector<double> round_ticks(double lo, double hi, double min_step) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return ticks;
  // The smallest round step above a tenth of the range: four to ten intervals.
  const double step = std::max(round_step((hi - lo) / 10), min_step);
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; ++k)
    ticks.push_back(k * step == 0 ? 0.0 : k * step);  // no "-0"
  return ticks;
}

std::string page(std::string_view title, std::string_view expect, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>{}</title><style>{}</style><script>{}</script></head>\n"
      "<body data-expect=\"{}\">\n{}\n</body></html>\n",
      escape(title), kStyle, kSelfCheck, escape(expect), body);
}

std::string copyable(std::string_view text) {
  return fmt::format(
      "<div class=\"copy\"><code>{}</code><button type=\"button\" "
      "onclick=\"racelabCopy(this)\">copy</button></div>",
      escape(text));
}

std::string line_chart(std::string_view klass, std::string_view title,
                       const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                       std::string_view unit, const std::vector<std::size_t>& markers,
                       std::string_view marker_name) {
  ChartOptions o;
  o.klass = std::string(klass);
  o.title = std::string(title);
  o.unit = std::string(unit);
  if (!markers.empty()) o.markers.push_back({markers, std::string(marker_name), "marker"});
  return line_chart(o, x_labels, series);
}

std::string line_chart(const ChartOptions& o, const std::vector<std::string>& x_labels,
                       const std::vector<Series>& series) {
  const double W = 900, H = o.x_name.empty() ? 260 : 280, left = o.y_name.empty() ? 64 : 84,
               right = 16, top = 28, bottom = o.x_name.empty() ? 34 : 50;
  const std::size_t n = x_labels.size();
  double lo = 0, hi = 0;
  bool any = false;
  for (const Series& s : series) {
    for (std::size_t i = 0; i < s.values.size() && i < n; ++i) {
      lo = any ? std::min(lo, s.values[i]) : s.values[i];
      hi = any ? std::max(hi, s.values[i]) : s.values[i];
      any = true;
    }
  }
  // Ticks at a round step (1, 2 or 5 times a power of ten) that puts four to eight intervals over
  // the data, every tick a multiple of it: 0, 20, 40, 60 MiB, never 0, 16, 33, 49.
  double ymin = 0, ymax = 1, step = 0.25;
  if (any) {
    const double from = o.zero_based ? std::min(0.0, lo) : lo;
    const double span = hi - from > 0 ? hi - from : std::max(1.0, std::abs(hi) * 0.1);
    step = round_step(span / 4);
    ymin = std::floor(from / step) * step;
    ymax = std::ceil(hi / step) * step;
    if (ymin < 0 && from >= 0) ymin = 0;
    // At least four intervals, widened below and above in turn (never below 0 for data that
    // is not): flat data at 382 MiB reads 360, 370, ... 400, not 380 and 390 alone.
    for (bool below = !o.zero_based; std::lround((ymax - ymin) / step) < 4; below = !below) {
      if (below && (ymin - step >= 0 || from < 0))
        ymin -= step;
      else
        ymax += step;
    }
  }
  // Where the points lie: at their labels' numbers (iterations, trace events), so that the x
  // ticks can be round numbers placed where they fall; at 0..n-1 where a label is no number or
  // they do not increase (annotation names).
  std::vector<double> xs(n);
  bool numeric = n > 1;
  bool integral = true;
  for (std::size_t i = 0; i < n && numeric; ++i) {
    char* end = nullptr;
    const std::string& label = x_labels[i];
    xs[i] = std::strtod(label.c_str(), &end);
    numeric = !label.empty() && end == label.c_str() + label.size() && std::isfinite(xs[i]) &&
              (i == 0 || xs[i] > xs[i - 1]);
    integral = integral && xs[i] == std::floor(xs[i]);
  }
  if (!numeric) {
    for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<double>(i);
  }
  const double x_lo = n > 0 ? xs.front() : 0, x_hi = n > 0 ? xs.back() : 0;
  auto Xv = [&](double v) {
    return left + (x_hi <= x_lo ? 0.0 : (W - left - right) * (v - x_lo) / (x_hi - x_lo));
  };
  auto X = [&](std::size_t i) { return Xv(xs[i]); };
  auto Y = [&](double v) { return top + (H - top - bottom) * (1.0 - (v - ymin) / (ymax - ymin)); };
  std::string svg = fmt::format(
      "<svg class=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\" data-y-min=\"{:g}\" data-y-max=\"{:g}\" data-x-min=\"{}\" "
      "data-x-max=\"{}\" data-x=\"{}\">",
      escape(o.klass), W, H, W, H, escape(o.title), ymin, ymax, x_lo, x_hi,
      numeric ? "numbers" : "indices");
  svg += fmt::format("<text x=\"{}\" y=\"16\">{}</text>", left, escape(o.title));
  if (o.shade_to > 0 && n > 0) {
    // From half a point before the first to half a point after the last shaded one.
    const std::size_t last = std::min(o.shade_to, n) - 1;
    const double x0 = std::max(left, n > 1 ? X(0) - (X(1) - X(0)) / 2 : X(0));
    const double x1 = std::max(
        x0 + 8, std::min(W - right, last + 1 < n ? (X(last) + X(last + 1)) / 2 : W - right));
    svg += fmt::format(
        // At least 8 px wide: a warm phase of one iteration is still seen.
        "<rect class=\"settle\" x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" "
        "height=\"{}\"><title>{}</title>"
        "</rect><text class=\"muted\" x=\"{:.1f}\" y=\"{}\">{}</text>",
        x0, top, x1 - x0, H - top - bottom, escape(o.shade_name), x1 + 4, top + 12,
        escape(o.shade_name));
    svg += fmt::format(
        "<line class=\"settle-end\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>", x1, top,
        H - bottom);
  }
  const int intervals = static_cast<int>(std::lround((ymax - ymin) / step));
  for (int k = 0; k <= intervals; ++k) {
    const double v = ymin + step * k;
    svg += fmt::format("<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>",
                       left, W - right, Y(v), Y(v));
    svg += fmt::format(
        "<text class=\"muted\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g} {}</text>", left - 6,
        Y(v) + 4, v, escape(o.unit));
  }
  if (ymin != 0) {
    // The axis does not start at 0: a break mark on it, and the words.
    const double yb = H - bottom;
    svg += fmt::format(
        "<path class=\"axis-break\" d=\"M{0},{1:.1f} l-5,3 l10,4 l-5,3\"/>"
        "<text class=\"axis-note\" x=\"{2}\" y=\"16\" text-anchor=\"end\">y axis starts at {3:g} "
        "{4}, not 0</text>",
        left, yb - 14, W - right, ymin, escape(o.unit));
  }
  svg += fmt::format("<line class=\"y-axis\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", left,
                     top, H - bottom);
  if (!o.y_name.empty()) {
    svg += fmt::format(
        "<text class=\"axis-title\" transform=\"translate(14,{:.1f}) rotate(-90)\" "
        "text-anchor=\"middle\">{}{}</text>",
        top + (H - top - bottom) / 2, escape(o.y_name),
        o.unit.empty() ? std::string() : " (" + escape(o.unit) + ")");
  }
  if (!o.x_name.empty()) {
    svg += fmt::format(
        "<text class=\"axis-title\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        left + (W - left - right) / 2, H - 8, escape(o.x_name));
  }
  // X ticks at round numbers (1, 2 or 5 times a power of ten, four to ten of them: 0, 20, ...
  // 140 of 150 iterations; 5000, 10000, ... of 45858 trace events), where those numbers fall; for
  // labels that are no numbers, at every round step of the points, labelled with their names.
  std::vector<std::pair<double, std::string>> ticks;  // (x, label)
  if (numeric) {
    for (double v : round_ticks(x_lo, x_hi, integral ? 1 : 0))
      ticks.emplace_back(Xv(v), tick_text(v));
  } else if (n > 0) {
    const auto every =
        static_cast<std::size_t>(std::max(1.0, round_step(static_cast<double>(n - 1) / 8)));
    for (std::size_t i = 0; i < n; i += every) ticks.emplace_back(X(i), x_labels[i]);
  }
  const double tick_y = H - bottom + 16;
  for (const auto& [x, label] : ticks) {
    // Centred on its tick, unless that would cut it at the right edge (about 6.5 px a character
    // at 11 px) or push it under the y axis' labels.
    const double half = 3.25 * static_cast<double>(label.size());
    const char* anchor = x + half > W - 2 ? "end" : x - half < left - 8 ? "start" : "middle";
    svg += fmt::format(
        "<line class=\"axis x-tick-mark\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text class=\"muted x-tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"{4}\">{5}</text>",
        x, H - bottom, H - bottom + 4, tick_y, anchor, escape(label));
  }
  for (const Series& s : series) {
    std::string pts;
    for (std::size_t i = 0; i < s.values.size() && i < n; ++i)
      pts += fmt::format("{:.1f},{:.1f} ", X(i), Y(s.values[i]));
    svg += fmt::format("<polyline class=\"{}\" points=\"{}\"><title>{}</title></polyline>",
                       escape(s.css), pts, escape(s.name));
  }
  if (!series.empty()) {
    for (const Markers& m : o.markers) {
      for (std::size_t k = 0; k < m.at.size(); ++k) {
        const std::size_t i = m.at[k];
        if (i >= series[0].values.size() || i >= n) continue;
        const bool link = k < m.links.size() && !m.links[k].empty();
        if (link) svg += fmt::format("<a href=\"#{}\">", escape(m.links[k]));
        svg += fmt::format(
            "<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{} at "
            "{}{}</title></circle>",
            escape(m.css), X(i), Y(series[0].values[i]), escape(m.name), escape(x_labels[i]),
            link ? ": click for its call sites" : "");
        if (link) svg += "</a>";
      }
    }
  }
  svg += "</svg>";
  // The legend draws each key with the chart's own class (its colour and dashes come from the
  // same CSS rule); `data-key` says what the key stands for in the chart above it.
  std::string legend = "<div class=\"legend chart-legend\">";
  auto key = [](std::string_view selector, std::string_view shape, std::string_view name,
                std::string_view props = "") {
    return fmt::format(
        "<span data-key=\"{}\"{}><svg class=\"key\" width=\"26\" height=\"12\" "
        "aria-hidden=\"true\">{}</svg>{}</span>",
        escape(selector), props.empty() ? "" : fmt::format(" data-key-props=\"{}\"", props), shape,
        escape(name));
  };
  for (const Series& s : series) {
    legend +=
        key("polyline." + s.css,
            fmt::format("<line class=\"{}\" x1=\"1\" x2=\"25\" y1=\"6\" y2=\"6\"/>", escape(s.css)),
            s.name);
  }
  for (const Markers& m : o.markers) {
    if (m.at.empty()) continue;
    legend += key("circle." + m.css,
                  fmt::format("<circle class=\"{}\" cx=\"13\" cy=\"6\" r=\"4\"/>", escape(m.css)),
                  m.name);
  }
  if (o.shade_to > 0)
    legend +=
        // (its key outlined: the band's pale fill alone is hard to see at 24 px)
        key("rect.settle", "<rect class=\"settle\" x=\"1\" y=\"1\" width=\"24\" height=\"10\"/>",
            o.shade_name, "fill");
  legend += "</div>";
  return svg + legend;
}

std::string bar_chart(std::string_view klass, std::string_view title,
                      const std::vector<std::string>& labels, const std::vector<double>& values,
                      std::string_view unit) {
  const double W = 900, row = 26, left = 360, top = 26;
  const double H = top + row * static_cast<double>(labels.size()) + 10;
  double vmax = 0;
  for (double v : values) vmax = std::max(vmax, v);
  vmax = nice_max(vmax);
  std::string svg = fmt::format(
      "<svg class=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\">",
      escape(klass), W, H, W, H, escape(title));
  svg += fmt::format("<text x=\"0\" y=\"16\">{}</text>", escape(title));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double y = top + row * static_cast<double>(i);
    const double w = (W - left - 90) * values[i] / vmax;
    std::string label = labels[i].size() > 58 ? labels[i].substr(0, 55) + "..." : labels[i];
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", left - 8,
                       y + 15, escape(label));
    svg += fmt::format(
        "<rect class=\"bar\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\"><title>{}: {:g} "
        "{}</title></rect>",
        left, y + 4, std::max(1.0, w), row - 8, escape(labels[i]), values[i], escape(unit));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{:g} {}</text>",
                       left + std::max(1.0, w) + 6, y + 15, values[i], escape(unit));
  }
  return svg + "</svg>";
}

}  // namespace racelab::html

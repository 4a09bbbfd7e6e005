#include "util/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
td.op { border-left: 4px solid var(--grey); background: #f8f9fb; }
td.op-lock { border-left-color: var(--blue); background: #eef3fc; } td.op-unlock { border-left-color: #8fb0ee; }
td.op-submit { border-left-color: var(--orange); background: #fdf3e6; } td.op-wait { border-left-color: var(--purple); background: #f4eefb; }
td.op-point { border-left-color: var(--teal); background: #e9f4f6; } td.op-event { border-left-color: #a3a3a3; }
td.end-blocked { border-left: 4px solid var(--fail); background: #fdecea; color: var(--fail); font-weight: 600; }
td.end-done, td.end-idle { color: var(--muted); } td.end-stopped { color: var(--orange); }
td.crash, td.end-crashed { border-left: 4px solid var(--fail); background: #fdecea; color: var(--fail); font-weight: 600; }
table.verdicts { width: 100%; } tr.cause td { border-top: none; padding-top: 0; font-weight: 400; }
tr.verdict td { border-bottom: none; } .pending { color: var(--orange); font-weight: 600; } .skipped { color: var(--muted); font-weight: 600; }
.tag { font-size: 12px; font-weight: 400; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 5px; }
p.totals { font-size: 15px; margin: 8px 0; } p.shard-note { background: #fff7e6; border-left: 4px solid var(--orange); padding: 6px 10px; }
td.muted, span.muted { color: var(--muted); } table.verdicts td.num { white-space: nowrap; }
details.scenario { border-bottom: 1px solid var(--line); padding: 4px 0; margin: 0; } details.scenario > summary { color: var(--fg); font-size: 15px; } details.evidence > summary { margin: 4px 0; }
tr.event td { background: #fff4e5; border-top: 2px solid var(--orange); } tr.event span.ev-text { display: block; max-width: 1040px; } tr.event td.fail { color: var(--fail); }
tr.gap td, tr.end td.num { color: var(--muted); font-style: italic; } tr.end td { border-top: 2px solid var(--line); }
.legend i.op { background: var(--grey); } .legend i.op-lock { background: var(--blue); } .legend i.op-unlock { background: #8fb0ee; }
.legend i.op-submit { background: var(--orange); } .legend i.op-wait { background: var(--purple); } .legend i.op-point { background: var(--teal); }
.legend i.op-event { background: #a3a3a3; } .legend i.end-blocked { background: var(--fail); } .legend i.crash { background: #fdecea; border-left: 4px solid var(--fail); } .legend i.ev { background: #fff4e5; border-top: 2px solid var(--orange); }
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
  // The page's width is used: an open interleaving is as wide as its container.
  document.querySelectorAll('table.lanes').forEach(function (t) {
    if (t.closest('details:not([open])')) return;
    var box = t.parentElement.getBoundingClientRect().width, w = t.getBoundingClientRect().width;
    t.setAttribute('data-width', Math.round(w) + '/' + Math.round(box));
    if (w < box - 20) problems.push('an interleaving narrower than the page: ' + Math.round(w) + ' of ' + Math.round(box) + ' px');
  });
  document.body.setAttribute('data-height', String(document.documentElement.scrollHeight));
  document.body.setAttribute('data-selfcheck', problems.length ? 'fail: ' + problems.join('; ') : 'ok');
});
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

double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

}  // namespace

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
  auto X = [&](double i) {
    return left + (n <= 1 ? 0.0 : (W - left - right) * i / static_cast<double>(n - 1));
  };
  auto Y = [&](double v) { return top + (H - top - bottom) * (1.0 - (v - ymin) / (ymax - ymin)); };
  std::string svg = fmt::format(
      "<svg class=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\" data-y-min=\"{:g}\" data-y-max=\"{:g}\">",
      escape(o.klass), W, H, W, H, escape(o.title), ymin, ymax);
  svg += fmt::format("<text x=\"{}\" y=\"16\">{}</text>", left, escape(o.title));
  if (o.shade_to > 0 && n > 0) {
    const double half = n <= 1 ? 0 : (W - left - right) / static_cast<double>(n - 1) / 2;
    const double x0 = std::max(left, X(0) - half);
    const double x1 = std::max(
        x0 + 8, std::min(W - right, X(static_cast<double>(std::min(o.shade_to, n) - 1)) + half));
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
  // X ticks at every round step of the points (1, 2 or 5 times a power of ten, about eight of
  // them: 0, 20, 40, ... 140 of 150 iterations), and the last point unless a tick is close by.
  std::vector<std::size_t> at;
  if (n > 0) {
    const auto every =
        static_cast<std::size_t>(std::max(1.0, round_step(static_cast<double>(n - 1) / 8)));
    for (std::size_t i = 0; i < n; i += every) at.push_back(i);
    if (at.back() != n - 1 && (n - 1 - at.back()) * 2 >= every) at.push_back(n - 1);
  }
  const double tick_y = H - bottom + 16;
  for (std::size_t t = 0; t < at.size(); ++t) {
    const std::size_t i = at[t];
    // The label at the right edge ends at its tick, the first starts at it: none is cut off.
    const char* anchor = i + 1 == n && n > 1 ? "end" : i == 0 && n > 1 ? "start" : "middle";
    svg += fmt::format(
        "<text class=\"muted x-tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\">{}</text>",
        X(static_cast<double>(i)), tick_y, anchor, escape(x_labels[i]));
  }
  for (const Series& s : series) {
    std::string pts;
    for (std::size_t i = 0; i < s.values.size() && i < n; ++i)
      pts += fmt::format("{:.1f},{:.1f} ", X(static_cast<double>(i)), Y(s.values[i]));
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
            escape(m.css), X(static_cast<double>(i)), Y(series[0].values[i]), escape(m.name),
            escape(x_labels[i]), link ? ": click for its call sites" : "");
        if (link) svg += "</a>";
      }
    }
  }
  svg += "</svg>";
  std::string legend = "<div class=\"legend\">";
  static const std::pair<const char*, const char*> kColours[] = {{"s-a", "var(--blue)"},
                                                                 {"s-b", "var(--orange)"},
                                                                 {"s-c", "var(--purple)"},
                                                                 {"s-a2", "var(--purple)"},
                                                                 {"s-b2", "var(--teal)"}};
  for (const Series& s : series) {
    const char* colour = "var(--grey)";
    for (const auto& [c, v] : kColours) {
      if (s.css == c) colour = v;
    }
    const bool dashed = s.css.size() > 1 && s.css.back() == '2';
    legend += fmt::format("<span><i style=\"background:{}{}\"></i>{}</span>", colour,
                          dashed ? ";height:3px;border-top:1px dashed #fff" : "", escape(s.name));
  }
  for (const Markers& m : o.markers) {
    if (m.at.empty()) continue;
    legend += fmt::format("<span><i style=\"{};border-radius:5px\"></i>{}</span>",
                          m.css == "marker" ? "background:var(--fail)"
                                            : "background:#fff;border:2px solid var(--muted)",
                          escape(m.name));
  }
  if (o.shade_to > 0)
    legend +=
        fmt::format("<span><i style=\"background:#eef1f6;border:1px solid #c4c9d2\"></i>{}</span>",
                    escape(o.shade_name));
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

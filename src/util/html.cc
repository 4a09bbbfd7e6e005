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
  document.body.setAttribute('data-selfcheck', problems.length ? 'fail: ' + problems.join('; ') : 'ok');
});
function racelabCopy(button) {
  var text = button.previousElementSibling.textContent;
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(function () { button.textContent = 'copied'; },
                                                                   function () { button.textContent = 'select and copy'; });
}
)js";

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
  const double W = 900, H = 260, left = 64, right = 16, top = 28, bottom = 34;
  const std::size_t n = x_labels.size();
  double ymax = 0;
  for (const Series& s : series) {
    for (double v : s.values) ymax = std::max(ymax, v);
  }
  ymax = nice_max(ymax);
  auto X = [&](std::size_t i) {
    return left + (n <= 1
                       ? 0.0
                       : (W - left - right) * static_cast<double>(i) / static_cast<double>(n - 1));
  };
  auto Y = [&](double v) { return top + (H - top - bottom) * (1.0 - v / ymax); };
  std::string svg = fmt::format(
      "<svg class=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"{}\">",
      escape(klass), W, H, W, H, escape(title));
  svg += fmt::format("<text x=\"{}\" y=\"16\">{}</text>", left, escape(title));
  for (int k = 0; k <= 4; ++k) {
    const double v = ymax * k / 4;
    svg += fmt::format("<line class=\"axis\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>",
                       left, W - right, Y(v), Y(v));
    svg += fmt::format(
        "<text class=\"muted\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g} {}</text>", left - 6,
        Y(v) + 4, v, escape(unit));
  }
  const std::size_t ticks = std::min<std::size_t>(n, 10);
  for (std::size_t t = 0; t < ticks; ++t) {
    const std::size_t i = ticks <= 1 ? 0 : t * (n - 1) / (ticks - 1);
    svg +=
        fmt::format("<text class=\"muted\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                    X(i), H - 12, escape(x_labels[i]));
  }
  for (const Series& s : series) {
    std::string pts;
    for (std::size_t i = 0; i < s.values.size() && i < n; ++i)
      pts += fmt::format("{:.1f},{:.1f} ", X(i), Y(s.values[i]));
    svg += fmt::format("<polyline class=\"{}\" points=\"{}\"><title>{}</title></polyline>",
                       escape(s.css), pts, escape(s.name));
  }
  if (!series.empty()) {
    for (std::size_t i : markers) {
      if (i >= series[0].values.size()) continue;
      svg += fmt::format(
          "<circle class=\"marker\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{} at "
          "{}</title></circle>",
          X(i), Y(series[0].values[i]), escape(marker_name), escape(x_labels[i]));
    }
  }
  svg += "</svg>";
  std::string legend = "<div class=\"legend\">";
  static const std::pair<const char*, const char*> kColours[] = {
      {"s-a", "var(--blue)"}, {"s-b", "var(--orange)"}, {"s-c", "var(--purple)"}};
  for (const Series& s : series) {
    const char* colour = "var(--grey)";
    for (const auto& [c, v] : kColours) {
      if (s.css == c) colour = v;
    }
    legend += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", colour, escape(s.name));
  }
  if (!markers.empty())
    legend +=
        fmt::format("<span><i style=\"background:var(--fail);border-radius:5px\"></i>{}</span>",
                    escape(marker_name));
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

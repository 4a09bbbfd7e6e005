#pragma once
// Self-contained HTML pages: inline CSS and SVG, no network fetches, readable offline and in a CI
// artifact viewer. Every page carries a small self-check: it records script errors and whether the
// elements named in `expect` (CSS selectors) are present, in <body data-selfcheck="ok|fail: ...">,
// which the browser test reads.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace racelab::html {

std::string escape(std::string_view text);

// A whole page. `expect`: space-separated CSS selectors the page must contain.
std::string page(std::string_view title, std::string_view expect, std::string_view body);

// A block with the text and a copy-to-clipboard button.
std::string copyable(std::string_view text);

struct Series {
  std::string name;
  std::string css;  // class of the polyline (colour in the page's CSS): s-a, s-b, s-c, s-a2, s-b2
  std::vector<double> values;
};

// A line chart of n points, y from 0 to the maximum, with optional markers (indices) drawn as dots
// on the first series. `klass` is the <svg> class. Where every label is a number and they increase
// (iterations, trace events), the points lie at their numbers and the x ticks are round numbers
// (line_chart below); otherwise at 0..n-1, some labelled.
std::string line_chart(std::string_view klass, std::string_view title,
                       const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                       std::string_view unit, const std::vector<std::size_t>& markers,
                       std::string_view marker_name);

// Dots on a line chart at some x indices, drawn on the first series.
struct Markers {
  std::vector<std::size_t> at;
  std::string name;
  std::string css = "marker";  // class of the circles (colour in the page's CSS)
  // Where each circle leads (an id on the page, parallel to `at`); empty: the circles are no links.
  std::vector<std::string> links;
};

// A line chart with named axes. `zero_based` false scales the y axis to the data (a nice range
// around its minimum and maximum, not 0..max) and says on the plot where the axis starts; the
// <svg> carries data-y-min and data-y-max. `shade_to` > 0 shades x indices [0, shade_to) as a
// band named `shade_name` (the settle iterations). Under the chart a legend
// (<div class="legend chart-legend">) names each series, marker kind and band beside a key drawn
// with the chart's own CSS class, so its colour is the chart's; each entry's `data-key` selects
// what it stands for in the chart, and the page's self-check compares their computed styles.
struct ChartOptions {
  std::string klass = "plot";  // the <svg> class
  std::string title;
  std::string x_name;  // the x axis title, e.g. "iteration"
  std::string unit;    // y values' unit, e.g. "MiB"; the y axis title is "<y_name> (<unit>)"
  std::string y_name;
  bool zero_based = true;
  std::size_t shade_to = 0;
  std::string shade_name;
  std::vector<Markers> markers;
};

std::string line_chart(const ChartOptions& options, const std::vector<std::string>& x_labels,
                       const std::vector<Series>& series);

// Tick values on an axis from `lo` to `hi`: every multiple, within the range, of the round step
// (1, 2 or 5 times a power of ten, at least `min_step`) that gives four to ten of them.
std::vector<double> round_ticks(double lo, double hi, double min_step = 0);

// Horizontal bars, one per label.
std::string bar_chart(std::string_view klass, std::string_view title,
                      const std::vector<std::string>& labels, const std::vector<double>& values,
                      std::string_view unit);

}  // namespace racelab::html

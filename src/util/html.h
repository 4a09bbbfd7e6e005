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
  std::string css;  // class of the polyline (colour in the page's CSS)
  std::vector<double> values;
};

// A line chart over x = 0..n-1 (labels for some ticks), y from 0 to the maximum, with optional
// markers (indices) drawn as dots on the first series. `klass` is the <svg> class.
std::string line_chart(std::string_view klass, std::string_view title,
                       const std::vector<std::string>& x_labels, const std::vector<Series>& series,
                       std::string_view unit, const std::vector<std::size_t>& markers,
                       std::string_view marker_name);

// Horizontal bars, one per label.
std::string bar_chart(std::string_view klass, std::string_view title,
                      const std::vector<std::string>& labels, const std::vector<double>& values,
                      std::string_view unit);

}  // namespace racelab::html

// report.html and whatif.html for racelab alloc.
#include "util/html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "alloc/report.h"
#include "alloc/whatif.h"
#include "racelab/version.h"

namespace racelab::alloc {

using html::escape;

namespace {

double to_mib(std::uint64_t b) { return static_cast<double>(b) / static_cast<double>(kMiB); }

// The verdict's colour: not measured is neither a pass nor a failure.
const char* state_class(const StabilityReport& r) {
  return r.stable ? "pass" : r.measured ? "fail" : "";
}

// Segments as memory_viz draws them: one row per segment, its blocks coloured by state.
std::string segment_map(const std::vector<Segment>& segments, const std::string& title) {
  std::uint64_t largest = 1;
  for (const Segment& seg : segments) largest = std::max(largest, seg.total_size);
  const double left = 210, width = 660, row = 22, top = 26;
  const double H = top + row * static_cast<double>(segments.size()) + 30;
  std::string svg = fmt::format(
      "<svg class=\"segmap\" viewBox=\"0 0 900 {0:.0f}\" width=\"900\" height=\"{0:.0f}\" "
      "role=\"img\" aria-label=\"segment map\">",
      H);
  svg += fmt::format("<text x=\"0\" y=\"16\">{}</text>", escape(title));
  std::size_t k = 0;
  for (const Segment& seg : segments) {
    const std::uint64_t base = seg.address;
    const std::uint64_t total = seg.total_size;
    const double y = top + row * static_cast<double>(k++);
    const double w = width * static_cast<double>(total) / static_cast<double>(largest);
    svg +=
        fmt::format("<text x=\"{}\" y=\"{:.0f}\" text-anchor=\"end\">0x{:x} · {:.1f} MiB {}</text>",
                    left - 8, y + 14, base, to_mib(total), escape(seg.segment_type()));
    for (const SegmentBlock& b : seg.blocks) {
      const double bx =
          left + w * static_cast<double>(b.address - base) / static_cast<double>(total);
      const double bw = std::max(0.5, w * static_cast<double>(b.size) / static_cast<double>(total));
      const char* cls = b.state == BlockState::kActiveAllocated ? "blk-alloc"
                        : b.state == BlockState::kInactive      ? "blk-inactive"
                                                                : "blk-pending";
      svg += fmt::format(
          "<rect class=\"{}\" x=\"{:.2f}\" y=\"{:.0f}\" width=\"{:.2f}\" "
          "height=\"16\"><title>0x{:x}: {} ({})</title></rect>",
          cls, bx, y + 2, bw, b.address, escape(format_bytes(b.size)),
          escape(block_state_name(b.state)));
    }
    svg += fmt::format(
        "<rect class=\"seg-outline\" x=\"{}\" y=\"{:.0f}\" width=\"{:.2f}\" height=\"16\"/>", left,
        y + 2, w);
  }
  svg += fmt::format(
      "<text class=\"muted\" x=\"{}\" y=\"{:.0f}\">blue: allocated · grey: free (cached) · orange: "
      "freed, pending</text>",
      left, H - 8);
  return svg + "</svg>";
}

std::string mib_text(std::uint64_t b) { return fmt::format("{:.0f} MiB", to_mib(b)); }

// The id of a growth's section: the report's name and the window's label, kept to characters an
// id and a URL fragment take as they are.
std::string growth_id(const StabilityReport& r, const std::string& label) {
  std::string id = "growth-" + r.name + "-" + label;
  for (char& c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return id;
}

// Each growth after the warm phase: the allocations that went to the device and their call
// sites (a growth dot on the reserved plot links here).
std::string growth_sections(const StabilityReport& r) {
  std::string out;
  const std::string unit = r.iterations ? "iteration" : "window";
  for (const Growth& g : r.growth) {
    if (g.warm) continue;
    out += fmt::format("<div class=\"growth\" id=\"{}\"><h3>growth at {} {}</h3><p>{}</p>",
                       escape(growth_id(r, g.label)), unit, escape(g.label), escape(g.reason));
    out += "<ul>";
    for (const DeviceAllocCause& c : g.causes) out += "<li>" + escape(describe_cause(c)) + "</li>";
    out += "</ul>";
    if (!r.frames) {
      out += fmt::format("<p class=\"sub\">call sites: {}</p></div>", escape(kNoFramesHint));
      continue;
    }
    out +=
        "<table><tr><th>call site</th><th class=\"num\">allocations</th><th "
        "class=\"num\">bytes</th><th>called from</th></tr>";
    for (const CallSite& s : g.sites) {
      std::string callers;
      for (const std::string& c : s.callers)
        callers += (callers.empty() ? "" : " &lt;- ") + escape(c);
      out += fmt::format(
          "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
          escape(s.where), s.count, escape(format_size(s.bytes)), callers);
    }
    out += "</table></div>";
  }
  return out;
}

}  // namespace

std::string report_html(const std::vector<StabilityReport>& reports) {
  std::string body =
      fmt::format("<h1>Allocator stability</h1><div class=\"sub\">racelab {} · {} trace(s)</div>",
                  kVersion, reports.size());
  body +=
      "<table><tr><th>trace</th><th>verdict</th><th class=\"num\">segments</th><th "
      "class=\"num\">reserved</th>"
      "<th class=\"num\">peak reserved</th><th class=\"num\">placement</th></tr>";
  for (const StabilityReport& r : reports) {
    const Sample& a = r.rows.front().at_end;
    const Sample& z = r.rows.back().at_end;
    body += fmt::format(
        "<tr><td><a href=\"#{0}\">{0}</a></td><td class=\"{1}\">{2}</td><td class=\"num\">{3} → "
        "{4}</td><td "
        "class=\"num\">{5} → {6}</td><td class=\"num\">{7}</td><td class=\"num\">{8}/{9}</td></tr>",
        escape(r.name), state_class(r),
        r.stable     ? "stable"
        : r.measured ? "not stable"
                     : "not measured",
        a.segments, z.segments, mib_text(a.reserved), mib_text(z.reserved),
        mib_text(r.peak_reserved), r.replay.allocs_same, r.replay.allocs);
  }
  body += "</table>";
  for (const StabilityReport& r : reports) {
    body += fmt::format("<h2 id=\"{0}\">{0}</h2><p class=\"{1}\">{2}</p>", escape(r.name),
                        state_class(r), escape(r.verdict));
    body += fmt::format("<div class=\"sub\">warm phase: {}</div>", escape(r.warm.description));
    body += fmt::format(
        "<div class=\"sub\">{} {} from {} · {}/{} allocations at the recorded address{}</div>",
        r.rows.size(), r.iterations ? "iterations" : "windows", escape(r.boundaries_source),
        r.replay.allocs_same, r.replay.allocs,
        r.recorded_rows ? fmt::format(" · matches the stats JSON at {}/{} iterations",
                                      r.recorded_matches, r.recorded_rows)
                        : "");
    // Two plots, each scaled to its own data (reserved moves 376 -> 432 MiB while allocated
    // stays near 96: on one 0-based axis both would look flat), the warm phase shaded.
    const std::string unit = r.iterations ? "iteration" : "window";
    std::vector<std::string> labels;
    html::Series reserved{"reserved at the end of the " + unit, "s-a", {}};
    html::Series reserved_peak{"peak reserved inside the " + unit, "s-a2", {}};
    html::Series allocated{"allocated at the end of the " + unit, "s-b", {}};
    html::Series allocated_peak{"peak allocated inside the " + unit, "s-b2", {}};
    html::Markers settling{{}, "device allocation in the warm phase (expected)", "marker-settle"};
    html::Markers growth{{}, "device allocation after the warm phase (growth)", "marker"};
    const std::size_t settle = std::min(r.warm.rows, r.rows.size());
    for (std::size_t k = 0; k < r.rows.size(); ++k) {
      const Row& row = r.rows[k];
      labels.push_back(row.label);
      reserved.values.push_back(to_mib(row.at_end.reserved));
      reserved_peak.values.push_back(to_mib(row.at_end.window_peak_reserved));
      allocated.values.push_back(to_mib(row.at_end.allocated));
      allocated_peak.values.push_back(to_mib(row.at_end.window_peak_allocated));
      if (row.device_allocs_in > 0) {
        (k < settle ? settling : growth).at.push_back(k);
        if (k >= settle) growth.links.push_back(growth_id(r, row.label));
      }
    }
    html::ChartOptions chart;
    chart.x_name = unit;
    chart.y_name = "memory";
    chart.unit = "MiB";
    chart.zero_based = false;
    chart.shade_to = settle;
    chart.shade_name = settle == 0 ? std::string() : "warm phase: " + r.warm.text;
    chart.title = fmt::format("reserved memory per {} (MiB)", unit);
    chart.markers = {settling, growth};
    body += html::line_chart(chart, labels, {reserved, reserved_peak});
    chart.title = fmt::format("allocated memory per {} (MiB)", unit);
    chart.markers.clear();
    body += html::line_chart(chart, labels, {allocated, allocated_peak});
    body += growth_sections(r);
    if (r.replay.segments_at) {
      body += segment_map(*r.replay.segments_at,
                          fmt::format("segments at the end of {} {}",
                                      r.iterations ? "iteration" : "window", r.segments_label));
    }
    body += "<details><summary>per-iteration table</summary><table><tr><th>" +
            std::string(r.iterations ? "iteration" : "window") +
            "</th><th class=\"num\">reserved</th><th class=\"num\">allocated</th><th "
            "class=\"num\">segments</th>"
            "<th class=\"num\">peak reserved in it</th><th class=\"num\">peak allocated in "
            "it</th><th class=\"num\">device allocs</th><th class=\"num\">inactive split</th><th "
            "class=\"num\">largest free</th>"
            "<th class=\"num\">fragmentation</th><th>stats JSON</th></tr>";
    for (const Row& row : r.rows) {
      body += fmt::format(
          "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{:.1f}%</td><td>{}</td></tr>",
          escape(row.label), mib_text(row.at_end.reserved), mib_text(row.at_end.allocated),
          row.at_end.segments, mib_text(row.at_end.window_peak_reserved),
          mib_text(row.at_end.window_peak_allocated), row.at_end.device_allocs,
          row.device_allocs_in > 0 ? fmt::format(" (+{})", row.device_allocs_in) : "",
          mib_text(row.at_end.inactive_split_bytes), mib_text(row.at_end.largest_free),
          row.fragmentation * 100,
          r.recorded_rows ? (row.matches_recorded ? "same" : "<span class=\"fail\">differs</span>")
                          : "");
    }
    body += "</table></details>";
  }
  return html::page("racelab alloc report", "table svg.plot svg.segmap", body);
}

std::string device_text(const Config& c) {
  const bool h200 = c.device_total == kH200TotalBytes && c.device_other == kH200ContextBytes;
  std::string text = fmt::format(
      "{:.2f} GiB device memory{}", static_cast<double>(c.device_total) / (1024.0 * kMiB),
      h200 ? " (the H200 the traces were recorded on; --device-memory to change it)"
           : " (--device-memory)");
  if (c.device_other > 0)
    text += fmt::format(", less {:.0f} MiB for the CUDA context: {:.2f} GiB for the allocator",
                        to_mib(c.device_other),
                        static_cast<double>(c.device_total - c.device_other) / (1024.0 * kMiB));
  text += c.memory_fraction > 0
              ? fmt::format("; set_per_process_memory_fraction({:g})", c.memory_fraction)
              : std::string("; no per-process memory fraction");
  return text;
}

std::string whatif_html(const std::string& trace, const std::vector<WhatifLine>& lines,
                        const Config& device) {
  std::string body =
      fmt::format("<h1>What if: allocator settings</h1><div class=\"sub\">racelab {} · {}</div>",
                  kVersion, escape(trace));
  body += fmt::format(
      "<p class=\"device\"><b>Device assumed:</b> {}. Out of memory means past "
      "this.</p>",
      escape(device_text(device)));
  body +=
      "<table><tr><th>settings</th><th class=\"num\">peak reserved</th><th class=\"num\">final "
      "reserved</th>"
      "<th class=\"num\">segments</th><th class=\"num\">device allocs</th><th "
      "class=\"num\">retries</th><th "
      "class=\"num\">OOMs</th></tr>";
  std::vector<std::string> names;
  std::vector<double> peaks, allocs;
  for (const WhatifLine& l : lines) {
    body += fmt::format(
        "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num{}\">{}</td></tr>",
        escape(l.name), mib_text(l.peak_reserved), mib_text(l.final_reserved), l.segments,
        l.device_allocs, l.retries, l.ooms ? " fail" : "", l.ooms);
    names.push_back(l.name);
    peaks.push_back(std::round(to_mib(l.peak_reserved)));
    allocs.push_back(static_cast<double>(l.device_allocs));
  }
  body += "</table>";
  // Reserved memory over the trace, one line per setting: the most reserved between two samples,
  // so that no peak falls between the points; the y axis scaled to the data.
  if (!lines.empty() && !lines.front().samples.empty()) {
    std::vector<std::string> labels;
    for (const Sample& s : lines.front().samples) labels.push_back(fmt::format("{}", s.event + 1));
    static const char* kCss[] = {"s-a", "s-b", "s-c", "s-a2", "s-b2"};
    std::vector<html::Series> series;
    for (std::size_t k = 0; k < lines.size(); ++k) {
      html::Series s{lines[k].name, kCss[k % 5], {}};
      for (const Sample& x : lines[k].samples) s.values.push_back(to_mib(x.window_peak_reserved));
      series.push_back(std::move(s));
    }
    html::ChartOptions chart;
    chart.title = "reserved memory over the trace, per setting (MiB)";
    chart.x_name = "trace event";
    chart.y_name = "reserved";
    chart.unit = "MiB";
    chart.zero_based = false;
    body += html::line_chart(chart, labels, series);
  }
  body += html::bar_chart("plot", "peak reserved (MiB)", names, peaks, "MiB");
  body +=
      html::bar_chart("plot", "device allocations (cudaMalloc or page maps)", names, allocs, "");
  for (const WhatifLine& l : lines) {
    if (!l.first_oom.empty())
      body += fmt::format("<p><b>{}</b>: {}</p>", escape(l.name), escape(l.first_oom));
  }
  return html::page("racelab alloc whatif", "table svg.plot p.device", body);
}

}  // namespace racelab::alloc

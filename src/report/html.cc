#include "report/html.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numbers>

#include "racelab/version.h"
#include "report/report.h"
#include "report/schedule_paths.h"
#include "sched/kinds.h"
#include "util/document.h"
#include "util/files.h"
#include "util/html.h"

namespace racelab::report {

using html::escape;

namespace {

const char* op_class(sched::OpKind k) {
  using sched::OpKind;
  switch (k) {
    case OpKind::kLock:
      return "op op-lock";
    case OpKind::kUnlock:
      return "op op-unlock";
    case OpKind::kSubmit:
      return "op op-submit";
    case OpKind::kWaitJob:
      return "op op-wait";
    case OpKind::kPoint:
      return "op op-point";
    case OpKind::kEventSet:
    case OpKind::kEventWait:
      return "op op-event";
    default:
      return "op";
  }
}

}  // namespace

namespace {

// How a step reads in its thread's column: the operation, and what a take handed the worker.
std::string step_text(const sched::Execution& exec, const sched::Step& s) {
  std::string text = exec.describe(s.op);
  if (s.op.kind == sched::OpKind::kTake) {
    text += s.result >= 0 ? fmt::format(" → job {}", s.result) : std::string(" → closed");
  }
  return text;
}

// An identifier as a cell shows it: escaped, with a line-break opportunity after every '_', '.',
// ':' and '/', so that `_compiled_flex_attention` wraps as `_compiled_` `flex_attention`, never
// inside a word.
std::string wrappable(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += escape(std::string_view(&c, 1));
    if (c == '_' || c == '.' || c == ':' || c == '/') out += "<wbr>";
  }
  return out;
}

// A finding that a thread raised (a crash: FX's RuntimeError, an out-of-memory error), not a
// deadlock, which no one thread raises: the thread, else empty.
const std::string& raised_by(const sched::Finding& f) {
  static const std::string none;
  return sched::kinds::is_failure(f.kind) && f.cycle.empty() ? f.thread : none;
}

// The exception a thread raised, in one line: the message up to its explanation in parentheses.
std::string exception_line(const sched::Finding& f) {
  const std::string text = message_text(f);
  const auto cut = text.find(" (");
  return cut == std::string::npos ? text : text.substr(0, cut);
}

// A thread's state when the execution ended: finished, crashed (the exception it raised),
// blocked (and on what), or stopped by a fatal finding while it could still run.
struct EndState {
  const char* css;
  std::string text;
};

EndState end_state(const sched::Execution& exec, sched::ThreadId t) {
  for (const sched::Finding& f : exec.findings()) {
    if (!raised_by(f).empty() && raised_by(f) == exec.thread_name(t))
      return {"end-crashed", "crashed: " + exception_line(f)};
  }
  if (exec.finished(t)) return {"end-done", "finished"};
  if (!exec.is_enabled(t) && exec.pending_op(t)->kind == sched::OpKind::kTake)
    return {"end-idle", "idle: waits to " + exec.pending_text(t)};
  if (!exec.is_enabled(t)) {
    // A deadlock's details say what every blocked thread holds and waits for, and who holds it.
    const std::string prefix = exec.thread_name(t) + " ";
    for (const sched::Finding& f : exec.findings()) {
      for (const std::string& d : f.details) {
        if (d.rfind(prefix, 0) == 0) return {"end-blocked", "blocked: " + d.substr(prefix.size())};
      }
    }
    return {"end-blocked", "blocked: waits to " + exec.pending_text(t)};
  }
  return {"end-stopped", "stopped before: " + exec.pending_text(t)};
}

// The step the interleaving is about: where the finding was detected, else the last one.
std::size_t focus_step(const sched::Execution& exec, const sched::Finding* finding) {
  const std::size_t n = exec.steps().size();
  if (n == 0) return 0;
  if (finding && finding->step >= 0 && static_cast<std::size_t>(finding->step) < n)
    return static_cast<std::size_t>(finding->step);
  return n - 1;
}

// Interleavings longer than this open at the steps leading to the finding; the rest fold.
constexpr std::size_t kFoldAbove = 100;
constexpr std::size_t kShownBefore = 50;  // steps up to the finding's
constexpr std::size_t kShownAfter = 5;

// The threads a table shows: those with a step in it, and (with the end row) those blocked at the
// end on something other than an empty work queue. A pipeline of 8 GPUs has 17 threads; most are
// idle at any moment, and a column each would push the ones that matter off the screen.
using Columns = std::vector<sched::ThreadId>;

Columns columns(const sched::Execution& exec, std::size_t from, std::size_t to, bool with_end) {
  std::vector<bool> shown(exec.thread_count(), false);
  for (std::size_t i = from; i < to; ++i)
    shown[static_cast<std::size_t>(exec.steps()[i].thread)] = true;
  if (with_end) {
    for (std::size_t t = 0; t < shown.size(); ++t) {
      const auto id = static_cast<sched::ThreadId>(t);
      if (!exec.finished(id) && !exec.is_enabled(id) &&
          exec.pending_op(id)->kind != sched::OpKind::kTake)
        shown[t] = true;
    }
  }
  Columns cols;
  for (std::size_t t = 0; t < shown.size(); ++t) {
    if (shown[t]) cols.push_back(static_cast<sched::ThreadId>(t));
  }
  return cols;
}

std::string table_open(const sched::Execution& exec, const Columns& cols,
                       const std::vector<bool>& in_cycle, std::string_view klass,
                       std::string_view attrs) {
  // The page's width, and no narrower than 120 px a thread (wider tables scroll).
  std::string h = fmt::format("<table class=\"{}\" style=\"min-width:{}px\"{}>", klass,
                              52 + 120 * cols.size(), attrs);
  h += "<colgroup><col class=\"c-step\">";
  for (std::size_t k = 0; k < cols.size(); ++k) h += "<col class=\"c-thread\">";
  h += "</colgroup><thead><tr><th class=\"num\">step</th>";
  for (sched::ThreadId id : cols) {
    const EndState e = end_state(exec, id);
    h += fmt::format("<th class=\"thread{}{}\">{}</th>",
                     in_cycle[static_cast<std::size_t>(id)] ? " in-cycle" : "",
                     std::string_view(e.css) == "end-blocked" ? " is-blocked" : "",
                     wrappable(exec.thread_name(id)));
  }
  return h + "</tr></thead><tbody>";
}

// Rows for steps [from, to), with a marked row after every step at which a finding was detected.
// Under a finding a thread raised: the exception in that thread's column.
std::string crash_row(const sched::Execution& exec, const Columns& cols, const sched::Finding& f) {
  if (raised_by(f).empty()) return "";
  std::string row = "<tr class=\"crash-row\"><td class=\"num\">✗</td>";
  bool shown = false;
  for (sched::ThreadId id : cols) {
    if (exec.thread_name(id) != raised_by(f)) {
      row += "<td></td>";
      continue;
    }
    shown = true;
    row +=
        fmt::format("<td class=\"crash\" title=\"{}\"><span class=\"label\">raised {}</span></td>",
                    escape(message_text(f)), wrappable(exception_line(f)));
  }
  return shown ? row + "</tr>" : "";
}

std::string step_rows(const sched::Execution& exec, const Columns& cols, std::size_t from,
                      std::size_t to) {
  const auto& steps = exec.steps();
  std::string rows;
  for (std::size_t i = from; i < to; ++i) {
    const sched::Step& s = steps[i];
    const std::string what = step_text(exec, s);
    rows += fmt::format("<tr class=\"step\" data-step=\"{}\"><td class=\"num\">{}</td>", i, i);
    for (sched::ThreadId id : cols) {
      if (id != s.thread) {
        rows += "<td></td>";
        continue;
      }
      rows += fmt::format(
          "<td class=\"{}\" title=\"step {}: {}: {} (t = {:.3f} s)\"><span "
          "class=\"label\">{}</span></td>",
          op_class(s.op.kind), i, escape(exec.thread_name(s.thread)), escape(what), s.vtime,
          wrappable(what));
    }
    rows += "</tr>";
    for (const sched::Finding& f : exec.findings()) {
      if (f.step != static_cast<std::int64_t>(i)) continue;
      const bool fail = sched::kinds::is_failure(f.kind);
      rows += fmt::format(
          "<tr class=\"event ev-{0}\"><td class=\"num\">⚑</td><td colspan=\"{1}\" "
          "class=\"event-text{2}\"><span class=\"ev-text\"><b>{0}</b> after step {3}: "
          "{4}</span></td></tr>",
          escape(f.kind), cols.size(), fail ? " fail" : "", i, escape(message_text(f)));
      rows += crash_row(exec, cols, f);
    }
  }
  return rows;
}

std::string end_row(const sched::Execution& exec, const Columns& cols) {
  std::string row = "<tr class=\"end\"><td class=\"num\">end</td>";
  for (sched::ThreadId id : cols) {
    const EndState e = end_state(exec, id);
    row += fmt::format("<td class=\"{}\"><span class=\"label\">{}</span></td>", e.css,
                       wrappable(e.text));
  }
  return row + "</tr>";
}

// The threads a table leaves out, in one line.
std::string not_shown(const sched::Execution& exec, const Columns& cols, bool with_end) {
  std::string names;
  std::size_t k = 0;
  for (std::size_t t = 0; t < exec.thread_count(); ++t) {
    const auto id = static_cast<sched::ThreadId>(t);
    if (k < cols.size() && cols[k] == id) {
      ++k;
      continue;
    }
    names += (names.empty() ? "" : ", ") + exec.thread_name(id);
    if (with_end && !exec.finished(id)) names += " (" + end_state(exec, id).text + ")";
  }
  return names.empty()
             ? std::string()
             : "<div class=\"sub not-shown\">no step in these rows, not shown: " + escape(names) +
                   "</div>";
}

std::string folded(const sched::Execution& exec, const std::vector<bool>& in_cycle,
                   std::size_t from, std::size_t to, const char* where) {
  const Columns cols = columns(exec, from, to, false);
  return fmt::format(
      "<details class=\"fold\"><summary>steps {}–{} ({} steps {}), folded</summary>{}<div "
      "class=\"scroll\">{}{}</tbody></table></div></details>",
      from, to - 1, to - from, where, not_shown(exec, cols, false),
      table_open(exec, cols, in_cycle, "lanes folded", ""), step_rows(exec, cols, from, to));
}

}  // namespace

std::string legend_html() {
  // Each key is a small cell drawn by the lane cells' own CSS rule; data-key names the cells it
  // stands for (the page's self-check compares their colours).
  auto key = [](const char* cells, const char* klass, const char* name, const char* props = "") {
    return fmt::format("<span data-key=\"{}\"{}><i class=\"cell {}\"></i>{}</span>", cells,
                       *props ? fmt::format(" data-key-props=\"{}\"", props) : "", klass, name);
  };
  return "<div class=\"legend\">" + key("td.op-lock", "op op-lock", "lock") +
         key("td.op-unlock", "op op-unlock", "unlock") +
         key("td.op-submit", "op op-submit", "submit job") +
         key("td.op-wait", "op op-wait", "wait for job") +
         key("td.op-point", "op op-point", "point (compile, cache)") +
         key("td.op-event", "op op-event", "event") +
         key("td[class='op']", "op", "other (start, take, complete)") +
         key("td.end-blocked", "end-blocked", "blocked at the end (and on what)") +
         key("td.crash", "crash", "raised an exception (crashed)") +
         key("tr.event td", "ev", "finding detected (oom, recompile_limit, crash, …)",
             "background-color border-top-color") +
         "<span><b class=\"fail\">bold red</b> thread: in the wait-for cycle</span></div>";
}

std::string interleaving_html(const sched::Execution& exec, const sched::Finding* finding) {
  const std::size_t n = exec.steps().size();
  const std::size_t threads = exec.thread_count();
  std::vector<bool> in_cycle(threads, false);
  if (finding) {
    for (std::size_t t = 0; t < threads; ++t) {
      for (const auto& name : finding->cycle) {
        if (exec.thread_name(static_cast<sched::ThreadId>(t)) == name) in_cycle[t] = true;
      }
    }
  }
  std::size_t from = 0, to = n;
  if (n > kFoldAbove) {
    const std::size_t focus = focus_step(exec, finding);
    from = focus + 1 > kShownBefore ? focus + 1 - kShownBefore : 0;
    to = std::min(n, focus + 1 + kShownAfter);
  }
  // Short interleavings show every thread; a window shows the threads it is about.
  Columns cols = columns(exec, 0, n, true);
  if (from > 0 || to < n) {
    cols = columns(exec, from, to, true);
    for (std::size_t t = 0; t < threads; ++t) {
      const auto id = static_cast<sched::ThreadId>(t);
      if (in_cycle[t] && std::find(cols.begin(), cols.end(), id) == cols.end()) cols.push_back(id);
    }
    std::sort(cols.begin(), cols.end());
  }
  std::string out;
  if (from > 0) out += folded(exec, in_cycle, 0, from, "before these");
  out += not_shown(exec, cols, true);
  out += "<div class=\"scroll\">" +
         table_open(exec, cols, in_cycle, "lanes",
                    fmt::format(" data-steps=\"{}\" data-shown=\"{}\" aria-label=\"interleaving: "
                                "one column per thread, one row per step\"",
                                n, to - from)) +
         step_rows(exec, cols, from, to);
  if (to < n) {
    out += fmt::format(
        "<tr class=\"gap\"><td class=\"num\">…</td><td colspan=\"{}\">steps {}–{} folded "
        "below</td></tr>",
        cols.size(), to, n - 1);
  }
  // Findings detected after the last step (or at no step): marked before the end row.
  for (const sched::Finding& f : exec.findings()) {
    if (f.step >= 0 && static_cast<std::size_t>(f.step) < n) continue;
    out += fmt::format(
        "<tr class=\"event ev-{0}\"><td class=\"num\">⚑</td><td colspan=\"{1}\" "
        "class=\"event-text{2}\"><span class=\"ev-text\"><b>{0}</b> at the end: "
        "{3}</span></td></tr>",
        escape(f.kind), cols.size(), sched::kinds::is_failure(f.kind) ? " fail" : "",
        escape(message_text(f)));
    out += crash_row(exec, cols, f);
  }
  out += end_row(exec, cols) + "</tbody></table></div>";
  if (to < n) out += folded(exec, in_cycle, to, n, "after the finding");
  return out;
}

std::string cycle_svg(const sched::Finding& f, const sched::Execution* exec) {
  const std::size_t n = f.cycle.size();
  if (n == 0) return {};
  const double W = 900, H = n <= 2 ? 220 : 300, cx = W / 2, cy = H / 2, r = n <= 2 ? 62 : 100;
  std::string svg = fmt::format(
      "<svg class=\"cycle\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-label=\"wait-for cycle\">"
      "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
      "markerHeight=\"7\" "
      "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
      "fill=\"#b42318\"/></marker></defs>",
      W, H);
  auto pos = [&](std::size_t i) {
    const double a = -std::numbers::pi / 2 +
                     2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(n);
    return std::pair{cx + (n == 1 ? 0 : r * 1.9 * std::cos(a)),
                     cy + (n == 1 ? 0 : r * std::sin(a))};
  };
  // What a thread of the cycle waits on: the lock, or the job.
  auto waits_on = [&](const std::string& name) -> std::string {
    if (!exec) return "waits for";
    for (std::size_t t = 0; t < exec->thread_count(); ++t) {
      const auto id = static_cast<sched::ThreadId>(t);
      if (exec->thread_name(id) != name) continue;
      const sched::Op* op = exec->pending_op(id);
      std::string what = exec->describe(*op);
      if (op->kind == sched::OpKind::kLock && what.rfind("lock ", 0) == 0) what = what.substr(5);
      if (op->kind == sched::OpKind::kWaitJob && what.rfind("wait ", 0) == 0) what = what.substr(5);
      return "waits for " + what;
    }
    return "waits for";
  };
  for (std::size_t i = 0; i < n; ++i) {
    auto [x1, y1] = pos(i);
    auto [x2, y2] = pos((i + 1) % n);
    const double dx = x2 - x1, dy = y2 - y1, len = std::max(1.0, std::hypot(dx, dy));
    // Curved so that two-thread cycles show both directions.
    const double mx = (x1 + x2) / 2 - dy / len * 30, my = (y1 + y2) / 2 + dx / len * 30;
    const double sx = x1 + dx / len * 62, sy = y1 + dy / len * 22;
    const double ex = x2 - dx / len * 62, ey = y2 - dy / len * 22;
    const std::string label = waits_on(f.cycle[i]);
    svg += fmt::format(
        "<path class=\"edge\" d=\"M{:.1f},{:.1f} Q{:.1f},{:.1f} {:.1f},{:.1f}\" "
        "marker-end=\"url(#arrow)\"><title>{} {} ({})</title></path>",
        sx, sy, mx, my, ex, ey, escape(f.cycle[i]), escape(label), escape(f.cycle[(i + 1) % n]));
    // The label at the curve's middle, on its outer side.
    const double lx = 0.25 * sx + 0.5 * mx + 0.25 * ex, ly = 0.25 * sy + 0.5 * my + 0.25 * ey;
    const double ox = mx - (x1 + x2) / 2, oy = my - (y1 + y2) / 2;
    const char* anchor = ox < -1 ? "end" : ox > 1 ? "start" : "middle";
    svg += fmt::format(
        "<text class=\"edge-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{}</text>",
        lx + (ox < -1  ? -8
              : ox > 1 ? 8
                       : 0),
        ly + 4 +
            (oy > 1    ? 12
             : oy < -1 ? -8
                       : 0),
        anchor, escape(label));
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto [x, y] = pos(i);
    svg += fmt::format(
        "<rect class=\"node\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"120\" height=\"30\" rx=\"6\"/>",
        x - 60, y - 15);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", x, y + 4,
                       escape(f.cycle[i]));
  }
  svg += fmt::format(
      "<text class=\"muted\" x=\"8\" y=\"{:.0f}\">arrow: the thread waits for the one it points "
      "to, on what its label says</text>",
      H - 8);
  return svg + "</svg>";
}

std::string replay_html(const std::string& schedule_path, const sched::ExecutionResult& result,
                        const std::string& expected_kind, bool reproduced) {
  std::string body =
      fmt::format("<h1>racelab replay</h1><div class=\"sub\">racelab {} · {} · {} steps</div>",
                  kVersion, escape(schedule_path), result.exec->steps().size());
  body += fmt::format(
      "<p class=\"{}\">{}</p>", reproduced ? "fail" : "pass",
      reproduced ? escape("reproduced " + expected_kind)
                 : escape("completed without " +
                          (expected_kind.empty() ? std::string("findings") : expected_kind)));
  body += "<div>Replay it again:</div>" + html::copyable(replay_command(schedule_path));
  const sched::Finding* main = nullptr;
  for (const sched::Finding* fp : ordered(result.findings)) {
    const sched::Finding& f = *fp;
    body += fmt::format("<h3 class=\"finding\" data-kind=\"{0}\">{0}: {1}</h3>", escape(f.kind),
                        escape(message_text(f)));
    if (!f.cycle.empty()) body += cycle_svg(f, result.exec.get());
    if (!f.details.empty()) {
      body += "<ul>";
      for (const auto& d : f.details) body += "<li>" + escape(d) + "</li>";
      body += "</ul>";
    }
    if (f.kind == expected_kind || main == nullptr) main = &f;
  }
  body += "<h3>Interleaving</h3>" + legend_html() + interleaving_html(*result.exec, main);
  return html::page("racelab replay", "table.lanes div.legend", body);
}

ExploreOutput write_explore_files(const results::ScenarioRun& run, const std::string& dir) {
  ExploreOutput out = write_explore_outputs(run, dir);
  write_file_atomic(std::filesystem::path(dir) / "report.html",
                    explore_html({{&run, out.found}}, "racelab explore " + run.scenario.name,
                                 run.result.seconds));
  return out;
}

std::string write_replay_page(const std::string& dir, const std::string& schedule_path,
                              const sched::ExecutionResult& result,
                              const std::string& expected_kind, bool reproduced) {
  namespace fs = std::filesystem;
  ensure_directory(dir);
  nlohmann::json findings = nlohmann::json::array();
  for (const sched::Finding* f : ordered(result.findings)) {
    nlohmann::json item = finding_json(*f, {{"step", f->step}});
    item["failure"] = sched::kinds::is_failure(f->kind);
    findings.push_back(std::move(item));
  }
  const nlohmann::json report = {{"format", kReplayReportFormat},
                                 {"version", kReplayReportVersion},
                                 {"racelab_version", kVersion},
                                 {"schedule", schedule_path},
                                 {"expected_kind", expected_kind},
                                 {"reproduced", reproduced},
                                 {"steps", result.exec->steps().size()},
                                 {"virtual_time_s", round_seconds(result.exec->makespan())},
                                 {"findings", findings}};
  const std::string json_path = (fs::path(dir) / "report.json").lexically_normal().string();
  const std::string page = (fs::path(dir) / "report.html").lexically_normal().string();
  write_file_atomic(json_path, document_text(report));
  write_file_atomic(page, replay_html(schedule_path, result, expected_kind, reproduced));
  return json_path + ", " + page;
}

}  // namespace racelab::report

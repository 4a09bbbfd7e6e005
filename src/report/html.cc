#include "report/html.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <numbers>

#include "racelab/version.h"
#include "report/report.h"
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

// The operations worth a label on the lane: the lock, the hand-off to a worker, the waits and
// the subject's own points (compile begin/end, cache reads and inserts).
bool labelled(sched::OpKind k) {
  using sched::OpKind;
  return k == OpKind::kLock || k == OpKind::kUnlock || k == OpKind::kSubmit ||
         k == OpKind::kWaitJob || k == OpKind::kPoint || k == OpKind::kEventWait;
}

std::string expectation_text(const model::Scenario& sc) {
  std::string s;
  if (!sc.must.empty()) s += "must find " + fmt::format("{}", fmt::join(sc.must, ", "));
  if (!sc.must_not.empty()) {
    s += (s.empty() ? "" : "; ") + std::string("must not find ") +
         fmt::format("{}", fmt::join(sc.must_not, ", "));
  }
  return s.empty() ? "(none)" : s;
}

}  // namespace

std::string lanes_svg(const sched::Execution& exec, const sched::Finding* finding) {
  const auto& steps = exec.steps();
  const std::size_t threads = exec.thread_count();
  const double label_w = 150, step_w = 16, lane_h = 70, top = 8;
  const double tail = finding && !finding->cycle.empty() ? 200 : 130;
  const double W = label_w + step_w * static_cast<double>(steps.size()) + tail;
  const double H = top + lane_h * static_cast<double>(threads) + 22;
  std::string svg = fmt::format(
      "<svg class=\"lanes\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "role=\"img\" "
      "aria-label=\"interleaving: one lane per thread, one column per step\">",
      W, H, W, H);
  std::vector<bool> in_cycle(threads, false);
  if (finding) {
    for (std::size_t t = 0; t < threads; ++t) {
      for (const auto& name : finding->cycle) {
        if (exec.thread_name(static_cast<sched::ThreadId>(t)) == name) in_cycle[t] = true;
      }
    }
  }
  for (std::size_t t = 0; t < threads; ++t) {
    const double y = top + lane_h * static_cast<double>(t);
    svg += fmt::format(
        "<rect class=\"lane-bg\" x=\"0\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\"/>", y + 2,
        W, lane_h - 4);
    svg += fmt::format("<text x=\"6\" y=\"{:.0f}\"{}>{}</text>", y + lane_h - 12,
                       in_cycle[t] ? " class=\"fail\" font-weight=\"600\"" : "",
                       escape(exec.thread_name(static_cast<sched::ThreadId>(t))));
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const double x = label_w + step_w * static_cast<double>(i);
    const double y = top + lane_h * static_cast<double>(s.thread);
    const std::string what = exec.describe(s.op);
    svg += fmt::format(
        "<rect class=\"{}\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"14\"><title>step "
        "{}: {}: {}</title></rect>",
        op_class(s.op.kind), x + 1, y + lane_h - 24, step_w - 2, i,
        escape(exec.thread_name(s.thread)), escape(what));
    if (labelled(s.op.kind)) {
      std::string text = what.size() > 26 ? what.substr(0, 24) + "…" : what;
      svg += fmt::format(
          "<text class=\"muted\" font-size=\"9\" transform=\"translate({:.0f},{:.0f}) "
          "rotate(-40)\">{}</text>",
          x + step_w / 2, y + lane_h - 27, escape(text));
    }
  }
  if (finding && !finding->cycle.empty()) {
    const double x = label_w + step_w * static_cast<double>(steps.size()) + 6;
    for (std::size_t t = 0; t < threads; ++t) {
      if (!in_cycle[t]) continue;
      const double y = top + lane_h * static_cast<double>(t);
      svg += fmt::format(
          "<rect class=\"blocked\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" "
          "height=\"14\"><title>blocked</title></rect>",
          x, y + lane_h - 24);
      svg += fmt::format("<text class=\"fail\" x=\"{:.0f}\" y=\"{:.0f}\">blocked</text>", x + 16,
                         y + lane_h - 13);
    }
  }
  svg += fmt::format("<text class=\"muted\" x=\"{:.0f}\" y=\"{:.0f}\">steps 0-{} →</text>", label_w,
                     H - 6, steps.empty() ? 0 : steps.size() - 1);
  return svg + "</svg>";
}

std::string cycle_svg(const sched::Finding& f) {
  const std::size_t n = f.cycle.size();
  if (n == 0) return {};
  const double W = 620, H = n <= 2 ? 200 : 280, cx = W / 2, cy = H / 2, r = n <= 2 ? 60 : 95;
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
  for (std::size_t i = 0; i < n; ++i) {
    auto [x1, y1] = pos(i);
    auto [x2, y2] = pos((i + 1) % n);
    const double dx = x2 - x1, dy = y2 - y1, len = std::max(1.0, std::hypot(dx, dy));
    // Curved so that two-thread cycles show both directions.
    const double mx = (x1 + x2) / 2 - dy / len * 30, my = (y1 + y2) / 2 + dx / len * 30;
    svg += fmt::format(
        "<path class=\"edge\" d=\"M{:.1f},{:.1f} Q{:.1f},{:.1f} {:.1f},{:.1f}\" "
        "marker-end=\"url(#arrow)\"><title>{} waits for {}</title></path>",
        x1 + dx / len * 62, y1 + dy / len * 22, mx, my, x2 - dx / len * 62, y2 - dy / len * 22,
        escape(f.cycle[i]), escape(f.cycle[(i + 1) % n]));
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto [x, y] = pos(i);
    svg += fmt::format(
        "<rect class=\"node\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"120\" height=\"30\" rx=\"6\"/>",
        x - 60, y - 15);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", x, y + 4,
                       escape(f.cycle[i]));
  }
  svg += fmt::format("<text class=\"muted\" x=\"8\" y=\"{:.0f}\">arrows: waits for</text>", H - 8);
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
  body += "<div>Replay it again:</div>" + html::copyable("racelab replay " + schedule_path);
  const sched::Finding* main = nullptr;
  for (const sched::Finding* fp : ordered(result.findings())) {
    const sched::Finding& f = *fp;
    body += fmt::format("<h3>{}: {}</h3>", escape(f.kind), escape(message_text(f)));
    if (!f.cycle.empty()) body += cycle_svg(f);
    if (!f.details.empty()) {
      body += "<ul>";
      for (const auto& d : f.details) body += "<li>" + escape(d) + "</li>";
      body += "</ul>";
    }
    if (f.kind == expected_kind || main == nullptr) main = &f;
  }
  body += "<h3>Interleaving</h3><div class=\"scroll\">" + lanes_svg(*result.exec, main) + "</div>";
  return html::page("racelab replay", "svg.lanes", body);
}

std::string explore_html(const std::vector<HtmlScenario>& scenarios, const std::string& title,
                         double seconds) {
  std::string body =
      fmt::format("<h1>{}</h1><div class=\"sub\">racelab {} · {} scenario(s) · {:.2f} s</div>",
                  escape(title), kVersion, scenarios.size(), seconds);
  body +=
      "<table><tr><th>scenario</th><th>expectation</th><th>verdict</th><th>found</th><th "
      "class=\"num\">executions</th>"
      "<th class=\"num\">time</th></tr>";
  for (const HtmlScenario& h : scenarios) {
    const model::ScenarioRun& run = *h.run;
    std::string found;
    for (const auto& f : run.result.found) found += (found.empty() ? "" : ", ") + f.finding.kind;
    body += fmt::format(
        "<tr><td><a href=\"#{0}\">{0}</a></td><td>{1}</td><td "
        "class=\"{2}\">{3}</td><td>{4}</td><td class=\"num\">{5}{6}</td>"
        "<td class=\"num\">{7:.2f} s</td></tr>",
        escape(run.scenario.name), escape(expectation_text(run.scenario)),
        run.verdict() == model::Verdict::kPass ? "pass" : "fail",
        model::verdict_word(run.verdict()), escape(found.empty() ? "nothing" : found),
        run.result.executions,
        run.result.exhausted() ? " (exhaustive)"
        : run.proves()         ? " (cut short)"
                               : " (sampled)",
        run.result.seconds);
  }
  body += "</table>";
  body +=
      "<div class=\"legend\"><span><i style=\"background:var(--blue)\"></i>lock</span>"
      "<span><i style=\"background:#8fb0ee\"></i>unlock</span><span><i "
      "style=\"background:var(--orange)\"></i>submit "
      "job</span><span><i style=\"background:var(--purple)\"></i>wait for job</span><span><i "
      "style=\"background:var(--teal)\"></i>point (compile, cache)</span><span><i "
      "style=\"background:var(--grey)\"></i>other</span><span><i "
      "style=\"background:var(--fail)\"></i>blocked at the "
      "end</span></div>";
  for (const HtmlScenario& h : scenarios) {
    const model::ScenarioRun& run = *h.run;
    body += fmt::format("<h2 id=\"{0}\">{0} <span class=\"{1}\">{2}</span></h2>",
                        escape(run.scenario.name),
                        run.verdict() == model::Verdict::kPass ? "pass" : "fail",
                        model::verdict_word(run.verdict()));
    body += fmt::format("<div class=\"sub\">{}</div>", escape(run.coverage()));
    if (run.verdict() == model::Verdict::kInconclusive) {
      body += fmt::format("<p class=\"fail\">{}</p>", escape(run.verdict_reason()));
    }
    body += fmt::format("<div class=\"sub\">{} · {} · {} executions, stopped by {} · {}</div>",
                        escape(run.scenario.path), escape(run.result.strategy),
                        run.result.executions, sched::stop_reason_name(run.result.stop),
                        escape(expectation_text(run.scenario)));
    if (!run.missing.empty()) {
      body += fmt::format("<p class=\"fail\">expected but not found: {}</p>",
                          escape(fmt::format("{}", fmt::join(run.missing, ", "))));
    }
    if (run.result.found.empty()) {
      body +=
          fmt::format("<p>No finding in {} executions{}.</p>", run.result.executions,
                      run.result.exhausted() ? ": the bounded space was covered exhaustively" : "");
      continue;
    }
    for (std::size_t k = 0; k < run.result.found.size(); ++k) {
      const sched::FoundKind& f = run.result.found[k];
      body += fmt::format("<h3 id=\"{}-{}\">{}: {}</h3>", escape(run.scenario.name),
                          escape(f.finding.kind), escape(f.finding.kind),
                          escape(message_text(f.finding)));
      body += fmt::format(
          "<div class=\"sub\">first at execution {} · {} preemption(s) after shrinking (from {}) · "
          "{} steps</div>",
          f.execution, f.preemptions, f.original_preemptions, f.result.exec->steps().size());
      const auto& findings =
          h.report.contains("findings") ? h.report["findings"] : nlohmann::json::array();
      if (k < findings.size() && findings[k].contains("replay") &&
          findings[k]["replay"].is_string()) {
        body += "<div>Replay this interleaving:</div>" +
                html::copyable(findings[k]["replay"].get<std::string>());
      }
      if (!f.finding.cycle.empty()) body += "<h3>Wait-for cycle</h3>" + cycle_svg(f.finding);
      if (!f.finding.details.empty()) {
        body += "<ul>";
        for (const auto& d : f.finding.details) body += "<li>" + escape(d) + "</li>";
        body += "</ul>";
      }
      body += "<h3>Interleaving</h3><div class=\"scroll\">" +
              lanes_svg(*f.result.exec, &f.finding) + "</div>";
    }
  }
  bool any_finding = false;
  for (const HtmlScenario& h : scenarios) any_finding = any_finding || !h.run->result.found.empty();
  return html::page(title, any_finding ? "table svg.lanes" : "table", body);
}

}  // namespace racelab::report

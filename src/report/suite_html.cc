// report.html of racelab suite, a shard, racelab merge and racelab explore (html.h, SuitePage):
// the answer first (totals, one row per scenario with its cause), the evidence folded below.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "racelab/version.h"
#include "report/html.h"
#include "report/report.h"
#include "sched/kinds.h"
#include "util/html.h"

namespace racelab::report {

using html::escape;

namespace {

std::string expectation_text(const model::Scenario& sc) {
  std::string s;
  if (!sc.must.empty()) s += "must find " + fmt::format("{}", fmt::join(sc.must, ", "));
  if (!sc.must_not.empty()) {
    s += (s.empty() ? "" : "; ") + std::string("must not find ") +
         fmt::format("{}", fmt::join(sc.must_not, ", "));
  }
  return s.empty() ? "(none)" : s;
}

const char* verdict_class(results::Outcome v) {
  return v == results::Outcome::kPass      ? "pass"
         : v == results::Outcome::kPending ? "pending"
                                           : "fail";
}

const char* live_class(results::Outcome v) {
  return v == results::Outcome::kPass      ? "pass"
         : v == results::Outcome::kSkipped ? "skipped"
                                           : "fail";
}

// One row of the verdict table, and under it, for anything but a pass, the one-line cause.
std::string verdict_row(const std::string& name, const std::string& anchor, const char* kind,
                        const std::string& expectation, const char* klass, const char* word,
                        const std::string& found, const std::string& coverage, double seconds,
                        const std::string& cause) {
  std::string row = fmt::format(
      "<tr class=\"verdict\" data-scenario=\"{0}\" data-verdict=\"{5}\"><td><a class=\"nw\" "
      "href=\"#{1}\" "
      "onclick=\"var d = document.getElementById('{1}'); if (d) d.open = "
      "true;\">{0}</a></td><td>{2}</td><td>{3}</td><td class=\"{4}\">{5}</td><td>{6}</td>"
      "<td>{7}</td><td class=\"num\">{8:.2f} s</td></tr>",
      escape(name), escape(anchor), kind, escape(expectation), klass, word,
      escape(found.empty() ? "nothing" : found), escape(coverage), seconds);
  if (!cause.empty())
    row += fmt::format("<tr class=\"cause\"><td></td><td colspan=\"6\" class=\"{}\">{}</td></tr>",
                       klass, escape(cause));
  return row;
}

std::string live_kinds(const results::LiveCaseRun& l) {
  std::string kinds;
  for (const auto& [k, n] : l.kinds) kinds += (kinds.empty() ? "" : ", ") + k;
  return kinds;
}

// A scenario's heading: on explore's page an <h2>; on a suite's, the one line of a <details>
// that holds the rest, folded (the table above has the answer, and a page of 19 scenarios stays
// a few screens tall until asked for more).
std::string heading(const std::string& name, const char* klass, const char* word,
                    const std::string& tag, const std::string& brief, bool open) {
  if (open)
    return fmt::format("<h2 id=\"{0}\">{0} <span class=\"{1}\">{2}</span>{3}</h2>", escape(name),
                       klass, word, tag);
  return fmt::format(
      "<details class=\"scenario\" id=\"{0}\"><summary><b>{0}</b> <span "
      "class=\"{1}\">{2}</span>{3} "
      "<span class=\"muted\">· {4}</span></summary>",
      escape(name), klass, word, tag, escape(brief));
}

std::string model_section(const HtmlScenario& h, bool open) {
  const results::ScenarioRun& run = *h.run;
  const results::Outcome v = run.verdict();
  std::string kinds;
  for (const auto& f : run.result.found) kinds += (kinds.empty() ? "" : ", ") + f.finding.kind;
  std::string body = heading(run.scenario.name, verdict_class(v), results::outcome_word(v), "",
                             fmt::format("{} finding kind(s){}{}", run.result.found.size(),
                                         kinds.empty() ? "" : ": ", kinds),
                             open);
  body += fmt::format("<div class=\"sub\">{}</div>", escape(run.coverage()));
  if (v != results::Outcome::kPass)
    body += fmt::format("<p class=\"{}\">{}</p>", verdict_class(v), escape(run.verdict_reason()));
  body +=
      fmt::format("<div class=\"sub\">{} · {} · {} executions, stopped by {} · {}</div>",
                  escape(run.scenario.path), escape(run.result.strategy), run.result.executions,
                  sched::stop_reason_name(run.result.stop), escape(expectation_text(run.scenario)));
  if (run.result.found.empty()) {
    body += fmt::format("<p>No finding in {} executions{}.</p>", run.result.executions,
                        run.exhaustive() ? ": the bounded space was covered exhaustively" : "");
    return open ? body : body + "</details>";
  }
  // By severity (the registry's rank): the deadlock first, evidence last.
  std::vector<const sched::FoundKind*> found;
  for (const sched::FoundKind& f : run.result.found) found.push_back(&f);
  std::stable_sort(found.begin(), found.end(), [](const auto* a, const auto* b) {
    return sched::kinds::before(a->finding.kind, b->finding.kind);
  });
  for (const sched::FoundKind* fp : found) {
    const sched::FoundKind& f = *fp;
    body += fmt::format("<h3 class=\"finding\" data-kind=\"{1}\" id=\"{0}-{1}\">{1}: {2}</h3>",
                        escape(run.scenario.name), escape(f.finding.kind),
                        escape(message_text(f.finding)));
    body += fmt::format(
        "<div class=\"sub\">first at execution {} · {} preemption(s) after shrinking (from {}) · "
        "{} steps</div>",
        f.execution, f.preemptions, f.original_preemptions, f.result.exec->steps().size());
    for (const FoundOutput& w : h.found) {
      if (w.kind == f.finding.kind && !w.replay.empty()) {
        body += "<div>Replay this interleaving:</div>" + html::copyable(w.replay);
        break;
      }
    }
    // The evidence, folded on a page of many scenarios: the answer is in the table above.
    body += fmt::format("<details class=\"evidence\"{}><summary>{}interleaving, {} steps</summary>",
                        open ? " open" : "", f.finding.cycle.empty() ? "" : "wait-for cycle and ",
                        f.result.exec->steps().size());
    if (!f.finding.cycle.empty())
      body += "<h3>Wait-for cycle</h3>" + cycle_svg(f.finding, f.result.exec.get());
    if (!f.finding.details.empty()) {
      body += "<ul>";
      for (const auto& d : f.finding.details) body += "<li>" + escape(d) + "</li>";
      body += "</ul>";
    }
    body += "<h3>Interleaving</h3>" + interleaving_html(*f.result.exec, &f.finding) + "</details>";
  }
  if (!open) body += "</details>";
  return body;
}

std::string live_section(const results::LiveCaseRun& l, bool open) {
  std::string body = heading(l.scenario.name, live_class(l.verdict),
                             results::outcome_word(l.verdict), " <span class=\"tag\">live</span>",
                             fmt::format("{} executions, found {}", l.executions,
                                         live_kinds(l).empty() ? "nothing" : live_kinds(l)),
                             open);
  if (!l.reason.empty())
    body += fmt::format("<p class=\"{}\">{}</p>", live_class(l.verdict), escape(l.reason));
  std::string kinds;
  for (const auto& [k, n] : l.kinds)
    kinds += fmt::format("{}{} in {} execution(s)", kinds.empty() ? "" : ", ", k, n);
  body +=
      fmt::format("<div class=\"sub\">{} · {} executions · found {} · {}</div>",
                  escape(l.scenario.path), l.executions, escape(kinds.empty() ? "nothing" : kinds),
                  escape(expectation_text(l.scenario)));
  if (!l.memory.empty())
    body += fmt::format("<div class=\"sub\">memory: {}</div>", escape(l.memory_summary));
  if (const std::string command = l.command(); !command.empty())
    body += "<div>Run it again:</div>" + html::copyable(command);
  if (!l.out_dir.empty())
    body += fmt::format("<div class=\"sub\">its report: {}/report.json</div>", escape(l.out_dir));
  return open ? body : body + "</details>";
}

}  // namespace

std::string suite_html(const SuitePage& p) {
  const results::SuiteTotals& t = p.totals;
  std::string body =
      fmt::format("<h1>{}</h1><div class=\"sub\">racelab {} · {} scenario(s) · {:.2f} s</div>",
                  escape(p.title), kVersion, t.scenarios, t.seconds);
  body += fmt::format(
      "<p class=\"totals {}\" data-scenarios=\"{}\" data-passed=\"{}\" data-failed=\"{}\" "
      "data-inconclusive=\"{}\" data-skipped=\"{}\" data-pending=\"{}\">{}</p>",
      t.ok() ? "pass" : "fail", t.scenarios, t.passed, t.failed, t.inconclusive, t.skipped,
      t.pending, escape(t.line()));
  if (!t.shard.empty()) {
    body += fmt::format(
        "<p class=\"shard-note\">This is {} of a sharded run: each search ran its part (partial), "
        "a failure it found is a failure, and what a part cannot settle is PENDING until racelab "
        "merge judges every shard together.</p>",
        escape(t.shard));
  }
  body +=
      "<table class=\"verdicts\"><thead><tr><th>scenario</th><th>kind</th><th>expectation</th>"
      "<th>verdict</th><th>found</th><th>coverage</th><th class=\"num\">time</th></tr></thead>"
      "<tbody>";
  for (const HtmlScenario& h : p.scenarios) {
    const results::ScenarioRun& run = *h.run;
    std::string found;
    for (const auto& f : run.result.found) found += (found.empty() ? "" : ", ") + f.finding.kind;
    const results::Outcome v = run.verdict();
    body += verdict_row(run.scenario.name, run.scenario.name, "model",
                        expectation_text(run.scenario), verdict_class(v), results::outcome_word(v),
                        found, run.coverage_brief(), run.result.seconds, run.verdict_reason());
  }
  if (p.live != nullptr) {
    for (const results::LiveCaseRun& l : *p.live) {
      body += verdict_row(l.scenario.name, l.scenario.name, "live", expectation_text(l.scenario),
                          live_class(l.verdict), results::outcome_word(l.verdict), live_kinds(l),
                          fmt::format("{} executions", l.executions), l.seconds, l.reason);
    }
  }
  for (const std::string& name : p.live_elsewhere) {
    body += fmt::format(
        "<tr class=\"elsewhere\" data-scenario=\"{0}\"><td>{0}</td><td>live</td><td "
        "colspan=\"5\" class=\"muted\">runs whole on shard 0</td></tr>",
        escape(name));
  }
  body += "</tbody></table>";
  bool any_finding = false;
  for (const HtmlScenario& h : p.scenarios)
    any_finding = any_finding || !h.run->result.found.empty();
  if (any_finding) body += legend_html();
  for (const HtmlScenario& h : p.scenarios) body += model_section(h, p.open);
  if (p.live != nullptr) {
    for (const results::LiveCaseRun& l : *p.live) body += live_section(l, p.open);
  }
  return html::page(p.title, any_finding ? "table.verdicts table.lanes" : "table.verdicts", body);
}

std::string explore_html(const std::vector<HtmlScenario>& scenarios, const std::string& title,
                         double seconds) {
  SuitePage p{.title = title, .scenarios = scenarios, .open = scenarios.size() == 1};
  for (const HtmlScenario& h : scenarios) p.totals.add(h.run->verdict());
  if (!scenarios.empty()) p.totals.shard = scenarios.front().run->shard_label();
  p.totals.seconds = seconds;
  return suite_html(p);
}

}  // namespace racelab::report

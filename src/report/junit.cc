#include "report/junit.h"

#include <fmt/format.h>

#include "alloc/inputs.h"
#include "report/report.h"
#include "util/html.h"

namespace racelab::report {

using results::Outcome;

std::string xml_escape(const std::string& text) {
  std::string clean = text;
  for (char& c : clean) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') c = ' ';
  }
  return html::escape(clean);
}

std::string junit_xml(std::string_view suite, const std::vector<JunitCase>& cases, double seconds) {
  int failures = 0, skipped = 0;
  for (const JunitCase& c : cases) {
    failures += c.outcome == Outcome::kFail || c.outcome == Outcome::kInconclusive;
    skipped += c.outcome == Outcome::kPending || c.outcome == Outcome::kSkipped;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"racelab\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     cases.size(), failures, seconds);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"{:.3f}\">\n",
      xml_escape(std::string(suite)), cases.size(), failures, skipped, seconds);
  for (const JunitCase& c : cases) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(c.classname),
                       xml_escape(c.name));
    if (c.file) out += fmt::format(" file=\"{}\"", xml_escape(*c.file));
    out += fmt::format(" time=\"{}\">\n", c.time);
    switch (c.outcome) {
      case Outcome::kPass:
        break;
      case Outcome::kPending:
      case Outcome::kSkipped:
        out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.message));
        break;
      case Outcome::kFail:
      case Outcome::kInconclusive:
        out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                           xml_escape(c.message),
                           c.outcome == Outcome::kInconclusive ? "inconclusive" : "expectation",
                           xml_escape(c.body));
        break;
    }
    if (c.system_out)
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(*c.system_out));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string junit_xml(const std::vector<results::ScenarioRun>& runs, double seconds,
                      const std::vector<results::LiveCaseRun>& live, const std::string& shard) {
  std::vector<JunitCase> cases;
  for (const auto& r : runs) {
    JunitCase c{.classname = "racelab.scenarios",
                .name = r.scenario.name,
                .file = r.scenario.path,
                .time = fmt::format("{:.3f}", r.result.seconds),
                .outcome = r.verdict()};
    const std::string props = fmt::format("{} executions, strategy {}: {}", r.result.executions,
                                          r.result.strategy, r.coverage());
    if (c.outcome == Outcome::kFail || c.outcome == Outcome::kInconclusive) {
      // The failure's text carries the numbers and every unexpected finding; no system-out.
      c.message = r.verdict_reason();
      c.body = props + "\n";
      for (const auto& kind : r.unexpected) {
        if (const auto* f = r.result.find(kind))
          c.body += kind + ": " + message_text(f->finding) + "\n";
      }
    } else {
      if (c.outcome == Outcome::kPending) c.message = r.verdict_reason();
      c.system_out = props;
    }
    cases.push_back(std::move(c));
  }
  for (const auto& l : live) {
    std::string kinds;
    for (const auto& [k, n] : l.kinds)
      kinds += fmt::format("{}{} in {}", kinds.empty() ? "" : ", ", k, n);
    std::string props = fmt::format("{} executions; kinds: {}; {}", l.executions,
                                    kinds.empty() ? "none" : kinds, l.command());
    if (!l.memory.empty()) props += "; memory: " + l.memory_summary;
    cases.push_back(JunitCase{.classname = "racelab.live",
                              .name = l.scenario.name,
                              .file = l.scenario.path,
                              .time = fmt::format("{:.3f}", l.seconds),
                              .outcome = l.verdict,
                              .message = l.reason,
                              .body = props,
                              .system_out = props});
  }
  return junit_xml(shard.empty() ? "racelab.suite" : "racelab.suite (" + shard + ")", cases,
                   seconds);
}

std::string alloc_junit_xml(const std::vector<alloc::StabilityReport>& reports,
                            results::MemoryExpect expect, double seconds) {
  const std::string word = results::memory_expect_name(expect);
  std::vector<JunitCase> cases;
  for (const alloc::StabilityReport& r : reports) {
    const results::Verdict v =
        results::judge({.memory = expect}, {},
                       results::MemoryFacts{.measured = r.measured, .stable = r.stable}, {});
    const std::string body = fmt::format("{}; {} {} ({}); peak reserved {}", r.verdict,
                                         r.rows.size(), r.iterations ? "iterations" : "windows",
                                         r.boundaries_source, alloc::mib(r.peak_reserved));
    cases.push_back(JunitCase{
        .classname = "racelab.alloc." + word,
        .name = r.name,
        .time = "0",
        .outcome = v.outcome,
        .message =
            fmt::format("{}expected {}: {}", r.measured ? "" : "inconclusive: ", word, r.verdict),
        .body = body,
        .system_out = body});
  }
  return junit_xml("racelab.alloc", cases, seconds);
}

}  // namespace racelab::report

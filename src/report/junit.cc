// JUnit XML in the shape common CI viewers accept (GitLab, Jenkins, GitHub test reporters):
// <testsuites><testsuite><testcase><failure message="..">details</failure></testcase>...
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/report.h"

namespace racelab::report {

std::string junit_xml(const std::vector<model::ScenarioRun>& runs, double seconds,
                      const std::vector<model::LiveCaseRun>& live, const std::string& shard) {
  int failures = 0, skipped = 0;
  for (const auto& r : runs) {
    const results::Outcome v = r.verdict();
    failures += v == results::Outcome::kFail || v == results::Outcome::kInconclusive;
    skipped += v == results::Outcome::kPending;
  }
  for (const auto& l : live) {
    skipped += l.verdict == results::Outcome::kSkipped;
    failures +=
        l.verdict == results::Outcome::kFail || l.verdict == results::Outcome::kInconclusive;
  }
  const std::size_t tests = runs.size() + live.size();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"racelab\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     tests, failures, seconds);
  out += fmt::format(
      "  <testsuite name=\"racelab.suite{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\" time=\"{:.3f}\">\n",
      shard.empty() ? "" : " (" + xml_escape(shard) + ")", tests, failures, skipped, seconds);
  for (const auto& r : runs) {
    out += fmt::format(
        "    <testcase classname=\"racelab.scenarios\" name=\"{}\" file=\"{}\" time=\"{:.3f}\"",
        xml_escape(r.scenario.name), xml_escape(r.scenario.path), r.result.seconds);
    const std::string props = fmt::format("{} executions, strategy {}: {}", r.result.executions,
                                          r.result.strategy, r.coverage());
    const results::Outcome v = r.verdict();
    if (v == results::Outcome::kPass) {
      out +=
          fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(props));
      continue;
    }
    if (v == results::Outcome::kPending) {
      out += fmt::format(
          ">\n      <skipped message=\"{}\"/>\n      <system-out>{}</system-out>\n    "
          "</testcase>\n",
          xml_escape(r.verdict_reason()), xml_escape(props));
      continue;
    }
    // Inconclusive is a failure for CI: the proof the scenario keeps was not completed.
    std::string body = props + "\n";
    for (const auto& kind : r.unexpected) {
      if (const auto* f = r.result.find(kind))
        body += kind + ": " + message_text(f->finding) + "\n";
    }
    out += fmt::format(
        ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
        xml_escape(r.verdict_reason()),
        v == results::Outcome::kInconclusive ? "inconclusive" : "expectation", xml_escape(body));
  }
  for (const auto& l : live) {
    out += fmt::format(
        "    <testcase classname=\"racelab.live\" name=\"{}\" file=\"{}\" time=\"{:.3f}\">\n",
        xml_escape(l.scenario.name), xml_escape(l.scenario.path), l.seconds);
    std::string kinds;
    for (const auto& [k, n] : l.kinds)
      kinds += fmt::format("{}{} in {}", kinds.empty() ? "" : ", ", k, n);
    std::string props = fmt::format("{} executions; kinds: {}; {}", l.executions,
                                    kinds.empty() ? "none" : kinds, l.command());
    if (!l.memory.empty()) props += "; memory: " + l.memory_summary;
    if (l.verdict == results::Outcome::kSkipped) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(l.reason));
    } else if (l.verdict != results::Outcome::kPass) {
      out += fmt::format(
          "      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml_escape(l.reason),
          l.verdict == results::Outcome::kInconclusive ? "inconclusive" : "expectation",
          xml_escape(props));
    }
    out += fmt::format("      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(props));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace racelab::report

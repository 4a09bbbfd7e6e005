// JUnit XML in the shape common CI viewers accept (GitLab, Jenkins, GitHub test reporters):
// <testsuites><testsuite><testcase><failure message="..">details</failure></testcase>...
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/report.h"

namespace racelab::report {

std::string junit_xml(const std::vector<model::ScenarioRun>& runs, double seconds) {
  int failures = 0;
  for (const auto& r : runs) failures += r.verdict() == model::Verdict::kPass ? 0 : 1;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"racelab\" tests=\"{}\" failures=\"{}\" time=\"{:.3f}\">\n",
                     runs.size(), failures, seconds);
  out += fmt::format(
      "  <testsuite name=\"racelab.suite\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"0\" time=\"{:.3f}\">\n",
      runs.size(), failures, seconds);
  for (const auto& r : runs) {
    out += fmt::format(
        "    <testcase classname=\"racelab.scenarios\" name=\"{}\" file=\"{}\" time=\"{:.3f}\"",
        xml_escape(r.scenario.name), xml_escape(r.scenario.path), r.result.seconds);
    const std::string props = fmt::format("{} executions, strategy {}: {}", r.result.executions,
                                          r.result.strategy, r.coverage());
    const model::Verdict v = r.verdict();
    if (v == model::Verdict::kPass) {
      out +=
          fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(props));
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
        v == model::Verdict::kInconclusive ? "inconclusive" : "expectation", xml_escape(body));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace racelab::report

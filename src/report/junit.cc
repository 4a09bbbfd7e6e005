// JUnit XML in the shape common CI viewers accept (GitLab, Jenkins, GitHub test reporters):
// <testsuites><testsuite><testcase><failure message="..">details</failure></testcase>...
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/report.h"

namespace racelab::report {

std::string junit_xml(const std::vector<model::ScenarioRun>& runs, double seconds) {
  int failures = 0;
  for (const auto& r : runs) failures += r.holds() ? 0 : 1;
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
    std::string props = fmt::format(
        "{} executions, strategy {}, {}", r.result.executions, r.result.strategy,
        r.result.exhausted() ? "exhaustive within the bound"
                             : std::string("stopped by ") + sched::stop_reason_name(r.result.stop));
    if (r.holds()) {
      out +=
          fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(props));
      continue;
    }
    std::string message;
    if (!r.missing.empty())
      message += "expected but not found: " + fmt::format("{}", fmt::join(r.missing, ", "));
    if (!r.unexpected.empty()) {
      message += (message.empty() ? "" : "; ") +
                 fmt::format("found but must not occur: {}", fmt::join(r.unexpected, ", "));
    }
    std::string body = props + "\n";
    for (const auto& kind : r.unexpected) {
      if (const auto* f = r.result.find(kind)) body += kind + ": " + f->finding.message + "\n";
    }
    out += fmt::format(
        ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>\n",
        xml_escape(message), xml_escape(body));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace racelab::report

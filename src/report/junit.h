#pragma once
// JUnit XML, the one writer for every command that writes it (racelab suite and merge --junit,
// racelab alloc report --junit), in the shape common CI viewers accept (GitLab, Jenkins, GitHub
// test reporters): <testsuites><testsuite><testcase>, a <failure message=".." type="..">details
// </failure> or a <skipped message=".."/>, then <system-out>. Each command turns its typed results
// into JunitCases; the rule for what fails is results::judge's Outcome, said once here:
//   pass                  no <failure>
//   fail, inconclusive    <failure>, type "expectation" or "inconclusive" (CI must not pass on a
//                         proof that was not completed)
//   pending, skipped      <skipped/> (a shard's scenario that racelab merge judges; a live case
//                         this machine cannot run)
// Every text is escaped for XML 1.0 (xml_escape): its forbidden control characters become spaces.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alloc/report.h"
#include "results/live_case_run.h"
#include "results/scenario_run.h"
#include "sched/expectations.h"
#include "sched/verdict.h"

namespace racelab::report {

struct JunitCase {
  std::string classname;
  std::string name;
  std::optional<std::string> file;  // the testcase's file attribute, where there is one
  std::string time;                 // preformatted: "{:.3f}" seconds, or "0"
  results::Outcome outcome = results::Outcome::kPass;
  std::string message;                    // the <failure>'s or <skipped/>'s message
  std::string body;                       // the <failure>'s text
  std::optional<std::string> system_out;  // none: no <system-out>
};

// The document: one testsuites "racelab" holding one testsuite `suite`, the cases in order.
std::string junit_xml(std::string_view suite, const std::vector<JunitCase>& cases, double seconds);

// racelab suite and merge: testsuite "racelab.suite", one testcase per scenario (class
// racelab.scenarios), then per live case (racelab.live). A failure names the unexpected finding
// kinds; a shard's (`shard`: "shard 1/4") testsuite says so in its name, and a pending scenario
// is a <skipped/> whose message says racelab merge judges it.
std::string junit_xml(const std::vector<results::ScenarioRun>& runs, double seconds,
                      const std::vector<results::LiveCaseRun>& live = {},
                      const std::string& shard = "");

// racelab alloc report --expect E --junit: testsuite "racelab.alloc", one testcase per report
// (class racelab.alloc.<E>), each judged against `expect` (results::judge): not as expected fails,
// not measured is inconclusive; the verdict and the numbers in system-out.
std::string alloc_junit_xml(const std::vector<alloc::StabilityReport>& reports,
                            results::MemoryExpect expect, double seconds);

// Text for an XML attribute or element: html::escape, after XML 1.0's forbidden control
// characters (all below 0x20 but tab, newline and return) become spaces.
std::string xml_escape(const std::string& text);

}  // namespace racelab::report

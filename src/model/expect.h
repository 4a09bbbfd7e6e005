#pragma once
// A scenario's [expect] checked against the kinds a run found, for model scenarios (suite.h's
// judge) and live cases (live_case.h) alike: the kinds missing and unexpected, and the one wording
// of why the expectations do not hold.
#include <string>
#include <vector>

namespace racelab::model {

struct ExpectationCheck {
  std::vector<std::string> missing;     // in must, never found; in report order
  std::vector<std::string> unexpected;  // in must_not, found; in report order
  bool holds() const { return missing.empty() && unexpected.empty(); }
};

// `found`: the kinds the run found, in any order, each any number of times. Report order is
// sched::kinds::before.
ExpectationCheck check_expectations(const std::vector<std::string>& must,
                                    const std::vector<std::string>& must_not,
                                    const std::vector<std::string>& found);

// "expected but not found: A, B; found but must not occur: C"; empty when the check holds.
std::string expectation_reason(const ExpectationCheck& check);

}  // namespace racelab::model

#include "model/expect.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sched/kinds.h"

namespace racelab::model {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void sort_in_report_order(std::vector<std::string>& kinds) {
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return sched::kinds::before(a, b); });
}

}  // namespace

ExpectationCheck check_expectations(const std::vector<std::string>& must,
                                    const std::vector<std::string>& must_not,
                                    const std::vector<std::string>& found) {
  ExpectationCheck out;
  for (const auto& kind : must)
    if (!contains(found, kind)) out.missing.push_back(kind);
  for (const auto& kind : found)
    if (contains(must_not, kind) && !contains(out.unexpected, kind)) out.unexpected.push_back(kind);
  sort_in_report_order(out.missing);
  sort_in_report_order(out.unexpected);
  return out;
}

std::string expectation_reason(const ExpectationCheck& check) {
  std::vector<std::string> parts;
  if (!check.missing.empty())
    parts.push_back(fmt::format("expected but not found: {}", fmt::join(check.missing, ", ")));
  if (!check.unexpected.empty()) {
    parts.push_back(fmt::format("found but must not occur: {}", fmt::join(check.unexpected, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace racelab::model

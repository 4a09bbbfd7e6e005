#include "sched/expectations.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sched/kinds.h"

namespace racelab::results {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void sort_in_report_order(std::vector<std::string>& kinds) {
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return sched::kinds::before(a, b); });
}

}  // namespace

const char* memory_expect_name(MemoryExpect m) {
  return m == MemoryExpect::kStable ? "stable" : "unstable";
}

std::vector<std::pair<std::string, MemoryExpect>> memory_expect_table() {
  std::vector<std::pair<std::string, MemoryExpect>> out;
  for (const MemoryExpect m : {MemoryExpect::kStable, MemoryExpect::kUnstable})
    out.emplace_back(memory_expect_name(m), m);
  return out;
}

std::optional<MemoryExpect> parse_memory_expect(std::string_view name) {
  for (const auto& [word, m] : memory_expect_table())
    if (word == name) return m;
  return std::nullopt;
}

const char* live_expect_name(LiveExpect e) {
  return e == LiveExpect::kClean ? "clean" : "deadlock";
}

std::vector<std::pair<std::string, LiveExpect>> live_expect_table() {
  std::vector<std::pair<std::string, LiveExpect>> out;
  for (const LiveExpect e : {LiveExpect::kClean, LiveExpect::kDeadlock})
    out.emplace_back(live_expect_name(e), e);
  return out;
}

std::optional<LiveExpect> parse_live_expect(std::string_view name) {
  for (const auto& [word, e] : live_expect_table())
    if (word == name) return e;
  return std::nullopt;
}

Expectations expectations_for(LiveExpect e) {
  Expectations out;
  if (e == LiveExpect::kDeadlock)
    out.must = {std::string(sched::kinds::kDeadlock)};
  else
    out.no_failure = true;
  return out;
}

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

}  // namespace racelab::results

#include "results/suite_totals.h"

#include <fmt/format.h>

namespace racelab::results {

void SuiteTotals::add(results::Outcome v) {
  ++scenarios;
  passed += v == results::Outcome::kPass;
  failed += v == results::Outcome::kFail;
  inconclusive += v == results::Outcome::kInconclusive;
  pending += v == results::Outcome::kPending;
  skipped += v == results::Outcome::kSkipped;
}

std::string SuiteTotals::line() const {
  std::string text = shard.empty() ? "" : shard + ": ";
  text += fmt::format("{} scenarios: {} passed, {} failed, {} inconclusive", scenarios, passed,
                      failed, inconclusive);
  if (skipped > 0) text += fmt::format(", {} skipped", skipped);
  if (!shard.empty()) text += fmt::format(", {} pending (racelab merge judges them)", pending);
  if (elsewhere > 0) text += fmt::format("; {} live case(s) run on shard 0", elsewhere);
  if (interrupted) text += " (interrupted)";
  return text + fmt::format(" in {:.2f} s", seconds);
}

}  // namespace racelab::results

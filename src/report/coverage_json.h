#pragma once
// Interleaving coverage as report.json carries it (`interleavings`), for model and live reports
// alike (docs/formats.md).
#include <cmath>
#include <nlohmann/json.hpp>

#include "sched/coverage.h"

namespace racelab::report {

// `sampling`: the run sampled (random, pct, pos, surw), so the estimates of what it has not seen
// are given; a proving strategy counts, it does not sample. Rounded: reports carry no 17-digit
// noise (6 decimals, and classes to the hundredth).
inline nlohmann::ordered_json coverage_json(const sched::CoverageSummary& c, bool sampling) {
  nlohmann::ordered_json cov = {{"fingerprint", "per-resource hand-off order"},
                                {"classes_seen", c.classes},
                                {"executions", c.executions},
                                {"seen_once", c.seen_once},
                                {"seen_twice", c.seen_twice},
                                {"saturated", c.saturated}};
  if (sampling && !c.saturated) {
    cov["unseen_probability"] = std::round(c.unseen_probability * 1e6) / 1e6;
    cov["estimated_classes"] = std::round(c.estimated_classes * 100) / 100;
  }
  return cov;
}

}  // namespace racelab::report

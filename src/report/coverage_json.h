#pragma once
// What an exploration did (sched::Explored) and its interleaving coverage, as report.json carries
// them, for model and live reports alike (docs/formats.md): one writer, so that the two reports
// cannot drift apart.
#include <cmath>
#include <nlohmann/json.hpp>

#include "sched/coverage.h"
#include "sched/exploration.h"
#include "sched/loop.h"

namespace racelab::report {

// `sampling`: the run sampled (random, pct, pos, surw), so the estimates of what it has not seen
// are given; a proving strategy counts, it does not sample. Rounded: reports carry no 17-digit
// noise (6 decimals, and classes to the hundredth).
inline bool has_estimates(const sched::CoverageSummary& c, bool sampling) {
  return sampling && !c.saturated;
}
inline double rounded_unseen_probability(const sched::CoverageSummary& c) {
  return std::round(c.unseen_probability * 1e6) / 1e6;
}
inline nlohmann::ordered_json coverage_json(const sched::CoverageSummary& c, bool sampling) {
  nlohmann::ordered_json cov = {{"fingerprint", "per-resource hand-off order"},
                                {"classes_seen", c.classes},
                                {"executions", c.executions},
                                {"seen_once", c.seen_once},
                                {"seen_twice", c.seen_twice},
                                {"saturated", c.saturated}};
  if (has_estimates(c, sampling)) {
    cov["unseen_probability"] = rounded_unseen_probability(c);
    cov["estimated_classes"] = std::round(c.estimated_classes * 100) / 100;
  }
  return cov;
}

// How report.json gives an exploration's seconds: the model's report rounds them to the
// microsecond (like its other times); the live report has always given them as measured.
enum class Seconds { kRounded, kAsMeasured };

// An exploration's counts as report.json carries them, in this order: executions, seconds,
// stopped_by, exhausted, proves and, where `counted` (ExploreResult::coverage_counted),
// interleavings. `proves`: the strategy covers its space, so the coverage is counted, not sampled.
inline nlohmann::ordered_json explored_json(const sched::Explored& e, bool proves, Seconds seconds,
                                            bool counted = true) {
  nlohmann::ordered_json j;
  j["executions"] = e.executions;
  j["seconds"] = seconds == Seconds::kRounded ? std::round(e.seconds * 1e6) / 1e6 : e.seconds;
  j["stopped_by"] = sched::stop_reason_name(e.stop);
  j["exhausted"] = e.exhausted();
  j["proves"] = proves;
  if (counted) j["interleavings"] = coverage_json(e.coverage.summary(), !proves);
  return j;
}

}  // namespace racelab::report

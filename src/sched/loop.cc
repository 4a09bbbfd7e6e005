#include "sched/loop.h"

#include <fmt/format.h>

namespace racelab::sched {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kBudget:
      return "budget";
    case StopReason::kExhausted:
      return "exhausted";
    case StopReason::kTimeLimit:
      return "time_limit";
    case StopReason::kInterrupted:
      return "interrupted";
  }
  return "?";
}

std::optional<StopReason> parse_stop_reason(std::string_view name) {
  for (StopReason r : {StopReason::kBudget, StopReason::kExhausted, StopReason::kTimeLimit,
                       StopReason::kInterrupted}) {
    if (name == stop_reason_name(r)) return r;
  }
  return std::nullopt;
}

const char* stop_reason_words(StopReason r) {
  switch (r) {
    case StopReason::kBudget:
      return "the execution cap";
    case StopReason::kExhausted:
      return "the end of the space";
    case StopReason::kTimeLimit:
      return "the time limit";
    case StopReason::kInterrupted:
      return "an interrupt";
  }
  return "?";
}

std::string coverage_sentence(const SearchCover& c) {
  const std::uint64_t n = c.executions;
  if (c.proves) {
    if (c.stop == StopReason::kExhausted && c.classes && c.states) {  // dpor with its state cache
      return fmt::format(
          "exhaustive: every interleaving class explored or met at a state explored before ({}): "
          "{} executions ({} complete, {} at a state explored before, {} sleep-set blocked), {} "
          "states",
          c.strategy, n, c.classes->classes, c.classes->cached, c.classes->redundant, *c.states);
    }
    if (c.stop == StopReason::kExhausted && c.classes) {
      return fmt::format(
          "exhaustive: every interleaving class explored ({}): {} executions, {} classes, {} "
          "redundant",
          c.strategy, n, c.classes->classes, c.classes->redundant);
    }
    if (c.stop == StopReason::kExhausted && c.states) {
      return fmt::format(
          "exhaustive: every reachable state explored ({}): {} executions, {} states", c.strategy,
          n, *c.states);
    }
    if (c.stop == StopReason::kExhausted) {
      return fmt::format("exhaustive{} ({}): {} executions", c.bounded ? " within the bound" : "",
                         c.strategy, n);
    }
    return fmt::format(
        "cut short by {} after {} executions ({}, cap {}) before covering the {}space: not a "
        "proof",
        stop_reason_words(c.stop), n, c.strategy, c.cap, c.bounded ? "bounded " : "");
  }
  if (c.stop == StopReason::kBudget || c.stop == StopReason::kExhausted)
    return fmt::format("sampled {} executions ({}), not a proof", n, c.strategy);
  return fmt::format("sampled {} of {} executions ({}; stopped by {}), not a proof", n, c.cap,
                     c.strategy, stop_reason_words(c.stop));
}

std::string cut_short_sentence(std::string_view strategy_name, StopReason stop,
                               std::uint64_t executions, bool bounded, std::string_view claim,
                               std::string_view remedy) {
  return fmt::format(
      "inconclusive: the {} search was cut short by {} after {} executions, before covering its "
      "{}space, so {} is not proven ({})",
      strategy_name, stop_reason_words(stop), executions, bounded ? "bounded " : "", claim, remedy);
}

ExpectationVerdict expectation_verdict(const ExpectationFacts& f) {
  if (f.wrong_found) return ExpectationVerdict::kFails;
  if (f.must_missing)
    return search_finished(f.proves, f.stop) ? ExpectationVerdict::kFails
                                             : ExpectationVerdict::kInconclusive;
  if (f.claims_absence && absence_cut_short(f.proves, f.stop))
    return ExpectationVerdict::kInconclusive;
  return ExpectationVerdict::kHolds;
}

std::string unfinished_sentence(std::string_view strategy_name, StopReason stop,
                                std::uint64_t executions, std::uint64_t cap, bool proves,
                                bool bounded, std::string_view missing, std::string_view remedy) {
  return fmt::format(
      "inconclusive: expected but not found: {}, but the {} search was cut short by {} after {} "
      "executions, before {}: an unfinished search shows nothing either way ({})",
      missing, strategy_name, stop_reason_words(stop), executions,
      proves ? fmt::format("covering its {}space", bounded ? "bounded " : "")
             : fmt::format("it ran its {} executions", cap),
      remedy);
}

}  // namespace racelab::sched

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
    if (c.stop == StopReason::kExhausted && c.misses_classes) {
      return fmt::format(
          "exhaustive, not a proof: the search ended, but it misses interleaving classes on some "
          "programs ({}): {} executions{}",
          c.strategy, n, c.classes ? fmt::format(", {} classes", c.classes->classes) : "");
    }
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
    // dpor says how its executions went so far: a search cut short still shows whether it
    // wasted any (issue 35: 0 redundant where the space is too large to exhaust).
    std::string so_far;
    if (c.classes && c.states) {
      so_far = fmt::format(" (so far {} complete, {} at a state explored before, {} blocked)",
                           c.classes->classes, c.classes->cached, c.classes->redundant);
    } else if (c.classes) {
      so_far = fmt::format(" (so far {} classes, {} redundant)", c.classes->classes,
                           c.classes->redundant);
    }
    return fmt::format(
        "cut short by {} after {} executions ({}, cap {}) before covering the {}space: not a "
        "proof{}",
        stop_reason_words(c.stop), n, c.strategy, c.cap, c.bounded ? "bounded " : "", so_far);
  }
  if (c.stop == StopReason::kBudget || c.stop == StopReason::kExhausted)
    return fmt::format("sampled {} executions ({}), not a proof", n, c.strategy);
  return fmt::format("sampled {} of {} executions ({}; stopped by {}), not a proof", n, c.cap,
                     c.strategy, stop_reason_words(c.stop));
}

}  // namespace racelab::sched

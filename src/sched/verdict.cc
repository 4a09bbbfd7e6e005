// The one rule (verdict.h) and its sentences.
#include "sched/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace racelab::results {

using sched::StopReason;

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kFail:
      return "fail";
    case Outcome::kInconclusive:
      return "inconclusive";
    case Outcome::kPending:
      return "pending";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "?";
}

const char* outcome_word(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kInconclusive:
      return "INCONCLUSIVE";
    case Outcome::kPending:
      return "PENDING";
    case Outcome::kSkipped:
      return "SKIP";
  }
  return "?";
}

std::optional<Outcome> outcome_from_name(std::string_view name) {
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kInconclusive, Outcome::kPending,
                    Outcome::kSkipped}) {
    if (name == outcome_name(o)) return o;
  }
  return std::nullopt;
}

namespace {

// An absence claimed by a search is proven only by a proving strategy (dfs, dpor) that covered
// its whole (bounded) space; a sampling strategy never claims a proof.
bool absence_cut_short(bool proves, StopReason stop) {
  return proves && stop != StopReason::kExhausted;
}

// Whether a search finished what it set out to do: a proving strategy covered its whole
// (bounded) space; a sampling strategy ran all the executions it was given (not stopped by the
// time limit or an interrupt). A must kind not found shows nothing either way otherwise.
bool search_finished(bool proves, StopReason stop) {
  if (proves) return stop == StopReason::kExhausted;
  return stop == StopReason::kBudget || stop == StopReason::kExhausted;
}

// "inconclusive: the dfs search was cut short by the execution cap after 3 executions, before
// covering its bounded space, so <claim> is not proven (<remedy>)".
std::string cut_short_sentence(const SearchFacts& f, std::string_view claim,
                               std::string_view remedy) {
  return fmt::format(
      "inconclusive: the {} search was cut short by {} after {} executions, before covering its "
      "{}space, so {} is not proven ({})",
      f.strategy, sched::stop_reason_words(f.stop), f.executions, f.bounded ? "bounded " : "",
      claim, remedy);
}

// "inconclusive: expected but not found: deadlock, but the random search was cut short by the time
// limit after 12 executions, before it ran its 2000 executions: an unfinished search shows nothing
// either way (<remedy>)".
std::string unfinished_sentence(const SearchFacts& f, std::string_view missing,
                                std::string_view remedy) {
  return fmt::format(
      "inconclusive: expected but not found: {}, but the {} search was cut short by {} after {} "
      "executions, before {}: an unfinished search shows nothing either way ({})",
      missing, f.strategy, sched::stop_reason_words(f.stop), f.executions,
      f.proves ? fmt::format("covering its {}space", f.bounded ? "bounded " : "")
               : fmt::format("it ran its {} executions", f.cap),
      remedy);
}

// racelab check's proof: its cap, the time limit or an interrupt.
std::string check_proof_sentence(const SearchFacts& f) {
  if (f.stop == StopReason::kInterrupted)
    return fmt::format(
        "the dpor proof was cut short by an interrupt after {} executions, before covering its "
        "space: not a proof (let it run to the end)",
        f.executions);
  return fmt::format(
      "the dpor proof was cut short by {} after {} executions, before covering its space: not a "
      "proof (raise --proof-executions or --time-limit)",
      f.stop == StopReason::kTimeLimit ? "the time limit" : "its cap (--proof-executions)",
      f.executions);
}

Verdict make(Outcome o, Why why, std::string reason) {
  Verdict v;
  v.outcome = o;
  v.why = why;
  v.reason = std::move(reason);
  return v;
}

}  // namespace

Wording model_wording(std::uint64_t iterations, bool has_bound) {
  return {.remedy = [iterations, has_bound](Why, StopReason stop) -> std::string {
    if (stop == StopReason::kBudget)
      return fmt::format("raise [explore] iterations above {}{}", iterations,
                         has_bound ? " or lower max_preemptions" : "");
    return stop == StopReason::kTimeLimit ? "raise or drop --time-limit" : "let it run to the end";
  }};
}

Wording live_case_wording() {
  return {.remedy = [](Why, StopReason stop) -> std::string {
    if (stop == StopReason::kTimeLimit) return "raise or drop the time limit";
    if (stop == StopReason::kInterrupted) return "let it run to the end";
    return "raise [live] executions or lower max_preemptions";
  }};
}

Wording live_wording() {
  return {.absence_claim = "the program's absence of a deadlock, hang or exception",
          .remedy = [](Why why, StopReason stop) -> std::string {
            if (why == Why::kUnfinished && stop == StopReason::kTimeLimit)
              return "raise or drop --time-limit";
            if (why == Why::kUnfinished && stop == StopReason::kInterrupted)
              return "let it run to the end";
            return "raise --executions, or lower --max-preemptions";
          }};
}

Wording check_wording() { return {.check_proof = true}; }

Verdict skipped(std::string reason) {
  return make(Outcome::kSkipped, Why::kSkipped, std::move(reason));
}

Verdict judge(const Expectations& e, const SearchFacts& f, const std::optional<MemoryFacts>& memory,
              const Wording& w) {
  if (!f.error.empty()) return make(Outcome::kFail, Why::kNoReport, f.error);
  const ExpectationCheck check = check_expectations(e.must, e.must_not, f.found);
  // The memory expectation: a problem fails like a must_not kind found; not measured leaves it
  // open (inconclusive, unless that passes).
  std::string memory_problem, memory_unknown;
  if (e.memory && memory) {
    const char* expected = memory_expect_name(*e.memory);
    if (memory->run_failed)
      memory_problem = "the allocator capture run failed: " + memory->summary;
    else if (!memory->error && !memory->measured)
      memory_unknown = fmt::format("memory expected {}, {}", expected, memory->summary);
    else if (memory->error || memory->stable != (*e.memory == MemoryExpect::kStable))
      memory_problem = fmt::format("memory expected {}, got {}", expected, memory->summary);
  }
  auto failed = [&] {
    std::vector<std::string> parts;
    if (const std::string why = expectation_reason(check); !why.empty()) parts.push_back(why);
    if (!f.not_deterministic.empty())
      parts.push_back(fmt::format("not deterministic: {}", f.not_deterministic.front()));
    if (!memory_problem.empty()) parts.push_back(memory_problem);
    Verdict v =
        make(Outcome::kFail, Why::kNotAsExpected, fmt::format("{}", fmt::join(parts, "; ")));
    v.missing = check.missing;
    v.unexpected = check.unexpected;
    return v;
  };
  // A failure another run showed (memory, an uncontrolled run) fails whatever this search says.
  if (!memory_problem.empty() || f.other_run_failed) return failed();
  if (f.nondeterministic)
    return make(Outcome::kInconclusive, Why::kNondeterministic,
                "inconclusive: the program took another path under the same schedule prefix, so "
                "the run says nothing about it");
  if (f.lost_control)
    return make(Outcome::kInconclusive, Why::kLostControl,
                "inconclusive: racelab lost control of a thread (a call it does not control), so "
                "the run says nothing about the program");
  if (!f.schedule_ended.empty()) return make(Outcome::kFail, Why::kScheduleEnded, f.schedule_ended);

  const bool wrong_found = !check.unexpected.empty() || !f.not_deterministic.empty() ||
                           (e.no_failure && f.failure_found);
  const bool claims_absence = !e.must_not.empty() || e.no_failure;
  if (!f.shard.empty()) {
    // A part settles a failure it found and a must kind it found; the rest waits for merge.
    if (wrong_found) return failed();
    if (!check.missing.empty() || !e.must_not.empty()) {
      std::vector<std::string> open;
      if (!check.missing.empty())
        open.push_back(fmt::format("must [{}]", fmt::join(check.missing, ", ")));
      if (!e.must_not.empty())
        open.push_back(fmt::format("must_not [{}]", fmt::join(e.must_not, ", ")));
      Verdict v = make(
          Outcome::kPending, Why::kShardPending,
          fmt::format(
              "pending: {} not settled by {} alone ({}): racelab merge of every shard judges it",
              fmt::join(open, " and "), f.shard, f.shard_part));
      v.missing = check.missing;
      return v;
    }
    return {};
  }
  if (wrong_found) return failed();
  if (!check.missing.empty()) {
    // Missing from a search that finished (or that ended at a failure that ends the process): the
    // kind is not there. From one that did not: nothing shown either way.
    if (search_finished(f.proves, f.stop) || f.stopped_at_failure) return failed();
    Verdict v = make(Outcome::kInconclusive, Why::kUnfinished,
                     unfinished_sentence(f, fmt::format("{}", fmt::join(check.missing, ", ")),
                                         w.remedy ? w.remedy(Why::kUnfinished, f.stop) : ""));
    v.missing = check.missing;
    return v;
  }
  if (claims_absence && absence_cut_short(f.proves, f.stop)) {
    if (w.check_proof) return make(Outcome::kInconclusive, Why::kCutShort, check_proof_sentence(f));
    const std::string claim = !w.absence_claim.empty()
                                  ? w.absence_claim
                                  : fmt::format("must_not [{}]", fmt::join(e.must_not, ", "));
    return make(Outcome::kInconclusive, Why::kCutShort,
                cut_short_sentence(f, claim, w.remedy ? w.remedy(Why::kCutShort, f.stop) : ""));
  }
  if (!f.interrupted.empty())
    return make(
        Outcome::kInconclusive, Why::kCutShort,
        fmt::format("inconclusive: interrupted in {}: not a verdict (let it run to the end)",
                    f.interrupted));
  if (!memory_unknown.empty() && !e.unmeasured_memory_passes)
    return make(Outcome::kInconclusive, Why::kMemoryNotMeasured, "inconclusive: " + memory_unknown);
  return {};
}

}  // namespace racelab::results

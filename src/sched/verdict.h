#pragma once
// The one verdict of racelab, and the one rule that gives it: judge(expectations, facts). Every
// command that says pass, fail or inconclusive asks judge: explore, suite and merge (a model
// scenario, results::ScenarioRun::verdict), a suite's live case (run/live_case.h), racelab live
// (run/live_job.h), racelab check (run/check.h: the proof of each variant and the variant itself)
// and alloc report --expect. The unfinished-search rule lives here and nowhere else:
//
//   fail          something was found that must not occur (a must_not kind; with no_failure any
//                 failure kind; a finding whose schedule is not deterministic; memory not as
//                 expected; a failure shown by another run of the subject), or a must kind was
//                 not found by a search that finished (search_finished);
//   inconclusive  a must kind not found by a search that did not finish (a proving search's
//                 execution cap, the time limit, an interrupt); an absence claimed (must_not kinds,
//                 no_failure) that a proving search cut short did not prove (absence_cut_short);
//                 racelab lost control of a thread, or the subject was not deterministic under
//                 control (the run says nothing); memory not measured (unless that passes);
//   pending       a shard (--shard K/N) that settles neither: a must kind it did not find, or an
//                 absence it claims (racelab merge judges the whole);
//   pass          otherwise. A sampling strategy (random, pct) passes on what it sampled.
//
// A verdict carries why (Why) and its one line (reason): printers choose their frame from `why`
// and print `reason`; none derives the outcome again. The words differ per command on purpose
// (the remedy names the command's own flag or table key): Wording holds them, and the wordings of
// every command are made here (model_wording, live_case_wording, live_wording, check_wording).
// In sched/ (it weighs only a search's facts: kinds, StopReason), below model/ and live/, which
// judge with it; named results:: as every command knows it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/expectations.h"
#include "sched/loop.h"

namespace racelab::results {

enum class Outcome { kPass, kFail, kInconclusive, kPending, kSkipped };
// Reports' words: "pass", "fail", "inconclusive", "pending", "skipped".
const char* outcome_name(Outcome o);
// The terminal's and JUnit's: "PASS", "FAIL", "INCONCLUSIVE", "PENDING", "SKIP".
const char* outcome_word(Outcome o);
std::optional<Outcome> outcome_from_name(std::string_view name);  // a summary.json's word back

enum class Why {
  kHolds,              // pass: the expectations hold
  kNotAsExpected,      // fail: see the rule above
  kScheduleEnded,      // fail: a replayed schedule ended before its recorded kind happened
  kNoReport,           // fail: racelab said nothing about the subject (no report, refused, error)
  kUnfinished,         // inconclusive: a must kind missing from a search that did not finish
  kCutShort,           // inconclusive: an absence a proving search cut short did not prove
  kLostControl,        // inconclusive: racelab lost control of a thread
  kNondeterministic,   // inconclusive: the subject took another path under the same prefix
  kMemoryNotMeasured,  // inconclusive: the memory expectation could not be checked here
  kShardPending,       // pending
  kSkipped,            // skipped: the case cannot run on this machine
};

// What a search did and showed: the facts judge weighs, never a verdict.
struct SearchFacts {
  std::string strategy;  // its name ("dfs"), for the sentences
  sched::StopReason stop = sched::StopReason::kBudget;
  std::uint64_t executions = 0;
  std::uint64_t cap = 0;           // the execution cap it was given
  bool proves = false;             // a proving strategy (dfs, dpor; never a replay)
  bool bounded = false;            // its space is bounded (dfs's preemption bound)
  std::vector<std::string> found;  // the kinds found, any order, repeats allowed
  bool failure_found = false;      // a failure kind found (judged with no_failure)
  // Failures shown by other runs of the same subject (racelab check's uncontrolled runs): they
  // fail it whatever the search says.
  bool other_run_failed = false;
  std::vector<std::string> not_deterministic;  // findings whose schedule did not replay the same
  bool lost_control = false;
  bool nondeterministic = false;
  // The search ended at a failure that ends the process (a hang): a must kind it did not reach
  // is the program's failure, not an unfinished search.
  bool stopped_at_failure = false;
  std::string schedule_ended;  // a replay's: the sentence, "" when it did not end early
  std::string error;           // racelab said nothing (no report, refused): the line, "" none
  // What an interrupt cut short or left out of the run ("the hunt; not run: the proof, memory":
  // racelab check's variant), "" where none: a run it did not let finish is no verdict, and
  // inconclusive where nothing failed.
  std::string interrupted;
  // A shard of a search: "shard 1/4" and its part ("subtrees 1, 5, …, 229 of 232"); "" whole.
  std::string shard, shard_part;
};

// What an allocator capture showed.
struct MemoryFacts {
  bool measured = true;     // false: too few iterations after the warm phase, no CUDA
  bool stable = false;      // measured and stable
  bool error = false;       // the capture or its analysis failed (racelab's words in summary)
  bool run_failed = false;  // the captured run itself failed (an exception, a hang)
  std::string summary;      // its one line
};

// A command's own words for the sentences of the rule.
struct Wording {
  // The absence a cut-short search did not prove, where it is not "must_not [kinds]":
  // "the program's absence of a deadlock, hang or exception" (live).
  std::string absence_claim;
  // The remedy after a sentence, for why (kCutShort or kUnfinished) and how the search stopped.
  std::function<std::string(Why, sched::StopReason)> remedy;
  // racelab check's proof: its own sentence ("the dpor proof was cut short by …").
  bool check_proof = false;
};
// explore, suite, merge: "raise [explore] iterations above N[ or lower max_preemptions]", "raise
// or drop --time-limit", "let it run to the end".
Wording model_wording(std::uint64_t iterations, bool has_bound);
// A suite's live case: "raise [live] executions or lower max_preemptions", "raise or drop the time
// limit", "let it run to the end".
Wording live_case_wording();
// racelab live: cut short "raise --executions, or lower --max-preemptions" whatever the stop;
// unfinished by the stop.
Wording live_wording();
// racelab check's dpor proof.
Wording check_wording();

struct Verdict {
  Outcome outcome = Outcome::kPass;
  Why why = Why::kHolds;
  std::vector<std::string> missing;     // must kinds not found, report order
  std::vector<std::string> unexpected;  // must_not kinds found, report order
  std::string reason;                   // one line; "" for a pass
  bool passed() const { return outcome == Outcome::kPass; }
};

Verdict judge(const Expectations& e, const SearchFacts& f, const std::optional<MemoryFacts>& memory,
              const Wording& w);

// A case that could not run here (a live case requiring CUDA): skipped, with why.
Verdict skipped(std::string reason);

}  // namespace racelab::results

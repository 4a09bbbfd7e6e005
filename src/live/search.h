#pragma once
// The live search (racelab live torch | live python): executions of a live subject under one
// strategy until a failure or the budget, through the model's exploration
// (sched::explore_executions, sched/exploration.h) with a live runner (LiveRunner) and keep
// policy (StopAtFailure), and the verdict on what it kept (judge). src/report/live_report.h
// writes its files (report.json, trace.txt, schedule-<kind>.json); the command line
// (harness/live*.cc) prints.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "live/handover.h"
#include "live/live.h"
#include "sched/exploration.h"
#include "sched/loop.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "sched/strategy.h"
#include "sched/verdict.h"

namespace racelab::live {

// What a replayed schedule recorded: the kind it reproduces ("" for none), its steps and the
// subject's content hash; for a replay's verdict (a schedule that ends before its kind happened)
// and the words of a divergence (a changed script or build is its likely cause).
struct Recorded {
  std::string kind;
  std::uint64_t steps = 0;
  std::string hash;
};

struct SearchOptions {
  sched::StrategyKind strategy = sched::StrategyKind::kPct;  // with the seed, the schedule's header
  std::uint64_t seed = 1;
  std::uint64_t executions = 10;
  double time_limit = 0;  // seconds; 0: none
  double hang_timeout = 10;
  int settle_ms = 10;
  int cycle_confirm_ms = 2000;
  results::LiveExpect expect = results::LiveExpect::kClean;
  std::string replay;  // the schedule replayed, for messages ("" for a search)
  Recorded recorded;   // what it recorded (run_job fills it from the Prepared job)
  std::string out;     // where the files go
  // --all-findings (dpor): search on past every failure, to the end of the search, keeping the
  // first execution of each kind; past one that leaves threads stuck, in a fresh process
  // (handover.h). `carried`: what the processes before this one handed over (nullptr: none).
  bool all_findings = false;
  std::shared_ptr<const Handover> carried;
  // --jobs N (dpor): the search over N worker processes (split.h); 1: in this process alone.
  unsigned jobs = 1;
  // --split-worker DIR: this process is worker DIR of a split search (split.h), not a search.
  std::string split_worker;
};

// The runtime's options for a search's (or a replay's) executions.
Options runtime_options(const SearchOptions& a, bool replaying);

// The live keep policy (sched/exploration.h): a failure kind (the registry's, sched/kinds.h) or
// racelab losing control ends the search, and that execution is the result; evidence kinds never
// do. Searching for a deadlock (`expect_deadlock`), another failure is kept (the first) and the
// search goes on, unless threads were left stuck in real calls (a hang, lost control): the
// process must end then, and that execution is the result. A hang is never the deadlock asked
// for. A replay's one execution is the result, failed or not.
//
// --all-findings (`all_findings`): no failure ends the search, only racelab losing control or a
// nondeterministic subject does (as above); the first execution of each kind not found before
// (`known`, the earlier processes': by its worst failure) is kept in `found`, and an execution
// that left threads stuck (a deadlock, a hang) ends this process's part of the search
// (`hand_over`): it goes on in a fresh process.
class StopAtFailure {
 public:
  StopAtFailure(bool expect_deadlock, bool replaying, bool all_findings = false,
                std::set<std::string> known = {})
      : expect_deadlock_(expect_deadlock),
        replaying_(replaying),
        all_findings_(all_findings),
        known_(std::move(known)) {}
  bool keep(std::uint64_t execution, Result& r);
  // At the end: with no deadlock found, the other failure kept on the way is the result.
  void finish();

  std::map<std::string, std::uint64_t> kinds;  // executions in which each kind was seen
  std::optional<Result> failure;  // the result: the failing execution (a replay's, failed or not)
  std::uint64_t failure_execution = 0;
  std::optional<Result> last;  // the last execution, when none failed
  // --expect deadlock searches on past other failures (an exception, a data race): the first one.
  std::optional<Result> other;
  std::uint64_t other_execution = 0;
  bool stopped_at_failure = false;  // the search ended at a failure (not at the budget)
  // Decisions, over every execution, taken after a quiet period of --settle-ms rather than at
  // quiescence alone (live::Result::settled): 0 means no result rests on timing.
  std::uint64_t settled = 0;
  // --all-findings: each new kind's first execution, in order, and whether the last one left
  // threads stuck.
  std::vector<std::pair<std::uint64_t, Result>> found;
  bool hand_over = false;

 private:
  bool expect_deadlock_;
  bool replaying_;
  bool all_findings_ = false;
  std::set<std::string> known_;
};

// What a live search did (executions, seconds, why it stopped, the interleaving classes its
// executions showed: live::handoff_fingerprint) and what it kept (`kept`).
using Outcome = sched::Exploration<StopAtFailure>;

// What a live search reports about its subject.
struct JobInfo {
  std::string subject;              // "live-torch", "live-python"
  std::string command;              // "live torch", "live python"
  sched::SubjectConfig parameters;  // the job's configuration (its schedules' and report's)
  std::string build;
  std::string hash;
  std::string stuck_in;  // where hung threads are stuck, for the message
  // The Python subject's torch and Python against its table's verified range
  // (live/python/versions.h): report.json's "versions" (null: none read), and the one line said
  // where they are outside it ("" inside).
  nlohmann::ordered_json versions;
  std::string outside_verified;
  std::function<void(const std::filesystem::path&)> on_hang;  // extra outputs before the exit
  // After each execution, before the next: its number and how it ended (a failure's kind or
  // "complete").
  std::function<void(std::uint64_t, const std::string&)> after_execution;
};

// The live runner (sched/exploration.h): execution i of a live subject, one at a time in this
// process (live::run), under `options`; `after_execution` (JobInfo's) sees how each ended. A
// replay (`replay`: the schedule's path) that diverges is an InputError.
class LiveRunner {
 public:
  // `divergence_hint`: the likely cause a replay's divergence names (divergence_hint()).
  LiveRunner(Subject& subject, const Options& options, std::string replay,
             std::function<void(std::uint64_t, const std::string&)> after_execution,
             std::string divergence_hint = "");
  std::optional<Result> run(sched::Strategy& strategy, std::uint64_t execution) const;
  static std::uint64_t steps(const Result& r) { return r.choices.size(); }  // decisions
  static std::uint64_t fingerprint(const Result& r) { return handoff_fingerprint(r); }

 private:
  Subject& subject_;
  Options options_;
  std::string replay_;
  std::function<void(std::uint64_t, const std::string&)> after_execution_;
  std::string divergence_hint_;
};

// The likely cause a replay's divergence names: the recorded content hash differs from the
// subject's `hash` (an edited script or table, another build or workload), else foreign threads'
// timing (try a larger --settle-ms).
std::string divergence_hint(const Recorded& recorded, const std::string& subject,
                            const std::string& hash);

// racelab live torch | python --replay FILE: the schedule read from `path`
// (report::read_schedule), checked to record `subject` ("live-torch", "live-python"), and the
// strategy that replays it step by step (a divergence is an InputError from search()).
// InputError for a schedule of another subject.
struct Replay {
  sched::Schedule schedule;
  std::unique_ptr<sched::Strategy> strategy;
};
Replay open_replay(sched::Schedule schedule, const std::string& path, const std::string& subject);
// Where the replayed schedule was recorded from another build or workload than `hash`: the
// warning line to print (without racelab's prefix), else "".
std::string replay_hash_warning(const Replay& replay, const std::string& path,
                                const std::string& hash);

// What racelab live torch | python runs: the strategy, the subject, and the replayed schedule's
// hash warning. Replaying (`replay` a schedule's path, `recorded` that schedule as read, by
// report::read_schedule): the schedule opened for `subject_name`
// (open_replay), its steps the strategy, and `make(&schedule)` the subject from the recorded
// parameters; `warning` is replay_hash_warning's. Searching (`replay` ""): the `search()` strategy,
// then `make(nullptr)` the subject from the command's options.
struct Prepared {
  std::unique_ptr<sched::Strategy> strategy;
  std::unique_ptr<Subject> subject;
  bool replaying = false;
  Recorded recorded;  // replaying: what the schedule recorded
  std::string warning;
};
Prepared prepare(const std::string& replay, std::optional<sched::Schedule> recorded,
                 const std::string& subject_name,
                 const std::function<std::unique_ptr<sched::Strategy>()>& search,
                 const std::function<std::unique_ptr<Subject>(const sched::Schedule*)>& make);

// A live run ready to go, whichever its subject: what racelab live torch, racelab live python and
// racelab replay of a live schedule hand to the use case (run::run_job, src/run/live_job.h) and to
// the command line's printer.
struct Job {
  Prepared run;        // the strategy, the subject, whether it replays, the hash warning
  JobInfo info;        // what the report and the verdict say about the subject
  std::string banner;  // the line printed before the search: subject, strategy, build
  // Called with the output directory just before the search (the Python bridge arms its crash
  // report there); may be empty.
  std::function<void(const std::string&)> arm;
  // The subject runs in the embedded interpreter, which is never finalized (the script's threads
  // may still be in it): the command ends the process with std::_Exit once it has printed.
  bool exit_process = false;
};

bool is_failure(const std::string& kind);  // a kind that fails a live run (not evidence)
// The failure (or lost control) of an execution that comes first in report order
// (sched::kinds::before); the first of them where one kind is found twice.
std::vector<sched::Finding>::const_iterator worst_failure(const Result& r);

// Runs executions until a failure, the budget, the time limit or `stop()` (an interrupt);
// `progress(done, budget)` after each. InputError where a replay diverges.
Outcome search(const SearchOptions& a, const JobInfo& info, Subject& subject,
               sched::Strategy& strategy, bool replaying, const std::function<bool()>& stop,
               const std::function<void(std::uint64_t, std::uint64_t)>& progress);

// What a search has taken against its --time-limit: the first process counts its executions
// (`search_seconds`), a fresh process of an --all-findings search the earlier processes' whole time
// and its own (`process_seconds`: its start, an interpreter importing torch, can take a minute), so
// the limit bounds what the user waits, however many processes the search runs in.
double time_so_far(const SearchOptions& a, double search_seconds, double process_seconds);

// --all-findings, after this process's part of the search ended at an execution that left
// threads stuck (StopAtFailure::hand_over): the strategy moved on (Strategy::hand_over). Where
// the search is over (the strategy exhausted: o.stop becomes kExhausted; the execution cap, the
// time limit or `stopped`: o.stop says which), nullopt; else what the next process takes over,
// `found` (write_found's) with it.
std::optional<Handover> next_process(const SearchOptions& a, const JobInfo& info,
                                     sched::Strategy& strategy, Outcome& o,
                                     std::vector<Found> found, bool stopped);

// The verdict on what a search kept (results::judge, the one rule, with racelab live's wording):
// --expect clean is no failure kind at all, --expect deadlock a deadlock that must be found.
// A failure found fails clean; racelab losing control or a nondeterministic subject is
// inconclusive whatever was expected; a proving search (dfs, dpor) expected clean that stopped
// before covering its space is cut short (not a proof), a search for the deadlock that did not
// finish without it (and did not end at another failure that ends the process) is unfinished;
// a replay whose steps all matched but that ended before its recorded kind happened fails.
results::Verdict judge(const SearchOptions& a, const Outcome& o);
// racelab live's exit code for a verdict: 0 a pass, 3 racelab lost control, 1 otherwise.
int exit_code(const results::Verdict& v);
// True when the strategy samples (random, pct, pos, surw) rather than proves (dfs).
bool samples(const SearchOptions& a);
// What the search covered, for the terminal: "replayed SCHEDULE (1 execution)", "12 executions
// (random(seed=1)), stopped at the first failure", or the model's sentence
// (sched::coverage_sentence: "sampled 10 executions (pct(depth=3, seed=1)), not a proof",
// "exhaustive within the bound (dfs(max_preemptions=2)): 41 executions", "cut short by the
// execution cap after 50 executions (dfs(max_preemptions=2), cap 50) before covering the bounded
// space: not a proof").
std::string coverage_brief(const SearchOptions& a, const Outcome& o, const std::string& desc);

}  // namespace racelab::live

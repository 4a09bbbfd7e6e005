#pragma once
// racelab replay of a model schedule: the recorded interleaving re-executed step by step, against
// its own scenario or against another one (a fix).
//
// Against its own scenario the answer is one execution: every step is checked, and the recorded
// finding reproduces or not. Against a fix one execution answers nothing: the fix changes what
// runs, so the recorded steps apply up to some step and the rest of the execution is open. The
// replay then keeps the steps that still apply as a fixed prefix and explores every continuation
// of it with dpor (unbounded, optimal, with its state cache: make_dpor's prefix), through the
// same exploration and limits as racelab explore (the execution cap, the time limit, Ctrl-C).
// The finding is gone only when no continuation reaches it and dpor covered them all; one
// continuation that reaches it is a witness (its schedule is written); a search cut short proves
// nothing either way.
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "results/scenario_run.h"
#include "sched/explore.h"
#include "sched/schedule.h"

namespace racelab::run {

using model::Scenario;
using results::ScenarioRun;

// --on-divergence. Without it, a divergence against the recording is bad input and against
// another scenario every continuation is explored; kFail stops at it in both; kRandom continues
// the recording at random (against another scenario: refused).
enum class Divergence { kFail, kRandom };
const char* divergence_name(Divergence d);  // "fail", "random": the option's words
std::vector<std::pair<std::string, Divergence>> divergence_table();  // every word, for the CLI

struct ReplayRequest {
  std::string schedule_path;
  std::string scenario_path;  // --scenario: empty for the recorded one
  std::string torch;          // --torch: the torch version to replay under; empty: as recorded
  std::optional<Divergence> on_divergence;  // --on-divergence; nullopt: the default
  // Of the random strategy after a divergence from the recorded scenario (--on-divergence
  // random); nullopt: 1. Against another scenario there is no random continuation: refused.
  std::optional<std::uint64_t> seed;
  // Against another scenario, the limits of the search of the continuations, as racelab
  // explore's: the execution cap (nullopt: the scenario's [explore] iterations), the time limit
  // in seconds (0: none), the interrupt flag and the progress line.
  std::optional<std::uint64_t> iterations;
  double time_limit_s = 0;
  const std::atomic<bool>* interrupt = nullptr;
  std::function<void(const sched::ExploreProgress&)> progress;
};

struct ReplayRun {
  Scenario scenario;
  bool other_scenario = false;  // --scenario has other content than the recording (a fix)
  std::string kind;             // the recorded finding kind (empty: none)
  // The replayed execution: against another scenario, the recorded steps that apply and then the
  // lowest enabled thread without preemption. None when it stopped at a divergence.
  std::optional<sched::ExecutionResult> result;
  std::optional<std::uint64_t> diverged_at;
  std::string divergence;  // "diverged at step k: expected …, got …" (where it diverged)
  bool continued = false;  // continued under random(seed) after the divergence
  std::uint64_t seed = 1;
  std::uint64_t recorded_steps = 0;
  // Against the recording: every recorded step matched, but the schedule ended (at this step)
  // before its recorded kind happened, and the execution went on without it. A divergence of its
  // own (the file was cut short): exit 1.
  std::optional<std::uint64_t> ended_at;

  // Against another scenario: the recorded steps that applied (the divergence's step, or every
  // recorded step), and the dpor search of every continuation of them (its result's `found`: the
  // first continuation of each kind, not shrunk, so that its schedule starts with those steps).
  // None where --on-divergence fail stopped at the divergence.
  std::uint64_t matched = 0;
  std::optional<ScenarioRun> continuations;

  // What the search of the continuations answers (against another scenario).
  enum class Answer {
    kGone,          // no continuation reaches the kind, and the search covered them all
    kReachable,     // a continuation reaches it: witness()
    kInconclusive,  // none of those explored does, but the search was cut short
    kStopped,       // --on-divergence fail: stopped at the divergence, nothing explored
  };
  Answer answer() const;
  // How far the recorded interleaving applied to the other scenario: "the interleaving diverged
  // at step 3: expected …, got …; its first 3 steps apply", "the whole interleaving of 23 steps
  // applies", or "the execution ended after 10 of the 23 recorded steps, every one applied".
  std::string applied() const;
  // The continuation that reaches the recorded kind (a schedule without one: the first failure
  // kind found); nullptr when none did.
  const sched::FoundKind* witness() const;

  bool reproduced() const;  // the recorded kind occurred in the replayed execution (or a witness)
  // The execution that --trace prints and --out's page shows: against another scenario the
  // witness, else the replayed execution (its first continuation); nullptr where it stopped at a
  // divergence before one ran.
  const sched::ExecutionResult* shown() const;
  // Against the recording: 1 when the recorded kind reproduced and is a failure (a schedule
  // without a kind: any failure kind found), or the schedule ended before its recorded kind
  // happened (ended_at); 0 otherwise. Against another scenario: 0 when gone, 1 when still
  // reachable, inconclusive or stopped. Evidence kinds never make it 1.
  int exit_code() const;
  // The one-line outcome: "reproduced deadlock in 158 steps", "completed without deadlock (158
  // steps)", "diverged: the schedule ended at step 15 before its recorded deadlock happened
  // (...)"; against another scenario "deadlock: gone: no deadlock in any of 20 continuations
  // after the first 3 steps", "deadlock: still reachable: ... (schedule: <witness_schedule>)",
  // "deadlock: inconclusive: ..." or "deadlock: not decided: ...". `witness_schedule`: where the
  // witness's schedule was written.
  std::string outcome(std::string_view witness_schedule = {}) const;
};

// Replays; a divergence against the recorded scenario with on_divergence "fail" (the default) is
// an InputError. Against another scenario it explores every continuation of the steps that apply
// (see above) unless on_divergence is "fail", which stops at the divergence; "random" or a seed
// there is an InputError (a random continuation answers nothing).
ReplayRun replay_schedule(const sched::Schedule& schedule, const ReplayRequest& request);

// A continuation's schedule as written: its finding (one of run.continuations' found), the file,
// and the command that replays it.
struct WrittenContinuation {
  const sched::FoundKind* found = nullptr;
  std::string schedule;
  std::string replay;
};
// The directory racelab replay against a fix writes to: `out`, else racelab-out/<scenario>-replay.
std::string continuations_dir(const ReplayRun& run, const std::string& out);
// Writes the schedule of each continuation `run` found (against another scenario) under `dir`'s
// schedules/, named as explore names a scenario's (report::schedule_path), in found order; none
// where nothing was explored.
std::vector<WrittenContinuation> write_continuations(const ReplayRun& run, const std::string& dir);

// racelab replay --out DIR: DIR/report.json and DIR/report.html of run.shown() (report's
// write_replay_page, `schedule_path` the replayed file); their paths, "DIR/report.json,
// DIR/report.html", or "" where there is no execution to show.
std::string write_replay_page(const ReplayRun& run, const std::string& schedule_path,
                              const std::string& dir);

}  // namespace racelab::run

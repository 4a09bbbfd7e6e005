#pragma once
// Schedule files: versioned JSON recording one execution so that it can be replayed exactly.
//
//   { "format": "racelab-schedule", "version": 1, "racelab_version": "0.1.0",
//     "subject": {"name", "hash", "path"}, "strategy": {"name", "description", "seed",
//     "execution", "parameters"}, "finding": {"kind", "message"}, "preemptions": 2,
//     "steps": [["drafter 0.0", "lock compile_lock"], ...] }
//
// docs/schedules.md is the reference. Readers reject any other format or version with a clear
// message; bump kScheduleVersion whenever the meaning of a field or of an operation's text changes.
//
// This header is the schedule as the scheduler core sees it, with no JSON in it: the file's text
// is written and read by src/report/schedule_file.h. `strategy.parameters` holds one of two
// things, told apart by the subject's name (is_live_subject): a model schedule's search
// parameters (SearchParameters), or a live schedule's job configuration, which only the live
// subject reads (Schedule::live_configuration, a SubjectConfig).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sched/engine.h"
#include "sched/strategies/strategies.h"
#include "sched/subject_config.h"

namespace racelab::sched {

inline constexpr int kScheduleVersion = 1;
inline constexpr const char* kScheduleFormat = "racelab-schedule";

// The live subjects (racelab live torch | live python), by the names their schedules and reports
// carry. Every other subject is a model scenario; a name with the live prefix that is neither is
// no subject racelab knows (report::read_schedule refuses it).
inline constexpr const char* kLiveTorchSubject = "live-torch";
inline constexpr const char* kLivePythonSubject = "live-python";
inline constexpr std::string_view kLiveSubjectPrefix = "live-";

// The one test of whether a schedule's subject runs on real threads.
inline bool is_live_subject(std::string_view subject_name) {
  return subject_name == kLiveTorchSubject || subject_name == kLivePythonSubject;
}

// A model schedule's `strategy.parameters`: the search that found the execution (its strategy's
// bounds and budget, and whether the schedule was shrunk). Informational: replay uses the steps.
// Written in key order: depth, iterations, max_preemptions, shrunk.
struct SearchParameters {
  std::int64_t depth = 0;            // pct's depth
  std::int64_t max_preemptions = 0;  // dfs's bound
  std::uint64_t iterations = 0;      // the search's budget
  bool shrunk = false;               // the steps were shrunk after the search found them
  bool operator==(const SearchParameters&) const = default;
};

struct Schedule {
  std::string racelab_version;
  std::string subject_name;
  std::string subject_hash;
  std::string subject_path;  // the scenario file it was recorded from, when there is one
  std::string strategy_name;
  std::string strategy_description;
  std::uint64_t seed = 0;
  std::uint64_t execution = 0;
  // `strategy.parameters`: of a model subject, the search's; of a live one (is_live_subject), the
  // job's configuration, which the live subject reads itself (live/torch from_config,
  // live/python job_from_config). The other is left at its default.
  SearchParameters parameters;
  SubjectConfig live_configuration;
  std::string finding_kind;  // empty: the schedule records an execution without finding
  std::string finding_message;
  std::uint64_t preemptions = 0;
  std::vector<ReplayStep> steps;
};

// The steps of an execution as a schedule records them.
std::vector<ReplayStep> replay_steps(const Execution& exec);

// What a schedule's header says about where its execution came from: the subject that ran and the
// strategy that chose it. Each report writer fills it from its own run (report.cc for scenarios,
// live_report.cc for live subjects); the rest of the header comes from the execution.
struct ScheduleSource {
  std::string subject_name;
  std::string subject_hash;
  std::string subject_path;  // the scenario file, when there is one ("" for a live subject)
  std::string strategy_name;
  std::string strategy_description;
  std::uint64_t seed = 0;
  SearchParameters parameters;       // a model subject's
  SubjectConfig live_configuration;  // a live subject's
};

// The one conversion of a result into a schedule, model and live alike: `source`'s header, this
// racelab's version, execution index `execution` of the search, the finding the schedule
// reproduces (nullptr: none, an empty kind), the execution's preemptions and its steps.
Schedule make_schedule(const ScheduleSource& source, std::uint64_t execution,
                       const Finding* finding, std::uint64_t preemptions,
                       std::vector<ReplayStep> steps);

// Runs `subject` once under `replay`; a divergence becomes an InputError "<origin>: diverged at
// step k: expected …, got …" (a schedule that does not fit the subject is bad input).
ExecutionResult run_replay(Subject& subject, ReplayStrategy& replay, const std::string& origin);

}  // namespace racelab::sched

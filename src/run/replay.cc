#include "run/replay.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/pipeline.h"
#include "model/suite.h"
#include "racelab/version.h"
#include "report/html.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "report/schedule_paths.h"
#include "run/explore.h"
#include "sched/kinds.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::run {

const char* divergence_name(Divergence d) {
  switch (d) {
    case Divergence::kFail:
      return "fail";
    case Divergence::kRandom:
      return "random";
  }
  return "?";
}

std::vector<std::pair<std::string, Divergence>> divergence_table() {
  std::vector<std::pair<std::string, Divergence>> out;
  for (const Divergence d : {Divergence::kFail, Divergence::kRandom})
    out.emplace_back(divergence_name(d), d);
  return out;
}

using model::PipelineModel;
using model::scenario_for_schedule;

namespace {

std::string plural(std::uint64_t n, std::string_view one) {
  return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
}

// The dpor search of every continuation of `prefix` (the threads of the steps that applied):
// racelab explore's exploration and limits, with the prefix fixed, unbounded, one job, stopped at
// the first continuation that reaches `kind` (no kind: any failure kind), nothing shrunk (a
// witness's schedule starts with the prefix).
ScenarioRun explore_continuations(sched::Subject& model, const Scenario& scenario,
                                  const std::string& kind, std::vector<sched::ThreadId> prefix,
                                  const ReplayRequest& request) {
  ScenarioRun check;
  check.scenario = scenario;
  check.options = run::explore_options(scenario);
  sched::ExploreOptions& o = check.options;
  o.strategy = sched::continuation_search(o.strategy, std::move(prefix));
  if (request.iterations) o.iterations = *request.iterations;
  o.time_limit_s = request.time_limit_s;
  o.interrupt = request.interrupt;
  o.progress = request.progress;
  o.shrink = false;
  o.stop_at = [kind](const sched::Finding& f) {
    return kind.empty() ? sched::kinds::is_failure(f.kind) : f.kind == kind;
  };
  check.result = sched::explore(model, o);
  run::judge(check);
  return check;
}

}  // namespace

const sched::FoundKind* ReplayRun::witness() const {
  if (!continuations) return nullptr;
  for (const sched::FoundKind& f : continuations->result.found) {
    if (kind.empty() ? sched::kinds::is_failure(f.finding.kind) : f.finding.kind == kind) return &f;
  }
  return nullptr;
}

ReplayRun::Answer ReplayRun::answer() const {
  if (!continuations) return Answer::kStopped;
  if (witness() != nullptr) return Answer::kReachable;
  return continuations->result.exhausted() ? Answer::kGone : Answer::kInconclusive;
}

std::string ReplayRun::applied() const {
  if (diverged_at)
    return fmt::format("the interleaving {}; its first {} apply", divergence,
                       plural(matched, "step"));
  if (matched == recorded_steps)
    return fmt::format("the whole interleaving of {} applies", plural(recorded_steps, "step"));
  return fmt::format("the execution ended after {} of the {} recorded steps, every one applied",
                     matched, recorded_steps);
}

bool ReplayRun::reproduced() const {
  if (other_scenario) return witness() != nullptr;
  return result && !kind.empty() && result->found(kind);
}

const sched::ExecutionResult* ReplayRun::shown() const {
  if (other_scenario && continuations) {
    if (const sched::FoundKind* w = witness()) return &w->result;
  }
  return result ? &*result : nullptr;
}

int ReplayRun::exit_code() const {
  if (other_scenario) {
    switch (answer()) {
      case Answer::kGone:
        return kExitOk;
      case Answer::kReachable:  // evidence is reported, never a failure
        return sched::kinds::is_failure(witness()->finding.kind) ? kExitFound : kExitOk;
      case Answer::kInconclusive:
      case Answer::kStopped:
        return kExitFound;
    }
  }
  if (ended_at) return kExitFound;
  if (!kind.empty()) return reproduced() && sched::kinds::is_failure(kind) ? kExitFound : kExitOk;
  if (result) {
    for (const auto& f : result->findings) {
      if (sched::kinds::is_failure(f.kind)) return kExitFound;
    }
  }
  return kExitOk;
}

std::string ReplayRun::outcome(std::string_view witness_schedule) const {
  const std::string what = kind.empty() ? std::string("findings") : kind;
  const std::size_t steps = result ? result->exec->steps().size() : 0;
  const std::string evidence =
      !kind.empty() && !sched::kinds::is_failure(kind) ? " (evidence, not a failure)" : "";
  if (!other_scenario) {
    if (reproduced()) return fmt::format("reproduced {}{} in {} steps", kind, evidence, steps);
    if (ended_at) {
      return fmt::format(
          "diverged: the schedule ended at step {} before its recorded {} happened (every step "
          "matched; the execution went on without preemption for {} more steps without it): the "
          "file was cut short or edited; record it again with racelab explore {}",
          *ended_at, kind, steps - *ended_at, scenario.path);
    }
    std::string line = fmt::format("completed without {} ({} steps", what, steps);
    if (diverged_at) {
      line += fmt::format("; the interleaving diverged at step {}; continued under random seed {}",
                          *diverged_at, seed);
    }
    return line + ")";
  }
  // Against a fix: the answer of the search of every continuation.
  const std::string label = kind.empty() ? std::string("failures") : kind;
  const std::string sought = kind.empty() ? std::string("failure") : kind;
  const std::string after = fmt::format("after the first {}", plural(matched, "step"));
  switch (answer()) {
    case Answer::kStopped:
      return fmt::format(
          "{}: not decided: the interleaving {}; stopped there (--on-divergence fail), so no "
          "continuation was explored",
          label, divergence);
    case Answer::kGone:
      return fmt::format("{}: gone: no {} in any of {} {}", label, sought,
                         plural(continuations->result.executions, "continuation"), after);
    case Answer::kReachable: {
      const sched::FoundKind& w = *witness();
      return fmt::format(
          "{}: still reachable{}: continuation {} {} reaches {} in {} steps{}", label, evidence,
          w.execution + 1, after, w.finding.kind, w.result.exec->steps().size(),
          witness_schedule.empty() ? std::string()
                                   : fmt::format("; its schedule: {}", witness_schedule));
    }
    case Answer::kInconclusive: {
      const sched::ExploreResult& r = continuations->result;
      const std::string remedy =
          r.stop == sched::StopReason::kBudget
              ? fmt::format("raise --iterations above {}", continuations->options.iterations)
          : r.stop == sched::StopReason::kTimeLimit ? "raise or drop --time-limit"
                                                    : "let it run to the end";
      return fmt::format(
          "{}: inconclusive: no {} in the {} explored {}, but the search was cut short by {} "
          "after {}, before covering them all: not a proof either way ({})",
          label, sought, plural(r.executions, "continuation"), after,
          sched::stop_reason_words(r.stop), plural(r.executions, "continuation"), remedy);
    }
  }
  return label;
}

ReplayRun replay_schedule(const sched::Schedule& schedule, const ReplayRequest& request) {
  ReplayRun run;
  run.scenario = scenario_for_schedule(
      schedule, request.schedule_path, request.scenario_path,
      /*allow_other=*/!request.scenario_path.empty() || !request.torch.empty(), request.torch);
  run.other_scenario = run.scenario.hash != schedule.subject_hash;
  run.kind = schedule.finding_kind;
  run.seed = request.seed.value_or(1);
  run.recorded_steps = schedule.steps.size();
  PipelineModel model(run.scenario);
  if (!run.other_scenario && (request.iterations || request.time_limit_s > 0)) {
    throw InputError(fmt::format(
        "{}: {} limits the search of the continuations against another scenario (--scenario "
        "FIXED.toml); {} is the recorded scenario, whose replay is one execution",
        request.schedule_path, request.iterations ? "--iterations" : "--time-limit",
        run.scenario.path));
  }
  if (run.other_scenario) {
    // Against a fix: the steps that still apply, then every continuation of them (replay.h). A
    // random continuation would answer for itself only.
    if (request.on_divergence == Divergence::kRandom || request.seed) {
      throw InputError(fmt::format(
          "{}: against another scenario ({}) replay explores every continuation after the "
          "interleaving diverges, not a random one: drop {}",
          request.schedule_path, run.scenario.path,
          request.on_divergence == Divergence::kRandom ? "--on-divergence random" : "--seed"));
    }
    const bool stop = request.on_divergence == Divergence::kFail;
    sched::ReplayStrategy replay(schedule.steps,
                                 stop ? sched::OnDivergence::kFail : sched::OnDivergence::kRandom);
    try {
      run.result = std::move(*sched::run_execution(model, replay, 0));
    } catch (const sched::ReplayDivergence& e) {
      run.diverged_at = e.step;
      run.divergence = e.what();
      run.matched = e.step;
      return run;
    }
    run.diverged_at = replay.diverged_at();
    run.divergence = replay.divergence();
    const std::vector<sched::ThreadId>& choices = run.result->choices;
    run.matched =
        run.diverged_at.value_or(std::min<std::uint64_t>(run.recorded_steps, choices.size()));
    run.continuations = explore_continuations(
        model, run.scenario, run.kind,
        {choices.begin(), choices.begin() + static_cast<std::ptrdiff_t>(run.matched)}, request);
    return run;
  }
  // Against the recording a divergence is bad input unless asked to continue.
  const bool lenient = request.on_divergence == Divergence::kRandom;
  sched::ReplayStrategy replay(schedule.steps,
                               lenient ? sched::OnDivergence::kRandom : sched::OnDivergence::kFail,
                               lenient ? sched::make_random(run.seed) : nullptr);
  try {
    run.result = std::move(*sched::run_execution(model, replay, 0));
  } catch (const sched::ReplayDivergence& e) {
    // The scenario is as recorded (its hash matched), so the likely cause is racelab's model.
    throw InputError(fmt::format(
        "{}: {} ({})", request.schedule_path, e.what(),
        schedule.racelab_version != kVersion
            ? fmt::format("the scenario is as recorded; the schedule was recorded by racelab {} "
                          "and this is {}, whose model may differ: record it again with "
                          "racelab explore {}",
                          schedule.racelab_version, kVersion, run.scenario.path)
            : std::string("the scenario and racelab are as recorded: the schedule's steps "
                          "were edited, or racelab's replay is not deterministic, a bug to "
                          "report with the schedule")));
  }
  if (replay.diverged()) {
    run.diverged_at = replay.diverged_at();
    run.divergence = replay.divergence();
    run.continued = true;
  }
  // Every recorded step matched, the execution went past the last one and the recorded kind
  // never happened: the schedule ends before its outcome (a file cut short).
  if (!run.kind.empty() && !run.diverged_at && !run.reproduced() &&
      run.result->exec->steps().size() > run.recorded_steps)
    run.ended_at = run.recorded_steps;
  return run;
}

std::string continuations_dir(const ReplayRun& run, const std::string& out) {
  return out.empty() ? "racelab-out/" + run.scenario.name + "-replay" : out;
}

std::vector<WrittenContinuation> write_continuations(const ReplayRun& run, const std::string& dir) {
  std::vector<WrittenContinuation> written;
  if (!run.continuations) return written;
  for (const sched::FoundKind& f : run.continuations->result.found) {
    ensure_directory(report::schedules_dir(dir));
    const std::string path = report::schedule_path(dir, {report::ScheduleName::Layout::kScenario,
                                                         run.scenario.name, f.finding.kind})
                                 .string();
    write_file_atomic(path,
                      report::schedule_to_json(report::finding_schedule(*run.continuations, f)));
    written.push_back({.found = &f, .schedule = path, .replay = report::replay_command(path)});
  }
  return written;
}

std::string write_replay_page(const ReplayRun& run, const std::string& schedule_path,
                              const std::string& dir) {
  const sched::ExecutionResult* shown = run.shown();
  if (shown == nullptr) return "";
  return report::write_replay_page(dir, schedule_path, *shown, run.kind, run.reproduced());
}

}  // namespace racelab::run

#include "model/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "model/expect.h"
#include "model/pipeline.h"
#include "racelab/version.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::model {

namespace fs = std::filesystem;

sched::ExploreOptions explore_options(const Scenario& s) {
  sched::ExploreOptions o;
  o.strategy = s.explore;
  o.iterations = s.iterations;
  return o;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kInconclusive:
      return "inconclusive";
  }
  return "?";
}

const char* verdict_word(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kInconclusive:
      return "INCONCLUSIVE";
  }
  return "?";
}

Verdict ScenarioRun::verdict() const {
  // Finding a `must` kind is a witness (its schedule); missing one fails only a search that
  // finished; claiming a `must_not` kind absent is a proof only when the proving strategy covered
  // its whole bounded space (sched::expectation_verdict, the one rule).
  switch (sched::expectation_verdict(
      {.proves = proves(),
       .stop = result.stop,
       .must_missing = !missing.empty(),
       .wrong_found = !unexpected.empty() || !result.determinism_failures.empty(),
       .claims_absence = !scenario.must_not.empty()})) {
    case sched::ExpectationVerdict::kHolds:
      return Verdict::kPass;
    case sched::ExpectationVerdict::kFails:
      return Verdict::kFail;
    case sched::ExpectationVerdict::kInconclusive:
      return Verdict::kInconclusive;
  }
  return Verdict::kFail;
}

std::string ScenarioRun::coverage() const {
  return sched::coverage_sentence({.strategy = result.strategy,
                                   .executions = result.executions,
                                   .cap = options.iterations,
                                   .stop = result.stop,
                                   .proves = proves(),
                                   .bounded = sched::strategy_info(options.strategy.kind).bounded,
                                   .classes = result.classes,
                                   .states = result.states});
}

std::string ScenarioRun::interleavings() const {
  const auto interleavings = result.interleavings();
  if (!interleavings) return "";
  return sched::coverage_line(*interleavings, !proves());
}

std::string ScenarioRun::coverage_brief() const {
  const std::uint64_t n = result.executions;
  if (proves()) {
    return result.exhausted() ? fmt::format("{} executions, exhaustive", n)
                              : fmt::format("{} executions, cut short by {}", n,
                                            sched::stop_reason_words(result.stop));
  }
  return fmt::format("{} executions sampled, not a proof", n);
}

std::string ScenarioRun::verdict_reason() const {
  switch (verdict()) {
    case Verdict::kPass:
      return "";
    case Verdict::kInconclusive: {
      const std::string remedy =
          result.stop == sched::StopReason::kBudget
              ? fmt::format("raise [explore] iterations above {} or lower max_preemptions",
                            options.iterations)
          : result.stop == sched::StopReason::kTimeLimit ? "raise or drop --time-limit"
                                                         : "let it run to the end";
      const bool bounded = sched::strategy_info(options.strategy.kind).bounded;
      if (!missing.empty())
        return sched::unfinished_sentence(sched::strategy_name(options.strategy.kind), result.stop,
                                          result.executions, options.iterations, proves(), bounded,
                                          fmt::format("{}", fmt::join(missing, ", ")), remedy);
      return sched::cut_short_sentence(
          sched::strategy_name(options.strategy.kind), result.stop, result.executions, bounded,
          fmt::format("must_not [{}]", fmt::join(scenario.must_not, ", ")), remedy);
    }
    case Verdict::kFail:
      break;
  }
  std::vector<std::string> parts;
  if (const std::string why = expectation_reason({missing, unexpected}); !why.empty())
    parts.push_back(why);
  if (!result.determinism_failures.empty()) {
    parts.push_back(fmt::format("not deterministic: {}", result.determinism_failures.front()));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<std::string> ScenarioRun::failures() const {
  std::vector<std::string> out;
  for (const auto& f : result.found) {
    if (sched::kinds::is_failure(f.finding.kind)) out.push_back(f.finding.kind);
  }
  return out;
}

void judge(ScenarioRun& run) {
  std::stable_sort(run.result.found.begin(), run.result.found.end(),
                   [](const sched::FoundKind& a, const sched::FoundKind& b) {
                     return sched::kinds::before(a.finding.kind, b.finding.kind);
                   });
  std::vector<std::string> found;
  for (const auto& f : run.result.found) found.push_back(f.finding.kind);
  ExpectationCheck check = check_expectations(run.scenario.must, run.scenario.must_not, found);
  run.missing = std::move(check.missing);
  run.unexpected = std::move(check.unexpected);
}

int explore_exit_code(const ScenarioRun& run) {
  if (!run.failures().empty()) return kExitFound;
  if (run.has_expectations() && run.verdict() != Verdict::kPass) return kExitFound;
  return kExitOk;
}

ScenarioRun run_scenario(const Scenario& s, const sched::ExploreOptions& options) {
  if (s.live)
    throw InputError(s.path +
                     ": a live case ([live]) runs a real program, not the model: run it "
                     "with racelab suite");
  ScenarioRun run;
  run.scenario = s;
  run.options = options;
  run.result = sched::explore([&s] { return std::make_unique<PipelineModel>(s); }, options);
  PipelineModel model(s);
  judge(run);
  sched::GuidedStrategy reference({});
  auto ref = sched::run_execution(model, reference, 0, options.run);
  run.makespan_seconds = ref->exec->makespan();
  // The only event main sets is the start gate: its step is when the drafters start.
  for (const sched::Step& st : ref->exec->steps()) {
    if (st.op.kind == sched::OpKind::kEventSet) run.warmup_seconds = st.vtime;
  }
  return run;
}

std::vector<std::string> collect_scenario_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw InputError(p + ": no such file or directory");
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file() && it->path().extension() == ".toml") {
          found.push_back(it->path().string());
        }
      }
      if (ec) throw InputError(p + ": cannot list directory: " + ec.message());
      if (found.empty()) throw InputError(p + ": no scenarios (*.toml) in this directory");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<Scenario> load_suite(const std::vector<std::string>& files) {
  std::vector<Scenario> out;
  std::map<std::string, std::string> names;
  for (const auto& f : files) {
    Scenario s = load_scenario(f);
    auto [it, fresh] = names.emplace(s.name, f);
    if (!fresh) {
      throw InputError(
          fmt::format("{}: name: \"{}\" is already the name of {}", f, s.name, it->second));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace racelab::model

namespace racelab::model {

Scenario scenario_for_schedule(const sched::Schedule& schedule, const std::string& schedule_path,
                               const std::string& override_path, bool allow_other) {
  // A recorded path is found from any directory (util/files.h, recorded_path).
  const std::string path =
      override_path.empty() ? recorded_path(schedule.subject_path, schedule_path) : override_path;
  if (path.empty()) {
    throw InputError(schedule_path + ": subject.path: empty; pass --scenario FILE");
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw InputError(
        fmt::format("{}: recorded against {}, which does not exist here; pass "
                    "--scenario FILE",
                    schedule_path, path));
  }
  if (fs::is_directory(path, ec)) {
    throw InputError(override_path.empty()
                         ? fmt::format("{}: recorded against {}, which is a directory here, not a "
                                       "scenario; pass --scenario FILE",
                                       schedule_path, path)
                         : fmt::format("{}: is a directory, not a scenario (TOML); --scenario "
                                       "takes a scenario file",
                                       path));
  }
  Scenario s = load_scenario(path);
  if (s.hash != schedule.subject_hash && !allow_other) {
    throw InputError(fmt::format(
        "{}: recorded against scenario \"{}\" with content hash {}, but {} now has hash {}: the "
        "scenario changed since recording; to try this interleaving against the changed scenario "
        "(does a fix remove it?) run `racelab replay {} --scenario {}`, or record a new schedule "
        "with `racelab explore {}`",
        schedule_path, schedule.subject_name, schedule.subject_hash, path, s.hash, schedule_path,
        path, path));
  }
  return s;
}

bool ReplayRun::reproduced() const { return result && !kind.empty() && result->found(kind); }

int ReplayRun::exit_code() const {
  if (ended_at) return kExitFound;
  if (!kind.empty()) return reproduced() && sched::kinds::is_failure(kind) ? kExitFound : kExitOk;
  if (result) {
    for (const auto& f : result->findings) {
      if (sched::kinds::is_failure(f.kind)) return kExitFound;
    }
  }
  return kExitOk;
}

std::string ReplayRun::outcome() const {
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
  std::string how;
  if (!result) {
    how = fmt::format("the interleaving {}; stopped there (--on-divergence fail)", divergence);
  } else if (diverged_at) {
    how = fmt::format("the interleaving diverged at step {}; continued under random seed {}",
                      *diverged_at, seed);
  } else {
    how = fmt::format("the whole interleaving of {} steps applied", recorded_steps);
  }
  if (kind.empty()) {
    std::string found;
    if (result) {
      for (const auto& f : result->findings) found += (found.empty() ? "" : ", ") + f.kind;
    }
    return fmt::format("against {}: {} ({})", scenario.path, found.empty() ? "no findings" : found,
                       how);
  }
  return fmt::format("{}: {}{} ({})", kind, reproduced() ? "still found" : "gone", evidence, how);
}

ReplayRun replay_schedule(const sched::Schedule& schedule, const ReplayRequest& request) {
  ReplayRun run;
  run.scenario = scenario_for_schedule(schedule, request.schedule_path, request.scenario_path,
                                       /*allow_other=*/!request.scenario_path.empty());
  run.other_scenario = run.scenario.hash != schedule.subject_hash;
  run.kind = schedule.finding_kind;
  run.seed = request.seed;
  run.recorded_steps = schedule.steps.size();
  // Against the recording a divergence is bad input unless asked to continue; against another
  // scenario (a fix) it is the expected outcome, and the run continues unless asked to stop.
  const bool lenient =
      request.on_divergence.empty() ? run.other_scenario : request.on_divergence == "random";
  PipelineModel model(run.scenario);
  sched::ReplayStrategy replay(schedule.steps,
                               lenient ? sched::OnDivergence::kRandom : sched::OnDivergence::kFail,
                               lenient ? sched::make_random(request.seed) : nullptr);
  if (run.other_scenario && !lenient) {
    try {
      run.result = std::move(*sched::run_execution(model, replay, 0));
    } catch (const sched::ReplayDivergence& e) {
      run.diverged_at = e.step;
      run.divergence = e.what();
    }
  } else {
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
  }
  if (replay.diverged()) {
    run.diverged_at = replay.diverged_at();
    run.continued = true;
  }
  // Every recorded step matched, the execution went past the last one and the recorded kind
  // never happened: the schedule ends before its outcome (a file cut short).
  if (!run.other_scenario && !run.kind.empty() && run.result && !run.diverged_at &&
      !run.reproduced() && run.result->exec->steps().size() > run.recorded_steps)
    run.ended_at = run.recorded_steps;
  return run;
}

}  // namespace racelab::model

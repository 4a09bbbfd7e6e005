#include "model/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "model/pipeline.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::model {

namespace fs = std::filesystem;

sched::ExploreOptions explore_options(const Scenario& s) {
  sched::ExploreOptions o;
  o.strategy = s.explore;
  o.iterations = s.iterations;
  return o;
}

ScenarioRun run_scenario(const Scenario& s, const sched::ExploreOptions& options) {
  ScenarioRun run;
  run.scenario = s;
  run.options = options;
  run.result = sched::explore([&s] { return std::make_unique<PipelineModel>(s); }, options);
  PipelineModel model(s);
  for (const auto& kind : s.must) {
    if (run.result.find(kind) == nullptr) run.missing.push_back(kind);
  }
  for (const auto& kind : s.must_not) {
    if (run.result.find(kind) != nullptr) run.unexpected.push_back(kind);
  }
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

#include "sched/schedule.h"

namespace racelab::model {

Scenario scenario_for_schedule(const sched::Schedule& schedule, const std::string& schedule_path,
                               const std::string& override_path) {
  const std::string path = override_path.empty() ? schedule.subject_path : override_path;
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
  Scenario s = load_scenario(path);
  if (s.hash != schedule.subject_hash) {
    throw InputError(fmt::format(
        "{}: recorded against scenario \"{}\" with content hash {}, but {} now has hash {}: the "
        "scenario changed since recording; run `racelab explore {}` to record a new schedule",
        schedule_path, schedule.subject_name, schedule.subject_hash, path, s.hash, path));
  }
  return s;
}

}  // namespace racelab::model

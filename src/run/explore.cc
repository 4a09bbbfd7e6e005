#include "run/explore.h"

#include <algorithm>
#include <memory>

#include "model/pipeline.h"
#include "sched/execution.h"
#include "sched/kinds.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::run {

sched::ExploreOptions explore_options(const model::Scenario& s) {
  sched::ExploreOptions o;
  o.strategy = s.explore;
  o.iterations = s.iterations;
  return o;
}

void judge(results::ScenarioRun& run) {
  std::stable_sort(run.result.found.begin(), run.result.found.end(),
                   [](const sched::FoundKind& a, const sched::FoundKind& b) {
                     return sched::kinds::before(a.finding.kind, b.finding.kind);
                   });
  std::vector<std::string> found;
  for (const auto& f : run.result.found) found.push_back(f.finding.kind);
  results::ExpectationCheck check =
      results::check_expectations(run.scenario.must, run.scenario.must_not, found);
  run.missing = std::move(check.missing);
  run.unexpected = std::move(check.unexpected);
}

results::ScenarioRun run_scenario(const model::Scenario& s, const sched::ExploreOptions& options) {
  if (s.live)
    throw InputError(s.path +
                     ": a live case ([live]) runs a real program, not the model: run it "
                     "with racelab suite");
  results::ScenarioRun run;
  run.scenario = s;
  run.options = options;
  run.result = sched::explore([&s] { return std::make_unique<model::PipelineModel>(s); }, options);
  model::PipelineModel model(s);
  run::judge(run);
  sched::GuidedStrategy reference({});
  auto ref = sched::run_execution(model, reference, 0, options.run);
  run.makespan_seconds = ref->exec->makespan();
  // The only event main sets is the start gate: its step is when the drafters start.
  for (const sched::Step& st : ref->exec->steps()) {
    if (st.op.kind == sched::OpKind::kEventSet) run.warmup_seconds = st.vtime;
  }
  return run;
}

}  // namespace racelab::run

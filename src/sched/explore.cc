#include "sched/explore.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "sched/explore_split.h"
#include "sched/shrink.h"
#include "util/errors.h"

namespace racelab::sched {

const FoundKind* ExploreResult::find(std::string_view kind) const {
  for (const FoundKind& f : found) {
    if (f.finding.kind == kind) return &f;
  }
  return nullptr;
}

void split::shrink_all(Subject& subject, ExploreResult& out, const ExploreOptions& options) {
  for (FoundKind& fk : out.found) {
    ShrinkResult s = shrink(subject, fk.result.choices(), fk.finding.kind, options.run);
    fk.result = std::move(s.result);
    fk.preemptions = fk.result.preemptions;
    for (const Finding& f : fk.result.findings()) {
      if (f.kind == fk.finding.kind) fk.finding = f;
    }
  }
}

void split::finish(Subject& subject, ExploreResult& out, const ExploreOptions& options,
                   double seconds) {
  if (options.shrink) shrink_all(subject, out, options);
  if (options.check_determinism) check_determinism(subject, out, options.run);
  out.seconds = seconds;
  if (options.progress)
    options.progress({out.executions, options.iterations, out.found.size(), out.seconds});
}

void check_determinism(Subject& subject, ExploreResult& out, const RunOptions& run) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> v;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') {
        v.push_back(text.substr(start, i - start));
        start = i + 1;
      }
    }
    return v;
  };
  for (const FoundKind& fk : out.found) {
    GuidedStrategy again(fk.result.choices());
    auto second = run_execution(subject, again, 0, run);
    ++out.determinism_checked;
    const auto a = lines(fk.result.trace_text());
    const auto b = lines(second->trace_text());
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    const bool same_findings = second->found(fk.finding.kind);
    if (k == a.size() && k == b.size() && same_findings) continue;
    out.determinism_failures.push_back(
        k < a.size() || k < b.size()
            ? fmt::format("{}: re-executing the schedule diverged at step {}: first run '{}', "
                          "second run '{}'",
                          fk.finding.kind, k, k < a.size() ? a[k] : "(end)",
                          k < b.size() ? b[k] : "(end)")
            : fmt::format("{}: re-executing the schedule gave the same steps but not the finding",
                          fk.finding.kind));
  }
}

ExploreResult explore(Subject& subject, const ExploreOptions& options) {
  using clock = std::chrono::steady_clock;
  const Budget budget(options.iterations, options.time_limit_s, [&options] {
    return options.interrupt != nullptr && options.interrupt->load(std::memory_order_relaxed);
  });
  auto strategy = make_strategy(options.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  auto last_progress = clock::now();
  Coverage coverage;
  const bool proves = strategy_proves(options.strategy.kind);

  auto run_one = [&](std::uint64_t i) { return run_execution(subject, *strategy, i, options.run); };
  auto after = [&](std::uint64_t i, ExecutionResult& run) {
    ++out.executions;
    out.steps += run.exec->steps().size();
    coverage.add(handoff_fingerprint(*run.exec));
    std::vector<Finding> fresh;
    for (const Finding& f : run.findings()) {
      if (out.find(f.kind) == nullptr) fresh.push_back(f);
    }
    if (!fresh.empty()) {
      const std::vector<ThreadId> choices = run.choices();
      for (std::size_t k = 0; k < fresh.size(); ++k) {
        FoundKind fk;
        fk.finding = fresh[k];
        fk.execution = i;
        fk.preemptions = fk.original_preemptions = run.preemptions;
        if (k + 1 == fresh.size()) {
          fk.result = std::move(run);
        } else {  // several kinds in one execution: each keeps its own copy (a guided re-run)
          GuidedStrategy again(choices);
          fk.result = std::move(*run_execution(subject, again, 0, options.run));
        }
        out.found.push_back(std::move(fk));
      }
    }
    if (options.progress && clock::now() - last_progress > std::chrono::milliseconds(100)) {
      last_progress = clock::now();
      options.progress({out.executions, options.iterations, out.found.size(), budget.elapsed()});
    }
    return true;
  };
  out.stop = run_loop(budget, *strategy, proves, run_one, after).value_or(StopReason::kBudget);
  out.classes = strategy->classes();
  out.states = strategy->states();
  out.interleavings = coverage.summary();
  split::finish(subject, out, options, budget.elapsed());
  return out;
}

ExploreResult explore(const SubjectFactory& make, const ExploreOptions& options) {
  const Partition& p = options.partition;
  if (p.shards == 0 || p.shard >= p.shards || p.jobs == 0) {
    throw std::invalid_argument("explore: invalid partition");
  }
  if (!p.split()) {
    auto subject = make();
    return explore(*subject, options);
  }
  // dpor's symmetry reduction is for one job: below a top part explored in full it multiplies the
  // executions instead (1 GPU x 3 drafters: 4,496,874 on 2 jobs against 309,396 on one, and
  // 961,228 without it), since whether two steps depend on each other through gating depends on
  // their order. A split runs without it, so every split of a search agrees.
  ExploreOptions whole = options;
  whole.strategy.dpor_symmetry = false;
  const auto splitter = make_splitter(whole.strategy);
  if (splitter == nullptr && make_strategy(options.strategy)->clone() == nullptr) {
    throw InputError(fmt::format("--strategy {} runs on one job: drop --jobs and --shard",
                                 strategy_name(options.strategy.kind)));
  }
  if (splitter != nullptr) return split::explore_subtrees(make, whole, *splitter);
  return split::explore_indices(make, options);
}

}  // namespace racelab::sched

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

Budget ExploreOptions::budget() const {
  return Budget(iterations, time_limit_s, [this] {
    return interrupt != nullptr && interrupt->load(std::memory_order_relaxed);
  });
}

ExecutionResult ModelRunner::rerun(const std::vector<ThreadId>& choices) const {
  GuidedStrategy again(choices);
  return std::move(*run_execution(subject_, again, 0, options_));
}

FoundKind first_found(const Finding& finding, std::uint64_t execution, std::uint64_t preemptions,
                      ExecutionResult result) {
  FoundKind fk;
  fk.finding = finding;
  fk.execution = execution;
  fk.preemptions = fk.original_preemptions = preemptions;
  fk.result = std::move(result);
  return fk;
}

bool KeepFirstOfEachKind::keep(std::uint64_t execution, ExecutionResult& run) {
  std::optional<std::string> last_new;  // the last kind this execution shows first
  for (const Finding& f : run.findings) {
    if (!firsts_.contains(f.kind)) last_new = f.kind;
  }
  if (!last_new) return true;
  offer(FindingPosition{std::nullopt, execution, 0}, run);
  firsts_.at(*last_new).record = std::move(run);
  return true;
}

void KeepFirstOfEachKind::offer(FindingPosition at, const ExecutionResult& run) {
  std::vector<ThreadId> choices;
  const std::vector<Finding>& findings = run.findings;
  for (std::size_t place = 0; place < findings.size(); ++place) {
    at.place = place;
    const auto it = firsts_.find(findings[place].kind);
    if (it != firsts_.end() && it->second.at <= at) continue;
    if (choices.empty()) choices = run.choices;
    offer(First{at, findings[place], run.preemptions, choices, std::nullopt});
  }
}

void KeepFirstOfEachKind::offer(First first) {
  const auto it = firsts_.find(first.finding.kind);
  if (it == firsts_.end()) {
    std::string kind = first.finding.kind;
    firsts_.emplace(std::move(kind), std::move(first));
  } else if (first.at < it->second.at) {
    it->second = std::move(first);
  }
}

std::vector<FoundKind> KeepFirstOfEachKind::found(const ModelRunner& runner) && {
  std::vector<First*> order;
  for (auto& [kind, first] : firsts_) order.push_back(&first);
  std::sort(order.begin(), order.end(),
            [](const First* a, const First* b) { return a->at < b->at; });
  std::vector<FoundKind> out;
  for (First* f : order) {
    out.push_back(first_found(f->finding, f->at.execution, f->preemptions,
                              f->record ? std::move(*f->record) : runner.rerun(f->choices)));
    out.back().subtree = f->at.subtree;
  }
  firsts_.clear();
  return out;
}

const FoundKind* ExploreResult::find(std::string_view kind) const {
  for (const FoundKind& f : found) {
    if (f.finding.kind == kind) return &f;
  }
  return nullptr;
}

void split::shrink_all(Subject& subject, ExploreResult& out, const ExploreOptions& options) {
  for (FoundKind& fk : out.found) {
    ShrinkResult s = shrink(subject, fk.result.choices, fk.finding.kind, options.run);
    fk.result = std::move(s.result);
    fk.preemptions = fk.result.preemptions;
    for (const Finding& f : fk.result.findings) {
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
  const ModelRunner runner(subject, run);
  for (const FoundKind& fk : out.found) {
    const ExecutionResult second = runner.rerun(fk.result.choices);
    ++out.determinism_checked;
    const auto a = lines(fk.result.trace_text());
    const auto b = lines(second.trace_text());
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    const bool same_findings = second.found(fk.finding.kind);
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

namespace {

// The model's keep policy, ended by the first execution with a finding `stop_at` accepts
// (ExploreOptions::stop_at).
struct KeepUntil {
  KeepFirstOfEachKind kept;
  const std::function<bool(const Finding&)>* stop_at;
  bool keep(std::uint64_t execution, ExecutionResult& run) {
    const bool stop = *stop_at && std::any_of(run.findings.begin(), run.findings.end(), *stop_at);
    kept.keep(execution, run);  // may move the record away: asked first
    return !stop;
  }
  std::size_t kinds() const { return kept.kinds(); }
};

}  // namespace

ExploreResult explore(Subject& subject, const ExploreOptions& options) {
  const Budget budget = options.budget();
  auto strategy = make_strategy(options.strategy);
  const ModelRunner runner(subject, options.run);
  auto last_progress = std::chrono::steady_clock::now();
  auto progress = [&](const Exploration<KeepUntil>& so_far) {
    const auto now = std::chrono::steady_clock::now();
    if (!options.progress || now - last_progress <= std::chrono::milliseconds(100)) return;
    last_progress = now;
    options.progress({so_far.executions, options.iterations, so_far.kept.kinds(), so_far.seconds});
  };
  Exploration<KeepUntil> run =
      explore_executions(runner, KeepUntil{KeepFirstOfEachKind(), &options.stop_at}, *strategy,
                         budget, strategy_proves(options.strategy.kind), progress);
  KeepFirstOfEachKind kept = std::move(run.kept.kept);
  ExploreResult out;
  static_cast<Explored&>(out) = std::move(run);
  out.strategy = strategy->describe();
  out.found = std::move(kept).found(runner);
  Strategy::Progress progress_made = strategy->progress();
  out.classes = progress_made.classes;
  out.states = progress_made.states;
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
  const auto splitter = make_splitter(options.strategy);
  if (splitter == nullptr && make_strategy(options.strategy)->clone() == nullptr) {
    throw InputError(fmt::format("--strategy {} runs on one job: drop --jobs and --shard",
                                 strategy_name(options.strategy.kind)));
  }
  if (splitter != nullptr) return split::explore_subtrees(make, options, *splitter);
  return split::explore_indices(make, options);
}

}  // namespace racelab::sched

#include "sched/explore_split.h"

#include <algorithm>
#include <set>

#include "sched/shrink.h"
#include "util/check.h"

namespace racelab::sched::split {

void collect_found(Subject& subject, const Hits& hits, const ExploreOptions& o, ExploreResult& out,
                   bool by_subtree, const std::vector<std::uint64_t>& offsets) {
  std::vector<const Hit*> order;
  for (const auto& [kind, h] : hits.by_kind) order.push_back(&h);
  std::sort(order.begin(), order.end(), [](const Hit* a, const Hit* b) { return a->key < b->key; });
  const ModelRunner runner(subject, o.run);
  for (const Hit* h : order) {
    const auto [major, minor, pos] = h->key;
    const std::uint64_t execution = by_subtree         ? minor
                                    : !offsets.empty() ? offsets[major] + minor
                                                       : major;
    out.found.push_back(
        first_found(h->finding, execution, h->preemptions, runner.rerun(h->choices)));
    if (by_subtree) out.found.back().subtree = major;
  }
}

ExploreResult explore_indices(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  const ModelRunner runner0(*subject0, o.run);
  auto strategy = make_strategy(o.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  Hits hits;
  Tally tally;
  std::atomic<std::uint64_t> executions{0};  // for the progress line, while workers run
  std::atomic<std::size_t> kinds{0};
  // PCT and SURW learn from their first executions: every shard runs them, in order, on one
  // thread.
  const std::uint64_t calibration = std::min(o.iterations, strategy->calibration());
  for (std::uint64_t i = 0; i < calibration; ++i) {
    if (!workers.go()) break;
    auto run = runner0.run(*strategy, i);
    if (i % p.shards != p.shard) continue;
    executions.fetch_add(1);
    tally.add(ModelRunner::steps(*run), ModelRunner::fingerprint(*run));
    hits.add(i, 0, *run);
    kinds.store(hits.by_kind.size());
  }
  std::uint64_t first = calibration;
  while (first % p.shards != p.shard) ++first;
  std::atomic<std::uint64_t> next{0};
  constexpr std::uint64_t kChunk = 64;
  std::vector<Hits> local(p.jobs);
  std::vector<Tally> local_tally(p.jobs);
  std::mutex kinds_mutex;
  std::set<std::string> kind_names;
  for (const auto& [kind, h] : hits.by_kind) kind_names.insert(kind);
  if (!stop.raised()) {
    workers.run(
        p.jobs,
        [&](unsigned w) {
          auto subject = make();
          const ModelRunner runner(*subject, o.run);
          auto strat = strategy->clone();
          RACELAB_CHECK(strat != nullptr,
                        "strategy {} splits by execution index (strategies/factory.cc) but its "
                        "clone() is nullptr",
                        strategy->describe());
          for (;;) {
            const std::uint64_t begin = next.fetch_add(kChunk);
            for (std::uint64_t pos = begin; pos < begin + kChunk; ++pos) {
              const std::uint64_t i = first + pos * p.shards;
              if (i >= o.iterations || !workers.go()) return;
              auto run = runner.run(*strat, i);
              executions.fetch_add(1);
              local_tally[w].add(ModelRunner::steps(*run), ModelRunner::fingerprint(*run));
              if (!run->findings.empty()) {
                local[w].add(i, 0, *run);
                std::lock_guard<std::mutex> lock(kinds_mutex);
                for (const Finding& f : run->findings) kind_names.insert(f.kind);
                kinds.store(kind_names.size());
              }
            }
          }
        },
        executions, kinds);
  }
  for (const Hits& h : local) hits.merge(h);
  for (const Tally& t : local_tally) tally.merge(t);
  out.interleavings = tally.coverage.summary();
  out.executions = tally.executions;
  out.steps = tally.steps;
  if (p.shards > 1) out.interleaving_counts = std::make_shared<Coverage>(std::move(tally.coverage));
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load()) : StopReason::kBudget;
  collect_found(*subject0, hits, o, out, false, {});
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

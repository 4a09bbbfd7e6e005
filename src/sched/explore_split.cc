#include "sched/explore_split.h"

#include <algorithm>
#include <set>

#include "sched/shrink.h"
#include "util/check.h"

namespace racelab::sched::split {

ExploreResult explore_indices(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  const ModelRunner runner0(*subject0, o.run);
  auto strategy = make_strategy(o.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  KeepFirstOfEachKind kept;
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
    out.add(ModelRunner::steps(*run), ModelRunner::fingerprint(*run));
    kept.offer({std::nullopt, i, 0}, *run);
    kinds.store(kept.kinds());
  }
  std::uint64_t first = calibration;
  while (first % p.shards != p.shard) ++first;
  std::atomic<std::uint64_t> next{0};
  constexpr std::uint64_t kChunk = 64;
  std::vector<KeepFirstOfEachKind> local(p.jobs);
  std::vector<Tally> local_tally(p.jobs);
  std::mutex kinds_mutex;
  std::set<std::string> kind_names;
  for (const auto& entry : kept.firsts()) kind_names.insert(entry.first);
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
              if (workers.before(i, *strat, false) || !workers.go()) return;
              auto run = runner.run(*strat, i);
              executions.fetch_add(1);
              local_tally[w].add(ModelRunner::steps(*run), ModelRunner::fingerprint(*run));
              if (!run->findings.empty()) {
                local[w].offer({std::nullopt, i, 0}, *run);
                std::lock_guard<std::mutex> lock(kinds_mutex);
                for (const Finding& f : run->findings) kind_names.insert(f.kind);
                kinds.store(kind_names.size());
              }
            }
          }
        },
        executions, kinds);
  }
  for (KeepFirstOfEachKind& k : local) kept.merge(std::move(k));
  for (const Tally& t : local_tally) out.merge(t);
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load()) : StopReason::kBudget;
  out.found = std::move(kept).found(runner0);
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

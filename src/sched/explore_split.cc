#include "sched/explore_split.h"

#include <algorithm>
#include <set>

#include "sched/shrink.h"
#include "util/check.h"

namespace racelab::sched::split {

// Found kinds, in single-worker discovery order, re-executed on `subject` from their choices.
bool run_piece_execution(Subject& subject, Strategy& strategy, PieceRuns& piece,
                         std::uint64_t local, const RunOptions& run,
                         std::atomic<std::uint64_t>& executions) {
  auto r = run_execution(subject, strategy, local, run);
  if (!r) {
    piece.complete = true;
    return false;
  }
  executions.fetch_add(1);
  piece.ran.fetch_add(1, std::memory_order_relaxed);
  piece.step_counts.push_back(static_cast<std::uint32_t>(r->exec->steps().size()));
  piece.fingerprints.push_back(handoff_fingerprint(*r->exec));
  piece.redundant.push_back(r->abandoned ? 1 : 0);
  if (!r->findings().empty()) piece.hits.add(0, local, *r);
  return true;
}

void collect_found(Subject& subject, const Hits& hits, const ExploreOptions& o, ExploreResult& out,
                   bool dfs_shard, const std::vector<std::uint64_t>& dfs_offsets) {
  std::vector<const Hit*> order;
  for (const auto& [kind, h] : hits.by_kind) order.push_back(&h);
  std::sort(order.begin(), order.end(), [](const Hit* a, const Hit* b) { return a->key < b->key; });
  for (const Hit* h : order) {
    FoundKind fk;
    fk.finding = h->finding;
    if (dfs_shard) {
      fk.subtree = std::get<0>(h->key);
      fk.execution = std::get<1>(h->key);
    } else if (!dfs_offsets.empty()) {
      fk.execution = dfs_offsets[std::get<0>(h->key)] + std::get<1>(h->key);
    } else {
      fk.execution = std::get<0>(h->key);
    }
    fk.preemptions = fk.original_preemptions = h->preemptions;
    GuidedStrategy again(h->choices);
    fk.result = std::move(*run_execution(subject, again, 0, o.run));
    out.found.push_back(std::move(fk));
  }
}

ExploreResult explore_indices(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  auto strategy = make_strategy(o.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  Hits hits;
  Coverage coverage;
  std::atomic<std::uint64_t> executions{0};
  std::atomic<std::uint64_t> steps{0};
  std::atomic<std::size_t> kinds{0};
  // PCT and SURW learn from their first executions: every shard runs them, in order, on one
  // thread.
  const std::uint64_t calibration = std::min(o.iterations, strategy->calibration());
  for (std::uint64_t i = 0; i < calibration; ++i) {
    if (!workers.go()) break;
    auto run = run_execution(*subject0, *strategy, i, o.run);
    if (i % p.shards != p.shard) continue;
    executions.fetch_add(1);
    steps.fetch_add(run->exec->steps().size());
    coverage.add(handoff_fingerprint(*run->exec));
    hits.add(i, 0, *run);
    kinds.store(hits.by_kind.size());
  }
  std::uint64_t first = calibration;
  while (first % p.shards != p.shard) ++first;
  std::atomic<std::uint64_t> next{0};
  constexpr std::uint64_t kChunk = 64;
  std::vector<Hits> local(p.jobs);
  std::vector<Coverage> local_coverage(p.jobs);
  std::mutex kinds_mutex;
  std::set<std::string> kind_names;
  for (const auto& [kind, h] : hits.by_kind) kind_names.insert(kind);
  if (!stop.raised()) {
    workers.run(
        p.jobs,
        [&](unsigned w) {
          auto subject = make();
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
              auto run = run_execution(*subject, *strat, i, o.run);
              executions.fetch_add(1);
              steps.fetch_add(run->exec->steps().size());
              local_coverage[w].add(handoff_fingerprint(*run->exec));
              if (!run->findings().empty()) {
                local[w].add(i, 0, *run);
                std::lock_guard<std::mutex> lock(kinds_mutex);
                for (const Finding& f : run->findings()) kind_names.insert(f.kind);
                kinds.store(kind_names.size());
              }
            }
          }
        },
        executions, kinds);
  }
  for (const Hits& h : local) hits.merge(h);
  for (const Coverage& c : local_coverage) coverage.merge(c);
  out.interleavings = coverage.summary();
  if (p.shards > 1) out.interleaving_counts = std::make_shared<Coverage>(std::move(coverage));
  out.executions = executions.load();
  out.steps = steps.load();
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load()) : StopReason::kBudget;
  collect_found(*subject0, hits, o, out, false, {});
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

std::vector<DfsPrefix> split_dfs(Subject& subject, const ExploreOptions& o, std::size_t& depth) {
  const std::uint64_t target =
      std::max<std::uint64_t>(8, 4 * o.partition.jobs * o.partition.shards);
  std::vector<DfsPrefix> prefixes;
  std::size_t previous = 0;
  for (depth = 1; depth <= 512; ++depth) {
    prefixes.clear();
    auto enumerate = make_dfs_prefixes(o.strategy.max_preemptions, depth, &prefixes);
    for (std::uint64_t i = 0; run_execution(subject, *enumerate, i, o.run); ++i) {
    }
    if (prefixes.size() >= target) break;
    // Every execution is shorter than the depth: the prefixes are whole executions.
    bool all_short = true;
    for (const auto& pre : prefixes) all_short = all_short && pre.size() < depth;
    if (all_short && prefixes.size() == previous) break;
    previous = prefixes.size();
  }
  return prefixes;
}

ExploreResult explore_dfs_shards(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  ExploreResult out;
  out.strategy = make_strategy(o.strategy)->describe();
  const std::vector<DfsPrefix> prefixes = split_dfs(*subject0, o, out.split_depth);
  out.subtree_count = prefixes.size();

  std::vector<std::unique_ptr<PieceRuns>> subs;  // this shard's subtrees
  for (std::uint64_t j = p.shard; j < prefixes.size(); j += p.shards) {
    subs.push_back(std::make_unique<PieceRuns>());
    subs.back()->index = j;
  }
  std::mutex m;
  std::set<std::string> kind_names;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> executions{0};
  std::atomic<std::size_t> kinds{0};
  workers.run(
      p.jobs,
      [&](unsigned) {
        auto subject = make();
        for (;;) {
          const std::uint64_t k = next.fetch_add(1);
          if (k >= subs.size() || !workers.go()) return;
          PieceRuns& sub = *subs[k];
          auto strat = make_dfs_subtree(o.strategy.max_preemptions, prefixes[sub.index]);
          for (std::uint64_t local = 0;; ++local) {
            if (local >= o.iterations || !workers.go()) break;
            if (!run_piece_execution(*subject, *strat, sub, local, o.run, executions)) break;
          }
          std::lock_guard<std::mutex> lock(m);
          for (const auto& [kind, h] : sub.hits.by_kind) kind_names.insert(kind);
          kinds.store(kind_names.size());
        }
      },
      executions, kinds);

  // A shard cannot place its subtrees in the global order: it reports them; merge does.
  Fold f = fold(subs, o.iterations, true);
  out.subtrees = std::move(f.subtrees);
  out.executions = f.executions;
  out.steps = f.steps;
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load())
             : f.exhausted ? StopReason::kExhausted
                           : StopReason::kBudget;
  collect_found(*subject0, f.hits, o, out, true, {});
  out.interleaving_counts = std::make_shared<Coverage>(f.coverage);
  out.interleavings = f.coverage.summary();
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

// dpor split across jobs and shards. The top part of the search (split_dpor) is explored in full
// to a depth that depends only on the subject, never on the partition, so every split of one
// subject has the same subtrees, in the same order: the single-worker order is subtree after
// subtree, shards take subtree j when j % shards == shard, the jobs of a shard take theirs in
// order, and findings are kept by (subtree, execution within it). The classes explored are dpor's
// classes, the same as unsplit; what the top part adds is sleep-set blocked executions, counted
// as redundant.
//
// Budget, as for DFS: one process (jobs) cuts the single-worker order at the cap (a worker stops
// once the executions before its subtree and its own pass it); a shard runs each of its subtrees
// up to the cap and reports them, and racelab merge cuts.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sched/explore_split.h"

namespace racelab::sched::split {
namespace {

// Leaves the top part aims at. Sleep sets make the subtrees uneven (the earlier siblings' threads
// sleep in the later ones), so it takes many: on 1 GPU x 3 drafters, 64 leaves (depth 11) left
// one subtree with 67% of the executions, and two jobs ran 1.06 times as fast as one; 1024
// (1154 leaves, depth 15) leaves the largest with 1.6%, and two jobs run 1.4 times as fast
// (bench/dpor_jobs.sh, docs/performance.md). The top part costs one short execution per leaf.
// But a top part that already reaches the ends of executions is near the bottom of the tree:
// deeper, it would only re-branch what source-DPOR prunes (lazy-2-drafters, 350 classes: 2688
// executions at 1024 leaves, against 410 at 64). There it stops at kDporMinSubtrees.
constexpr std::size_t kDporSubtrees = 1024;
constexpr std::size_t kDporMinSubtrees = 64;

}  // namespace

DporPrefixes split_dpor(Subject& subject, const ExploreOptions& o, std::size_t& depth) {
  DporPrefixes prefixes;
  for (depth = 1; depth <= 512; ++depth) {
    prefixes.clear();
    auto enumerate = make_dpor_prefixes(o.strategy.dpor_max_preemptions, depth, &prefixes);
    for (std::uint64_t i = 0; run_execution(subject, *enumerate, i, o.run); ++i) {
    }
    if (prefixes.size() >= kDporSubtrees) break;
    if (prefixes.size() >= kDporMinSubtrees &&
        std::any_of(prefixes.begin(), prefixes.end(),
                    [](const auto& p) { return dpor_prefix_ended(*p); }))
      break;
    // No execution reached the depth: the leaves are whole executions, deeper adds nothing.
    if (std::none_of(prefixes.begin(), prefixes.end(),
                     [](const auto& p) { return dpor_prefix_cut(*p); }))
      break;
  }
  return prefixes;
}

ExploreResult explore_dpor_split(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  const bool sharded = p.shards > 1;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  ExploreResult out;
  const DporPrefixes prefixes = split_dpor(*subject0, o, out.split_depth);
  out.subtree_count = prefixes.size();
  out.strategy =
      fmt::format("{}, split at depth {} into {} subtrees", make_strategy(o.strategy)->describe(),
                  out.split_depth, prefixes.size());

  std::vector<std::unique_ptr<PieceRuns>> subs;  // this shard's, in the single-worker order
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
          auto strat = make_dpor_subtree(o.strategy.dpor_max_preemptions, *prefixes[sub.index]);
          std::uint64_t earlier = 0;  // executions before this subtree (a lower bound: they grow)
          for (std::uint64_t local = 0;; ++local) {
            if (!workers.go()) break;
            if (!sharded && local % 32 == 0) {
              earlier = 0;
              for (std::uint64_t q = 0; q < k; ++q)
                earlier += subs[q]->ran.load(std::memory_order_relaxed);
            }
            if (earlier + local >= o.iterations) {  // past the cap; does the subtree go on?
              if (!strat->begin_execution(local)) sub.complete = true;
              break;
            }
            if (!run_piece_execution(*subject, *strat, sub, local, o.run, executions)) break;
          }
          std::lock_guard<std::mutex> lock(m);
          for (const auto& [kind, h] : sub.hits.by_kind) kind_names.insert(kind);
          kinds.store(kind_names.size());
        }
      },
      executions, kinds);

  // The single-worker order, cut at the cap (a shard's subtrees are cut by merge instead).
  Fold f = fold(subs, o.iterations, sharded);
  out.executions = f.executions;
  out.steps = f.steps;
  if (sharded) out.subtrees = std::move(f.subtrees);
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load())
             : f.exhausted ? StopReason::kExhausted
                           : StopReason::kBudget;
  out.classes = Strategy::Classes{out.executions - f.redundant, f.redundant};
  collect_found(*subject0, f.hits, o, out, sharded, f.offsets);
  if (sharded) out.interleaving_counts = std::make_shared<Coverage>(f.coverage);
  out.interleavings = f.coverage.summary();
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

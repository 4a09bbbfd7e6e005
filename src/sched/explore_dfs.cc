// DFS with several jobs in one process. The single-worker order is subtree after subtree (the
// prefixes of split_dfs, in order). Subtrees are very uneven (the one that never preempts early
// holds most of a bounded space), so a worker with nothing left to take asks the others to split
// their subtree: the owner gives the untried alternatives of its shallowest open decision away
// (DfsWorker::split) and they are placed right after it in the order, where the single worker
// would have met them. One budget holds for all: execution e of a subtree comes after at least
// the executions already run in the subtrees before it, so once those and e pass the budget,
// nothing more of that subtree can count and its worker stops. What is found and counted is
// what the single worker finds and counts, for any number of jobs.
#include <algorithm>
#include <list>
#include <optional>
#include <set>

#include "sched/explore_split.h"

namespace racelab::sched::split {
namespace {

struct Piece : PieceRuns {
  DfsPrefix prefix;
  bool taken = false;
};

// How often an owner recomputes the executions before its piece (they only grow, so a stale sum
// only lets it run a few executions the budget will not count).
constexpr std::uint64_t kBudgetCheck = 32;

}  // namespace

ExploreResult explore_dfs_jobs(const SubjectFactory& make, const ExploreOptions& o) {
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  ExploreResult out;
  out.strategy = make_strategy(o.strategy)->describe();
  std::list<Piece> order;  // the single-worker order; pieces are only ever inserted
  for (DfsPrefix& p : split_dfs(*subject0, o, out.split_depth)) order.emplace_back().prefix = p;
  out.subtree_count = order.size();

  std::mutex m;
  std::condition_variable wake;
  unsigned running = 0;
  std::atomic<unsigned> hungry{0};
  std::set<std::string> kind_names;
  std::atomic<std::uint64_t> executions{0};
  std::atomic<std::size_t> kinds{0};
  const auto before = [&](std::list<Piece>::iterator it) {  // caller holds m
    std::uint64_t sum = 0;
    for (auto q = order.begin(); q != it; ++q) sum += q->ran.load(std::memory_order_relaxed);
    return sum;
  };
  // The first piece nobody has taken, or nullopt once every piece is done.
  using Place = std::list<Piece>::iterator;
  const auto take = [&]() -> std::optional<Place> {
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      if (stop.raised()) return std::nullopt;
      auto it = std::find_if(order.begin(), order.end(), [](const Piece& p) { return !p.taken; });
      if (it != order.end()) {
        it->taken = true;
        ++running;
        return it;
      }
      if (running == 0) return std::nullopt;
      hungry.fetch_add(1);
      wake.wait_for(lock, std::chrono::milliseconds(50));
      hungry.fetch_sub(1);
    }
  };

  workers.run(
      o.partition.jobs,
      [&](unsigned) {
        auto subject = make();
        for (auto place = take(); place; place = take()) {
          const Place it = *place;
          Piece& piece = *it;
          auto strat = make_dfs_worker(o.strategy.max_preemptions, piece.prefix);
          std::uint64_t earlier = 0;
          std::uint64_t next_split = 1;  // a split needs one execution first; a failed one waits
          for (std::uint64_t local = 0;; ++local) {
            if (!workers.go()) break;
            const bool asked = local >= next_split && hungry.load(std::memory_order_relaxed) > 0;
            if (local % kBudgetCheck == 0 || asked) {
              std::lock_guard<std::mutex> lock(m);
              earlier = before(it);
              if (asked) {
                const auto after = std::next(it);
                const std::uint64_t done = earlier + local;
                std::vector<DfsPrefix> given =
                    strat->split(done < o.iterations ? o.iterations - done : 0);
                for (DfsPrefix& p : given) order.emplace(after)->prefix = std::move(p);
                // Failed or not, wait a little before splitting again: the asking worker needs a
                // moment to take what was given, and pieces should not be cut ever smaller.
                next_split = local + (given.empty() ? kBudgetCheck : 4);
                if (!given.empty()) wake.notify_all();
              }
            }
            if (earlier + local >= o.iterations) {  // past the budget; does the piece go on?
              if (!strat->begin_execution(local)) piece.complete = true;
              break;
            }
            if (!run_piece_execution(*subject, *strat, piece, local, o.run, executions)) break;
          }
          std::lock_guard<std::mutex> lock(m);
          for (const auto& [kind, h] : piece.hits.by_kind) kind_names.insert(kind);
          kinds.store(kind_names.size());
          --running;
          wake.notify_all();
        }
      },
      executions, kinds);

  // Single-worker order: piece after piece; the budget cuts it at o.iterations.
  const Fold f = fold(order, o.iterations, false);
  out.executions = f.executions;
  out.steps = f.steps;
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load())
             : f.exhausted ? StopReason::kExhausted
                           : StopReason::kBudget;
  collect_found(*subject0, f.hits, o, out, false, f.offsets);
  out.interleavings = f.coverage.summary();
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

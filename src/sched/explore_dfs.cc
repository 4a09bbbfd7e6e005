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

struct Piece {
  DfsPrefix prefix;
  bool taken = false;
  bool complete = false;                   // every execution of the piece ran
  std::atomic<std::uint64_t> ran{0};       // executions run so far (only grows)
  std::vector<std::uint32_t> step_counts;  // per execution, written by the owner, read at the end
  std::vector<std::uint64_t> fingerprints;
  Hits hits;  // keyed (0, execution within the piece, finding); re-keyed at the end
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
            auto run = run_execution(*subject, *strat, local, o.run);
            if (!run) {
              piece.complete = true;
              break;
            }
            executions.fetch_add(1);
            piece.ran.fetch_add(1, std::memory_order_relaxed);
            piece.step_counts.push_back(static_cast<std::uint32_t>(run->exec->steps().size()));
            piece.fingerprints.push_back(handoff_fingerprint(*run->exec));
            if (!run->findings().empty()) piece.hits.add(0, local, *run);
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
  Hits hits;
  Coverage coverage;
  std::vector<std::uint64_t> offsets;
  std::uint64_t total = 0;
  bool all_complete = true;
  std::uint64_t index = 0;
  for (const Piece& piece : order) {
    offsets.push_back(total);
    const std::uint64_t room = total < o.iterations ? o.iterations - total : 0;
    const std::uint64_t counted = std::min<std::uint64_t>(room, piece.step_counts.size());
    for (std::uint64_t e = 0; e < counted; ++e) {
      out.steps += piece.step_counts[e];
      coverage.add(piece.fingerprints[e]);
    }
    out.executions += counted;
    for (const auto& [kind, h] : piece.hits.by_kind) {
      if (std::get<1>(h.key) >= room) continue;
      Hit keyed = h;
      std::get<0>(keyed.key) = index;
      hits.offer(keyed);
    }
    total += piece.step_counts.size();
    all_complete = all_complete && piece.complete;
    ++index;
  }
  out.stop = stop.raised()                           ? static_cast<StopReason>(stop.reason.load())
             : all_complete && total <= o.iterations ? StopReason::kExhausted
                                                     : StopReason::kBudget;
  collect_found(*subject0, hits, o, out, false, offsets);
  out.interleavings = coverage.summary();
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

// A search (dfs, dpor) split across jobs and shards: one driver, the strategy's Splitter
// (strategies/split.h) saying how its tree is cut.
//
// The top part of the search is enumerated first, at the first depth deep enough for the
// strategy (top_part below). The subtrees below its leaves, in order, are the single-worker
// order: shards take subtree j when j % shards == shard, the jobs of a shard take theirs in
// order, and findings are kept by (subtree, execution within it), never by which worker got there
// first.
//
// Budget: one process cuts the single-worker order at the cap. Execution e of a piece comes after
// at least the executions already run in the pieces before it, so once those and e pass the cap,
// nothing more of that piece can count and its worker stops. A shard cannot know what comes
// before its subtrees: it runs each up to the cap and reports them, and racelab merge cuts. A
// piece stopped by the cap asks its search for one more execution, as the single worker's loop
// does (loop.h): when there is none, the piece is complete.
//
// Within one process, where the strategy resplits (dfs: its subtrees are very uneven, the one
// that never preempts early holding most of a bounded space), a worker with nothing left to take
// asks the others to split their piece: the owner gives part of what it has not explored away
// (SubtreeSearch::split) and it is placed right after the owner's piece, where the single worker
// would have met it. What is found and counted is what the single worker finds and counts, for
// any number of jobs.
#include <algorithm>
#include <list>
#include <optional>
#include <set>

#include "sched/explore_split.h"

namespace racelab::sched::split {
namespace {

// A piece of the search (a subtree of the top part, or part of one its owner gave away) and what
// its worker keeps of it, execution by execution, until fold() places the pieces in the
// single-worker order. One worker writes a piece; `ran` may be read by the others meanwhile (the
// budget).
struct Piece {
  std::shared_ptr<const Subtree> subtree;
  std::uint64_t index = 0;  // its subtree's index in the whole search (shards)
  bool taken = false;
  std::atomic<std::uint64_t> ran{0};       // executions so far (only grows)
  std::vector<std::uint32_t> step_counts;  // per execution
  std::vector<std::uint64_t> fingerprints;
  std::vector<char> redundant;  // per execution: abandoned as redundant (dpor: sleep-set blocked)
  bool complete = false;        // every execution of the piece ran
  KeepFirstOfEachKind kept;     // positions: the execution within the piece
};

// The pieces placed in the single-worker order and counted as one worker would count them. One
// process (`sharded` false) cuts the order at `cap` and places each finding at its execution's
// number in that order; a shard reports each piece up to `cap` under its subtree index, for
// racelab merge to place. The search is exhausted when every piece ran to its end within the cap.
struct Fold : Tally {
  std::uint64_t redundant = 0;
  std::uint64_t total = 0;  // every execution the pieces ran, counted or not
  bool exhausted = true;
  KeepFirstOfEachKind kept;
  std::vector<DfsSubtree> subtrees;  // a shard's: each piece as counted
};
Fold fold(std::list<Piece>& pieces, std::uint64_t cap, bool sharded) {
  Fold f;
  SplitOrder order(cap);
  for (Piece& p : pieces) {
    const std::uint64_t offset = order.add(p.step_counts.size(), p.complete);
    const std::uint64_t room = sharded ? cap : order.room(offset);
    const std::uint64_t counted = std::min<std::uint64_t>(room, p.step_counts.size());
    const std::uint64_t steps_before = f.steps;
    std::uint64_t redundant = 0;
    for (std::uint64_t e = 0; e < counted; ++e) {
      f.add(p.step_counts[e], p.fingerprints[e]);
      redundant += p.redundant[e];
    }
    f.redundant += redundant;
    if (sharded)
      f.subtrees.push_back({p.index, counted, f.steps - steps_before, p.complete, redundant});
    f.kept.merge(std::move(p.kept), [&](FindingPosition at) -> std::optional<FindingPosition> {
      if (!sharded) return order.place(at, offset);
      if (at.execution >= room) return std::nullopt;  // beyond the cap
      return FindingPosition{p.index, at.execution, at.place};
    });
  }
  f.total = order.total();
  // A shard cannot know what comes before its subtrees: racelab merge cuts them.
  f.exhausted = sharded ? order.complete() : order.exhausted();
  return f;
}

// How often an owner recomputes the executions before its piece (they only grow, so a stale sum
// only lets it run a few executions the budget will not count).
constexpr std::uint64_t kBudgetCheck = 32;

// Runs execution `local` of a piece under `search` and records it in `piece` (and counts it in
// `executions`); false, marking the piece complete, when the search has nothing left.
bool run_piece_execution(const ModelRunner& runner, Strategy& search, Piece& piece,
                         std::uint64_t local, std::atomic<std::uint64_t>& executions) {
  auto r = runner.run(search, local);
  if (!r) {
    piece.complete = true;
    return false;
  }
  executions.fetch_add(1);
  piece.ran.fetch_add(1, std::memory_order_relaxed);
  piece.step_counts.push_back(static_cast<std::uint32_t>(ModelRunner::steps(*r)));
  piece.fingerprints.push_back(ModelRunner::fingerprint(*r));
  piece.redundant.push_back(r->abandoned ? 1 : 0);
  if (!r->findings.empty()) piece.kept.offer({std::nullopt, local, 0}, *r);
  return true;
}

// The top part of `splitter`'s search at the first depth, from 1, deep enough for the partition's
// workers, enumerated on `subject`; `depth` receives the depth.
std::unique_ptr<TopPart> top_part(Subject& subject, const Splitter& splitter,
                                  const ExploreOptions& o, std::size_t& depth) {
  const std::uint64_t workers = o.partition.jobs * o.partition.shards;
  std::unique_ptr<TopPart> top;
  for (depth = 1; depth <= 512; ++depth) {
    top = splitter.top_part(depth);
    for (std::uint64_t i = 0; run_execution(subject, top->enumerate(), i, o.run); ++i) {
    }
    if (top->deep_enough(workers)) break;
  }
  return top;
}

}  // namespace

ExploreResult explore_subtrees(const SubjectFactory& make, const ExploreOptions& o,
                               const Splitter& splitter) {
  const Partition& p = o.partition;
  const bool sharded = p.shards > 1;
  // A shard reports its subtrees by index, for merge: it takes them whole.
  const bool resplit = !sharded && splitter.resplits();
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  ExploreResult out;
  const Subtrees subtrees = top_part(*subject0, splitter, o, out.split_depth)->subtrees();
  out.subtree_count = subtrees.size();
  out.strategy = splitter.describe(out.split_depth, subtrees.size());
  std::list<Piece> order;  // this shard's, in the single-worker order; pieces are only inserted
  for (std::uint64_t j = p.shard; j < subtrees.size(); j += p.shards) {
    Piece& piece = order.emplace_back();
    piece.index = j;
    piece.subtree = subtrees[j];
  }

  std::mutex m;
  std::condition_variable wake;
  unsigned running = 0;
  std::atomic<unsigned> hungry{0};
  std::set<std::string> kind_names;
  std::atomic<std::uint64_t> executions{0};
  std::atomic<std::size_t> kinds{0};
  using Place = std::list<Piece>::iterator;
  const auto before = [&](Place it) {  // caller holds m
    std::uint64_t sum = 0;
    for (auto q = order.begin(); q != it; ++q) sum += q->ran.load(std::memory_order_relaxed);
    return sum;
  };
  // The first piece nobody has taken; nullopt once there is none and none can be given.
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
      if (!resplit || running == 0) return std::nullopt;
      hungry.fetch_add(1);
      wake.wait_for(lock, std::chrono::milliseconds(50));
      hungry.fetch_sub(1);
    }
  };

  workers.run(
      p.jobs,
      [&](unsigned) {
        auto subject = make();
        const ModelRunner runner(*subject, o.run);
        for (auto place = take(); place; place = take()) {
          const Place it = *place;
          Piece& piece = *it;
          auto search = piece.subtree->search();
          std::uint64_t earlier = 0;     // executions before the piece (one process; they grow)
          std::uint64_t next_split = 1;  // a split needs one execution first; a failed one waits
          for (std::uint64_t local = 0;; ++local) {
            if (!workers.go()) break;
            const bool asked =
                resplit && local >= next_split && hungry.load(std::memory_order_relaxed) > 0;
            if (!sharded && (local % kBudgetCheck == 0 || asked)) {
              std::lock_guard<std::mutex> lock(m);
              earlier = before(it);
              if (asked) {
                const auto after = std::next(it);
                const std::uint64_t done = earlier + local;
                Subtrees given = search->split(done < o.iterations ? o.iterations - done : 0);
                for (auto& s : given) order.emplace(after)->subtree = std::move(s);
                // Failed or not, wait a little before splitting again: the asking worker needs a
                // moment to take what was given, and pieces should not be cut ever smaller.
                next_split = local + (given.empty() ? kBudgetCheck : 4);
                if (!given.empty()) wake.notify_all();
              }
            }
            // Past the budget, Budget asks the search whether the piece goes on.
            if (const auto cut = workers.before(earlier + local, *search, true)) {
              if (*cut == StopReason::kExhausted) piece.complete = true;
              break;
            }
            if (!run_piece_execution(runner, *search, piece, local, executions)) break;
          }
          std::lock_guard<std::mutex> lock(m);
          for (const auto& entry : piece.kept.firsts()) kind_names.insert(entry.first);
          kinds.store(kind_names.size());
          --running;
          wake.notify_all();
        }
      },
      executions, kinds);

  // The single-worker order, cut at the cap (a shard's subtrees are cut by merge instead).
  Fold f = fold(order, o.iterations, sharded);
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load())
             : f.exhausted ? StopReason::kExhausted
                           : StopReason::kBudget;
  if (splitter.counts_classes())
    out.classes = Strategy::Classes{f.executions - f.redundant, f.redundant};
  out.found = std::move(f.kept).found(ModelRunner(*subject0, o.run));
  if (sharded) out.subtrees = std::move(f.subtrees);
  static_cast<Tally&>(out) = std::move(f);  // what the fold counted
  finish(*subject0, out, o, workers.elapsed());
  return out;
}

}  // namespace racelab::sched::split

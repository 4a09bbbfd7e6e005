#pragma once
// Splitting a search into subtrees (--jobs, --shard), owned by the strategies that search a tree
// (dfs, dpor). Each gives a Splitter through its row of the strategy table (strategies.h); the
// split exploration (src/sched/explore_subtrees.cc), a shard's report.json and racelab merge ask
// it what they need and never which strategy they run. The sampling strategies have none: their
// execution i depends only on i, and they split by execution index (Strategy::clone, calibration).
//
// Policy: the top part of the tree, to one depth, is enumerated first, one short execution per
// leaf; the subtree below each leaf's prefix is a piece of work that any worker or shard can
// search alone. The subtrees, in order, are exactly the single-worker search, so a split run
// finds and counts what one worker would (docs/scale.md). How deep to cut is the strategy's
// choice (TopPart::deep_enough); the depth search itself is the explorer's.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sched/strategy.h"

namespace racelab::sched {

class SubtreeSearch;

// The subtree below one prefix of a search: the decisions that lead to it and whatever searching
// below them needs (dpor: the sleep sets along them). Immutable, shared by the workers.
class Subtree {
 public:
  virtual ~Subtree() = default;
  // The strategy restricted to the executions that start with the prefix, in the single-worker
  // order.
  virtual std::unique_ptr<SubtreeSearch> search() const = 0;
};
using Subtrees = std::vector<std::shared_ptr<const Subtree>>;

// A strategy searching one subtree.
class SubtreeSearch : public Strategy {
 public:
  // Gives away part of what this search has not explored yet, to idle workers of the same process
  // (Splitter::resplits); called between executions. Returns subtrees that come right after this
  // search in the single-worker order, and leaves them out of it: its executions followed by
  // those of the returned subtrees, in order, are exactly its search without the split. `room`:
  // how many more executions the budget counts from here, so that the pieces likely start within
  // it. Empty when nothing is left to give (or before the first execution).
  virtual Subtrees split(std::uint64_t /*room*/) { return {}; }
};

// The top part of a search to one depth.
class TopPart {
 public:
  virtual ~TopPart() = default;
  // The strategy that enumerates it: one execution per leaf, each stopped at the depth or ended
  // above it. Run it until it has nothing left; then the calls below answer.
  virtual Strategy& enumerate() = 0;
  // Whether the split stops at this depth: enough subtrees for `workers` workers in all (every
  // job of every shard), or deeper would add nothing. A strategy whose split changes what it
  // explores (dpor: its redundant executions) ignores `workers`, so that every split of one
  // subject cuts alike.
  virtual bool deep_enough(std::uint64_t workers) const = 0;
  // The leaves' subtrees, in the single-worker order.
  virtual Subtrees subtrees() const = 0;
};

class Splitter {
 public:
  virtual ~Splitter() = default;
  virtual std::unique_ptr<TopPart> top_part(std::size_t depth) const = 0;
  // The strategy's describe() for a split search: dpor adds the split, which changes what it
  // explores; dfs explores the same whatever the split and says nothing of it.
  virtual std::string describe(std::size_t depth, std::size_t subtrees) const = 0;
  // A running subtree search can give part of itself away (SubtreeSearch::split: dfs, whose
  // subtrees are very uneven); otherwise the jobs of a process only take whole subtrees.
  virtual bool resplits() const = 0;
  // The search abandons redundant executions (dpor's sleep-set blocked ones) and every other
  // execution is an interleaving class: each subtree's redundant executions are counted and
  // reported, so that the classes of a split search can be added up.
  virtual bool counts_classes() const = 0;
};

}  // namespace racelab::sched

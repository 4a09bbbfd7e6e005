// states: stateful depth-first search of every reachable state (state.h), with no bound.
//
// Executions are stateless (a coroutine's frame cannot be copied), so the search is a depth-first
// walk of the state graph that re-runs a prefix to reach each state it branches from. Each
// decision beyond the replayed prefix is a state: the strategy asks the execution for its digest
// (StateView::state_digest). A state seen before is not explored again: everything that can
// happen from it was or will be explored from its first visit, so the execution is abandoned
// there (counted as redundant). A new state is recorded and becomes a frame whose enabled
// threads are tried in turn, in later executions. When no frame has an alternative left, every
// state reachable from the start has been expanded, with every thread enabled in it: every step
// any interleaving can take has been taken, so every finding kind any interleaving reaches has
// been reached. Alike threads of a symmetry group share their digests, and so do alike parts
// (Context::part: one GPU's threads, queue and variables), so only one of them is explored from
// each state up to renaming them.
//
// Where interleavings differ in order but meet again in one state, as independent steps and
// steps that commute in effect do, this explores the state once; dpor explores each order class.
// It needs a subject that describes its state (Context::describe_state); one that does not is
// refused at its first decision. A cycle in the state graph is cut at its second visit, so a
// livelock (the step limit) is found only where an acyclic path reaches the limit. One job: it
// does not split across jobs or shards.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "sched/strategies/strategies.h"

namespace racelab::sched {
namespace {

class StatesStrategy : public Strategy {
 public:
  bool begin_execution(std::uint64_t) override {
    depth_ = 0;
    if (!started_) {
      started_ = true;
      return true;
    }
    while (!stack_.empty()) {
      Frame& f = stack_.back();
      if (++f.chosen < f.options.size()) return true;
      stack_.pop_back();
    }
    exhausted_ = true;
    return false;
  }

  ThreadId pick(const Decision& d) override {
    if (depth_ < stack_.size()) {  // replaying the way to the deepest frame
      const Frame& f = stack_[depth_++];
      if (f.options.size() != d.enabled.size() ||
          !std::equal(f.options.begin(), f.options.end(), d.enabled.begin())) {
        throw Nondeterminism("states", d, f.options, d.enabled);
      }
      return f.options[f.chosen];
    }
    const std::optional<std::uint64_t> digest = d.exec != nullptr && d.exec->states() != nullptr
                                                    ? d.exec->states()->state_digest()
                                                    : std::nullopt;
    if (!digest) {
      throw StrategyError(
          "states: the subject does not describe its state (Context::describe_state), or it has "
          "plain shared variables; use dpor or dfs");
    }
    if (!seen_.insert(*digest).second) {
      ++redundant_;
      return kNoThread;  // explored from its first visit
    }
    stack_.push_back(Frame{{d.enabled.begin(), d.enabled.end()}, 0});
    ++depth_;
    return stack_.back().options[0];
  }

  Progress progress() const override { return {.exhausted = exhausted_, .states = seen_.size()}; }
  Needs needs() const override { return {.state_digests = true}; }
  std::string describe() const override { return "states(symmetry)"; }

 private:
  struct Frame {
    std::vector<ThreadId> options;  // the state's enabled threads, ascending
    std::size_t chosen = 0;
  };
  std::vector<Frame> stack_;
  std::size_t depth_ = 0;
  bool started_ = false;
  bool exhausted_ = false;
  std::unordered_set<std::uint64_t> seen_;
  std::uint64_t redundant_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_states() { return std::make_unique<StatesStrategy>(); }

}  // namespace racelab::sched

#pragma once
// dpor's state cache: stateful DPOR (dpor.cc uses it) for subjects that describe their state
// (state.h). Stateless DPOR explores one execution per interleaving class, and some pipelines
// have tens of millions of classes that meet again in a few hundred thousand states (four
// drafters on one GPU, eight GPUs: docs/performance.md). With the cache, a fresh node whose state
// was explored in full before, from a sleep set within the current one, is not explored again:
// the execution is abandoned there (counted apart: Strategy::Classes::cached).
//
// What that would have missed are the races between the events before the state (the current
// stack) and the events after it, whose reversals go on the stack (races among the events after
// it are the same from any path: happens-before between two of them runs through events between
// them). So every explored state keeps a *summary* of its subtree: for each event explored below
// it (and each lock a thread was left blocked on), its thread's role, its access kind and its
// object's role (StateView::role: what renaming the state, alike threads and parts, cannot
// change). At a hit, every stack event that conflicts with a summary entry, by a thread other
// than every thread of the entry's role, is treated as racing with it, with no regard to
// happens-before, and the node before it is expanded in full: every enabled thread is added to
// its backtrack set. Source-DPOR would add one initial of the reversed sequence, which the summary
// cannot name (its events between the two are not kept); whichever it is, it is enabled there,
// so it is among them. This over-approximates what a re-execution of the subtree would add, so it
// only adds executions (after Yang, Chen, Gopalakrishnan, Kirby: "Efficient Stateful Dynamic
// Partial Order Reduction", SPIN 2008, with a coarser summary). Adding only the entry's threads
// where enabled (Flanagan & Godefroid's rule) explores fewer but mixes a persistent-set rule into
// source-DPOR's argument, which we do not rely on.
//
// A hit needs the stored sleep set within the current one: threads asleep at the first visit were
// not explored there. Sleep sets are compared by the digest's canonical thread numbers
// (StateView::named_state_digest). Only nodes the search has left are stored: a state still on
// the stack is not complete, so a cycle in the state graph is explored as stateless DPOR would;
// nor are the nodes above a subtree the step limit cut, or above nodes an execution stopped in
// its replayed prefix dropped. Digests are 64-bit, as for the states strategy (state.h): two
// states share one with odds about n^2 / 2^65.
//
// Open: a summary records what the first visit explored, from its path's choices and sleep set; a
// later visit from a larger sleep set, or with other threads preferred, could meet sleep-set
// blocked prefixes the first did not (complete executions are the same classes either way). No
// run has shown a miss from this; the tests compare every end state with brute force on random
// programs (tests/sched/test_dpor.cc, test_parts.cc) and with the states strategy on pipelines
// (tests/model/test_dpor_scenarios.cc), and `--stateless` remains the reference.
#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sched/strategies/dpor_events.h"
#include "sched/strategy.h"

namespace racelab::sched::dpor {

// Sorted, unique entries: object key (high 32 bits), access kind (8), thread role (low 24).
using Summary = std::vector<std::uint64_t>;

// into := into ∪ from.
void merge(Summary& into, const Summary& from);

// Roles of one search's threads and objects, interned to small numbers.
class Roles {
 public:
  // Reads the threads' roles at an execution's first step (the same every execution).
  void reset(const StateView& view, std::size_t threads);
  std::uint32_t thread_role(ThreadId t) const { return thread_roles_[static_cast<std::size_t>(t)]; }
  std::span<const ThreadId> threads_of(std::uint32_t role) const { return threads_of_[role]; }
  // The key of an access's object in summaries: the object's class and role. kFatalKey for a
  // fatal event's access, which conflicts with everything.
  std::uint32_t object_key(const StateView& view, const Access& a);
  static constexpr std::uint32_t kFatalKey = 0xffffffffU;

 private:
  struct PairHash {
    std::size_t operator()(const std::pair<int, std::uint64_t>& p) const {
      return std::hash<std::uint64_t>()(p.second * 31 + static_cast<std::uint64_t>(p.first));
    }
  };
  std::unordered_map<std::pair<int, std::uint64_t>, std::uint32_t, PairHash> keys_;
  std::unordered_map<std::uint64_t, std::uint32_t> thread_ids_;
  std::vector<std::uint32_t> thread_roles_;
  std::vector<std::vector<ThreadId>> threads_of_;
};

// Adds an event's footprint (by `thread`) to `into`.
void add_event(Summary& into, Roles& roles, const StateView& view, ThreadId thread,
               std::span<const Access> footprint);

// Calls `race(role)` for each role of an entry of `summary` that conflicts with `footprint`.
template <class F>
void conflicting_roles(const Summary& summary, Roles& roles, const StateView& view,
                       std::span<const Access> footprint, F&& race);

class StateCache {
 public:
  // State `digest`, explored in full from a node where `sleep` (canonical numbers, sorted) slept.
  void store(std::uint64_t digest, std::vector<ThreadId> sleep, const Summary& summary);
  // The summary of a stored visit of `digest` whose sleep set is within `sleep`, or nullptr.
  const Summary* find(std::uint64_t digest, const std::vector<ThreadId>& sleep) const;
  std::uint64_t states() const { return visits_.size(); }

 private:
  struct Visit {
    std::vector<ThreadId> sleep;
    std::uint32_t summary;
  };
  struct VectorHash {
    std::size_t operator()(const Summary& s) const;
  };
  std::unordered_map<std::uint64_t, std::vector<Visit>> visits_;
  std::unordered_map<Summary, std::uint32_t, VectorHash> summary_ids_;  // interned: many repeat
  std::vector<const Summary*> summaries_;
};

// ---- Implementation of the template.

template <class F>
void conflicting_roles(const Summary& summary, Roles& roles, const StateView& view,
                       std::span<const Access> footprint, F&& race) {
  const auto entries = [&](std::uint32_t key) {
    const std::uint64_t lo = static_cast<std::uint64_t>(key) << 32;
    const auto first = std::lower_bound(summary.begin(), summary.end(), lo);
    // The fatal key is the largest: its entries run to the end (lo + 2^32 would wrap to 0).
    const auto last = key == Roles::kFatalKey
                          ? summary.end()
                          : std::lower_bound(first, summary.end(), lo + (1ULL << 32));
    return std::pair{first, last};
  };
  const auto [fatal_first, fatal_last] = entries(Roles::kFatalKey);
  for (auto it = fatal_first; it != fatal_last; ++it)
    race(static_cast<std::uint32_t>(*it & 0xffffffU));
  for (const Access& a : footprint) {
    if (a.kind == AccessKind::kFatal) continue;
    const auto [first, last] = entries(roles.object_key(view, a));
    for (auto it = first; it != last; ++it) {
      const auto kind = static_cast<AccessKind>((*it >> 24) & 0xff);
      // Same key: same class of object, one role; conflict() then needs only the kinds.
      if (conflict(Access{kind, 0}, Access{a.kind, 0}))
        race(static_cast<std::uint32_t>(*it & 0xffffffU));
    }
  }
}

}  // namespace racelab::sched::dpor

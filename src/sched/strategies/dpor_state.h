#pragma once
// dpor's search state between two executions, as plain data and as text, so that a search can
// go on in another process exactly as it would have in this one (Strategy::hand_over and
// take_over, strategy.h). A live search needs it past a deadlock: the deadlocked execution's
// threads stay stuck in the process that ran it, and the search goes on in a fresh one
// (src/live/handover.h, docs/live.md, "Every kind in one search").
//
// What is kept is the stack as the next execution will find it (the node that diverges already
// chose its thread: dpor.cc moves the search on before it saves), each node's enabled threads,
// choice, sleep set with the footprints of its sleepers, preemption bookkeeping, backtrack set,
// symmetry-gated threads and wakeup trees, and the counters. Not kept: the event log (each
// execution rebuilds it from step 0), each node's operation (set again as the prefix replays) and
// the state cache (a search with the cache on is not handed over: dpor.cc refuses).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sched/strategies/dpor_events.h"
#include "sched/strategies/dpor_wakeup.h"

namespace racelab::sched::dpor {

struct SavedNode {
  std::vector<ThreadId> enabled;
  ThreadId chosen = kNoThread;
  std::vector<std::pair<ThreadId, std::vector<Access>>> sleep;  // thread, its next event's
  ThreadId previous = kNoThread;
  bool previous_enabled = false;
  int preemptions_before = 0;
  std::vector<char> backtrack;
  std::vector<ThreadId> gated;
  std::vector<WakeupNode> wut;    // the wakeup tree's children
  std::vector<WakeupNode> below;  // the tree below the current choice
  // What the choice's step touched where it ran (the last execution's), for the nodes above the
  // diverging one: the sleep entry it leaves when the search moves on from it (branch states).
  std::vector<Access> done;
};

struct SavedSearch {
  // The strategy's describe(): a state is taken over only by a search of the same parameters.
  std::string strategy;
  std::vector<SavedNode> stack;
  std::size_t threads = 0;
  std::size_t first_new = 0;
  bool exhausted = false;
  bool states_decided = false;
  std::uint64_t classes = 0;
  std::uint64_t redundant = 0;
  // A search confined to the subtree below its first `frozen` choices (a branch state).
  std::size_t frozen = 0;
};

// The state as JSON text, and back; InputError for text that is not one (a damaged file).
std::string to_text(const SavedSearch& s);
SavedSearch from_text(const std::string& text);

}  // namespace racelab::sched::dpor

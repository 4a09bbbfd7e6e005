#pragma once
// dpor's symmetry reduction (dpor.cc uses it). Two threads of one symmetry group
// (FootprintView::symmetry_group) that have taken the same steps and seen the same values are
// interchangeable: the state is the same with the two swapped, so whatever can follow a step of the
// higher one can follow the same step of the lower one with the two renamed. While the lower one
// can run, the higher one is *gated*: left out of the enabled set. Every execution of the program
// is, up to renaming threads within groups, an execution of the program with gates (rename so that
// the lower one of two alike threads is always the one that moves), and dpor explores that program:
// its findings are the same kinds. Gating is a program rule like a lock: the step that makes two
// threads alike disables the higher one, the step that makes them differ enables it again, so such
// a step writes the other thread's *status* (AccessKind::kStatusWrite), and the next step of a
// thread that was alike to another since its last step reads its own; a status write wakes its
// thread from sleep sets. A race whose reversal starts with a gated thread is no race of the gated
// program and is not reversed (its gater's step is the reversal, renamed).
//
// Why this is enough, though the status accesses of two steps depend on their order (so the
// textbook theorems, which fix the dependency relation, do not apply as they stand): (a) of two
// threads on the same track the lower one is always level or ahead in the gated program; (b)
// steps with no status access really commute, so a state a sleep set skips equals one an
// earlier branch reached; (c) "reached up to renaming" is transitive, and every skip is backed
// by a branch explored earlier. tests/sched/test_dpor.cc checks the end states against every
// interleaving. It holds for one search: a split (its top part explored in full) and a
// preemption bound (a gated previous thread makes a switch free) turn it off.
//
// "Seen the same": each step's record holds its operation, its result and, for every variable
// it reads or writes, the step that last wrote that variable (by thread and place, not by
// position, which independent steps shift); the model declares every access to shared state
// (Context::touch), so equal records mean equal values seen. Two alike threads have therefore
// written nothing and submitted nothing (the later writer would see the earlier one), hold no
// mutex, and are enabled alike whenever their pending operations are equal. Pending operations
// are compared too: objects private to a thread (a per-thread warmup lock) keep two threads
// from being gated, since the swap would have to rename those objects with them.
#include <cstdint>
#include <span>
#include <vector>

#include "sched/op.h"
#include "sched/strategies/dpor_events.h"
#include "sched/strategy.h"

namespace racelab::sched::dpor {

// One execution's symmetry bookkeeping, rebuilt from its first step like the EventLog.
class Symmetry {
 public:
  // Starts an execution of `threads` threads, their groups from `view`. Inactive (nothing gated,
  // no status access) when `enabled` is false or no thread has a group.
  void reset(const FootprintView& view, std::size_t threads, bool enabled);
  // The step just executed by `t` (in execution order, every thread's): extends t's history and
  // returns the status accesses of that step (AccessKind::kStatusRead/Write, by thread), valid
  // until the next call.
  std::span<const Touch> observe(ThreadId t, const Op& op, std::int64_t result,
                                 std::span<const Touch> touches);
  // d.enabled less the gated threads (those with a lower enabled thread alike, about to do the
  // same operation); the gated ones in gated().
  std::span<const ThreadId> ungated(const Decision& d);
  const std::vector<ThreadId>& gated() const { return gated_; }
  // A step whose footprint writes `sleeper`'s status wakes it from sleep sets: a sleeping
  // thread's footprint is its step's as explored, and whether that step accesses a status
  // depends on the other threads' histories, which may have changed since.
  bool wakes(ThreadId sleeper, std::span<const Access> step) const;

 private:
  bool alike(ThreadId a, ThreadId b) const;

  bool active_ = false;  // some thread has a symmetry group
  std::size_t threads_ = 0;
  std::vector<int> groups_;                         // per thread
  std::vector<std::vector<std::int64_t>> history_;  // per thread: its steps' records
  std::vector<std::uint64_t> history_hash_;         // per thread: a hash of history_
  std::vector<char> alike_since_;          // per thread: alike to another since its last step
  std::vector<std::uint32_t> local_;       // per thread: steps taken
  std::vector<std::int64_t> last_writer_;  // per variable: (thread << 32 | place) + 1
  std::vector<std::uint32_t> submits_;     // per queue: submits so far
  std::vector<std::int64_t> job_names_;    // per job id: queue << 32 | place
  std::vector<char> was_alike_;            // scratch: alike to the stepping thread before
  std::vector<Touch> status_;              // the step observed last: its status accesses
  std::vector<ThreadId> ungated_;
  std::vector<ThreadId> gated_;
};

}  // namespace racelab::sched::dpor

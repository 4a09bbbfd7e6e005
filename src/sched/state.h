#pragma once
// States: what the `states` strategy (strategies/states.cc) needs to recognise that two
// executions have reached the same state, so that it explores what follows only once.
//
// A state is everything that decides what can happen next:
//   - the scheduler's objects: each thread's status and pending operation, mutex owners, set
//     events, the jobs waiting in each queue and which are taken or done (Execution);
//   - each thread's local state. The scheduler cannot read a coroutine's frame; it records instead
//     what the thread has *seen* since it last said its past no longer matters
//     (Context::forget_past): every operation it ran, the operation's result, and what the subject
//     says the thread could see of each variable it accessed (StateSource::var_digest). A thread
//     whose code is deterministic given what it saw is then in the same local state whenever it
//     has seen the same;
//   - the subject's shared state (StateSource::shared_digest).
// Threads of one symmetry group (Context::spawn_symmetric) are interchangeable: the digest sorts
// them by what they have seen and renames them, and the jobs they submitted, accordingly, so two
// states that differ only by which of two alike drafters did what have one digest.
// Alike parts (Context::part: one GPU's drafters, worker, queue and variables) are renamed the
// same way, all of a part's threads and objects together: parts are sorted by their own state
// (their threads' and objects' states with objects named relative to the part, and the
// subject's part_digest), and the digest then names each part's threads, objects and the
// subject's per-part state by the part's place in that order. Alike threads within a part are
// then sorted as above.
//
// A subject opts in by giving its StateSource to Context::describe_state in setup, and vouches
// that:
//   1. every value its threads' code reads from shared state is seen through an operation on a
//      variable or a touch (Context::touch) whose var_digest covers it, or was written once
//      before it is read and is covered by shared_digest;
//   2. var_digest names no thread or job by id (it is recorded before threads are renamed), and
//      shared_digest names them only through StateNames;
//   3. nothing a thread does depends on virtual time (Context::now), its id or its name other than
//      in messages;
//   4. at forget_past(label) the thread's continuation depends only on `label` and shared state;
//   5. with parts: renaming parts maps every reachable state to one that behaves the same up to
//      the renaming. Each part's threads run the same code on their own part's objects; a thread
//      outside the parts may treat parts differently (a warmup that visits GPU 0 first, then
//      GPU 1) only while those parts are still in the same state. var_digest and a label name no
//      part by number; shared_digest names parts only through StateNames::part.
// Digests are 64-bit: two different states share one with odds about n^2 / 2^65 for n states
// (below 1e-5 for ten million).
#include <cstdint>

#include "sched/op.h"

namespace racelab::sched {

// How a digest names threads, jobs and parts: thread t is its canonical number, job j (an
// execution's job id) the pair (canonical number of its submitter, its place among that thread's
// submits), part p its place among the parts sorted by their state (p itself without parts).
class StateNames {
 public:
  virtual std::uint64_t thread(ThreadId t) const = 0;
  virtual std::uint64_t job(int job) const = 0;
  virtual std::uint64_t part(int part) const = 0;

 protected:
  ~StateNames() = default;
};

class StateSource {
 public:
  // The subject's shared state: its data structures, threads and jobs named through `names`.
  virtual std::uint64_t shared_digest(const StateNames& names) const = 0;
  // What thread `reader`'s code can read of `var` at this moment (see the conditions above).
  virtual std::uint64_t var_digest(int var, ThreadId reader) const = 0;
  // What the subject holds for part `part` alone, naming no part, thread or job: part of how
  // parts are sorted. Its shared_digest covers it again, with the part named.
  virtual std::uint64_t part_digest(int /*part*/) const { return 0; }

 protected:
  ~StateSource() = default;
};

// Digest mixing: a 64-bit finaliser (splitmix64's) applied to a running value.
inline std::uint64_t state_mix(std::uint64_t h, std::uint64_t v) {
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace racelab::sched

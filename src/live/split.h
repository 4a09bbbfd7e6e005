#pragma once
// One live dpor search over several processes (racelab live torch | python --jobs N, docs/live.md,
// "Many processes"). A live execution costs what the program costs (a second, on real torch), and
// one process runs one execution at a time. dpor's search is sequential (each execution's races
// decide the next ones), so the processes do not share it out: the process the user started (the
// coordinator) runs the one search, fed with executions that N worker processes (this program run
// again with --split-worker) ran ahead from search states it hands them (sched/speculate.h): its
// own next execution's, and those of the alternatives it will come to. Each recording is checked
// choice by choice before it counts, so the search runs exactly one process's executions, in its
// order, with its classes, kinds and first failure; what ran ahead and did not fit is waste, never
// a result. The workers start at once, so that their start (torch's import, CUDA's) overlaps.
//
// Files, in OUT/split/: coordinator.pid, plan.json (the subject's content hash, the deadline,
// --expect deadlock), req-ID.json (a search state to run one execution from; req-ID-root.json:
// the one the search waits for, which workers take first), claim-ID (a worker took it: created
// exclusively, then holds the worker's number), ran-ID.json (what ran: its decisions' count,
// interleaving fingerprint, failure and replay steps, and the recording the search is fed), stop
// (the coordinator is done or was interrupted), worker-K.log and worker-K/ (a worker's terminal
// output and files). A worker whose execution hung (threads stuck in it) ends after its record,
// and another takes its place.
//
// Deterministic: which executions count depends on the search alone, never on which worker ran
// what or how fast; the coordinator replays the first failure itself to report it in full (the
// trace, the stacks, the schedule file), as a single process would have.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "live/search.h"

namespace racelab::live {

// What a split search reports beyond the Outcome: dpor's classes and the strategy as it ran
// ("dpor(unbounded, symmetry), over 4 worker processes (130 executions run for 96)").
struct SplitSearch {
  Outcome outcome;
  sched::Strategy::Classes classes;
  std::string strategy;
};

// racelab live --jobs N (a.jobs > 1; dpor, searching, not replaying): the coordinator's part.
// InputError where a worker process cannot be started.
SplitSearch search_split(const SearchOptions& a, const JobInfo& info, Subject& subject,
                         const std::function<bool()>& stop,
                         const std::function<void(std::uint64_t, std::uint64_t)>& progress);

// racelab live ... --split-worker DIR/worker-K: a worker's part; returns its exit code (the
// process ends with std::_Exit after it: a hung execution leaves threads stuck).
int split_worker(const SearchOptions& a, const JobInfo& info, Subject& subject);

}  // namespace racelab::live

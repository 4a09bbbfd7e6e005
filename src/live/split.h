#pragma once
// One live dpor search over several processes (racelab live torch | python --jobs N, docs/live.md,
// "Many processes"). A live execution costs what the program costs (a second, on real torch), and
// one process runs one execution at a time; the search's executions are independent, so they
// spread over processes as the model's split spreads them over threads (docs/scale.md): the
// process the user started (the coordinator) enumerates the top part of dpor's tree to its first
// branching decisions (Splitter::branching_top_part), one short execution per leaf, and N worker
// processes (this program run again with --split-worker) search the subtrees below its leaves,
// each subtree alone, with the same classes and kinds a single process finds and a few redundant
// (sleep-set blocked) executions more. The workers start at once, so that their start (torch's
// import, CUDA's) overlaps the top part's enumeration.
//
// Files, in OUT/split/: coordinator.pid, subtrees.json (the coordinator's: the subtrees as
// Splitter::save writes them, the subject's content hash, the execution cap, the deadline),
// claim-I (a worker took subtree I: created exclusively), piece-I.json (a worker's record of
// subtree I: each execution's decisions, interleaving fingerprint and whether it was redundant,
// whether it ran to its end, its first failure's kind and decisions), failed-I (subtree I
// failed: no worker takes a subtree after it), stop (the coordinator was interrupted or its own
// execution hung), worker-K.log and worker-K/ (a worker's terminal output and files).
//
// Deterministic: the subtrees are the top part's leaves in order, and the result is folded in
// that order (sched::SplitOrder), as one process running them one after another would count them
// and stop at its first failure, whichever worker ran what and however fast. The failure kept is
// the first in that order, and the coordinator replays its decisions to report it in full (the
// trace, the stacks, the schedule file), as a single process would have.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "live/search.h"

namespace racelab::live {

// What a split search reports beyond the Outcome: dpor's classes over every subtree and the
// strategy as it ran ("dpor(unbounded), split at 3 branching decisions into 12 subtrees, 4
// worker processes").
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

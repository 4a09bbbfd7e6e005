#pragma once
// The warm phase of a training run on one device: the iterations in which its memory is expected
// to grow, after which any device allocation means memory did not settle (docs/allocator.md,
// Verdict).
//
// Policy. A caching allocator grows while the program meets new demands and then serves every
// iteration from its cache. Two demands are met once per run by design:
//   - each optimizer's first step on the device (AdamW allocates its state there, lazily);
//   - the first step in which all of the device's drafters run at once: with several drafter
//     threads on one device, their working sets add up the first time they overlap.
// The warm phase is every iteration up to the last of these. A drafter is a thread that takes a
// step of an optimizer after that optimizer's first (a thread that only takes first steps, such
// as a main thread running a sequential warmup, warms optimizers up for others). The first step
// with all drafters running is, for every drafter, its first step after the iteration in which
// the last drafter took its first step: the last drafter's first step may have run alone (each
// thread warming itself up in turn) or alongside the others, and the step after it is the first
// one, in every drafter, certain to run with all of them started. With one drafter it is that
// drafter's first step.
//
// racelab knows the phase where the capture recorded which optimizers stepped on the device from
// which threads (stats JSON "racelab-alloc-stats" version 2, src/live/python/racelab.py). Where it
// cannot know (a trace without that record: the shared fixtures, captures of version 1, windows of
// allocations) it assumes the fixtures' rule, a single-thread loop warmed up in its first
// iteration, and says so. --settle K replaces the phase by the first K iterations.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace racelab::alloc {

// One optimizer step the capture recorded in an iteration.
struct Step {
  std::int64_t optimizer = 0;      // the capture's number for the optimizer (order of first steps)
  std::string optimizer_class;     // "AdamW"
  std::string thread;              // the stepping thread's name
  std::int64_t thread_number = 0;  // the capture's number for that thread (names may repeat)
  bool first = false;              // the optimizer's first step on this device
};

struct WarmPhase {
  enum class Source { kCapture, kAssumed, kSettle };
  Source source = Source::kAssumed;
  std::size_t rows = 1;  // iterations [0, rows) are the warm phase (at most the run's)
  bool ended = true;     // false: the run ended inside it (a drafter took no step after it began)
  std::size_t drafters = 0;
  std::string text;                  // "iterations 0-5", "assumed: iteration 0", "--settle 3: ..."
  std::string description;           // how it was found, or what was assumed and why
  std::vector<std::string> reasons;  // per iteration inside it: why growth there is expected
};

// The warm phase of a run of `labels.size()` iterations (or windows: `unit`), from each
// iteration's steps (`row_steps`, one list per iteration) where `unknown` is empty; otherwise
// `unknown` says why the steps are not known and the phase is assumed. `settle`, where given, is
// the user's override (--settle K).
WarmPhase find_warm_phase(const std::vector<std::vector<Step>>& row_steps,
                          const std::vector<std::string>& labels, const std::string& unit,
                          const std::string& unknown, std::optional<std::size_t> settle);

}  // namespace racelab::alloc

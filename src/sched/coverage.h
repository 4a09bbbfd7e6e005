#pragma once
// Interleaving coverage of a sampling exploration: how many distinct interleaving classes it has
// seen, and an estimate of how many it has not.
//
// A class is fingerprinted by its per-resource hand-off order: for every shared resource (a mutex,
// an event, a queue, a job, a shared variable, and the variables a step's local code declares with
// Context::touch), the sequence of threads that wrote it (a lock, an unlock, a set, a submit...),
// consecutive writes of one thread counted once, and between two writes the set of threads that
// only read it (a read, a wait). Two executions that order every pair of conflicting accesses
// alike get the same fingerprint, so it is a function of the Mazurkiewicz class that dpor counts
// (an unlock and the next lock are one hand-off here where dpor orders them too, which can only
// merge classes). It needs nothing but the trace, so it works for every strategy.
//
// Estimates (for random, pct, pos, surw; a dfs or dpor search that exhausts needs none):
// - Good-Turing: the share of executions whose class was seen exactly once (f1 / n) estimates the
//   probability that the next execution shows a class not yet seen (Good, Biometrika 1953).
// - Chao1: S_obs + f1^2 / (2 f2) (bias-corrected f1 (f1 - 1) / 2 when f2 = 0) estimates the number
//   of classes the strategy can reach, seen or not (Chao, Scand. J. Statist. 1984).
// Both are about the strategy's sampling distribution: classes it almost never produces stay
// invisible to them.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/execution.h"

namespace racelab::sched {

// The resource an operation acts on, as a key unique across object families; nullopt for
// operations on none (start, user-defined points).
std::optional<std::uint64_t> resource_key(const Op& op);
// The key of a variable touched by a step's local code (the same as a read or write of it).
std::uint64_t touch_key(const Touch& touch);

// One access to a shared resource, for the fingerprint: the resource's key, the thread (any
// number that names it alike in every execution), and whether it writes (a lock, an unlock, a
// set, a submit...) or only reads (a read, a wait, a join).
struct Access {
  std::uint64_t resource = 0;
  std::uint64_t thread = 0;
  bool write = false;
};
// The per-resource hand-off order of accesses given in execution order, hashed (FNV-1a over the
// sorted resources). Model and live executions both reduce to this.
std::uint64_t handoff_fingerprint(std::vector<Access> accesses);
// The same for a model execution: its steps' operations and the variables their code touched.
std::uint64_t handoff_fingerprint(const Execution& exec);

// Good-Turing estimate of the unseen probability mass: f1 / n (0 when n is 0).
double good_turing_unseen(std::uint64_t executions, std::uint64_t seen_once);
// Chao1 estimate of the classes a sampler can reach: seen + f1^2 / (2 f2), or
// seen + f1 (f1 - 1) / 2 when f2 is 0.
double chao1(std::uint64_t seen, std::uint64_t seen_once, std::uint64_t seen_twice);

// What reports show of a Coverage.
struct CoverageSummary {
  std::uint64_t executions = 0;
  std::uint64_t classes = 0;  // distinct fingerprints (a lower bound when saturated)
  std::uint64_t seen_once = 0;
  std::uint64_t seen_twice = 0;
  bool saturated = false;
  double unseen_probability = 0;  // Good-Turing
  double estimated_classes = 0;   // Chao1
};

// The terminal's line, e.g. "interleaving classes: 350 seen in 20000 executions (per-resource
// hand-off order); 47 seen once: next execution new with p ~ 0.00235 (Good-Turing), ~250 classes
// in all (Chao1), ~50 unseen"; the estimates only for a sampling run (`sampling`).
std::string coverage_line(const CoverageSummary& c, bool sampling);

class Coverage {
 public:
  // Beyond this many distinct classes new fingerprints are no longer stored (about 40 MB): the
  // count is then a lower bound and the estimates are not given.
  static constexpr std::size_t kMaxClasses = std::size_t{1} << 20;

  void add(std::uint64_t fingerprint);
  // `count` more executions of one class (a shard's counts, read back by racelab merge).
  void add(std::uint64_t fingerprint, std::uint64_t count);
  void merge(const Coverage& other);

  std::uint64_t executions() const { return executions_; }
  std::uint64_t classes() const { return counts_.size(); }
  std::uint64_t seen_once() const;
  std::uint64_t seen_twice() const;
  bool saturated() const { return saturated_; }
  double unseen_probability() const { return good_turing_unseen(executions_, seen_once()); }
  double estimated_classes() const { return chao1(classes(), seen_once(), seen_twice()); }
  CoverageSummary summary() const;
  // Every class seen and how many executions showed it; a shard's report carries them so that
  // merged shards count exactly what one run counts.
  const std::unordered_map<std::uint64_t, std::uint64_t>& counts() const { return counts_; }
  void mark_saturated() { saturated_ = true; }

 private:
  std::unordered_map<std::uint64_t, std::uint64_t> counts_;
  std::uint64_t executions_ = 0;
  bool saturated_ = false;
};

}  // namespace racelab::sched

#pragma once
// The strategies, chosen by name in one place (make_strategy). Each lives in its own file.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sched/strategy.h"

namespace racelab::sched {

enum class StrategyKind { kRandom, kPct, kDfs };

const char* strategy_name(StrategyKind kind);
// Throws InputError listing the valid names.
StrategyKind parse_strategy(const std::string& name);

struct StrategyParams {
  StrategyKind kind = StrategyKind::kPct;
  std::uint64_t seed = 1;
  int depth = 3;            // pct
  int max_preemptions = 2;  // dfs
};

std::unique_ptr<Strategy> make_random(std::uint64_t seed);
// PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte: "A Randomized Scheduler with Probabilistic
// Guarantees of Finding Bugs", ASPLOS 2010).
std::unique_ptr<Strategy> make_pct(std::uint64_t seed, int depth);
// PCT learns the execution length k from its first executions, then keeps it.
inline constexpr std::uint64_t kPctCalibration = 64;
// Depth-first search of every schedule with at most `max_preemptions` preemptions (CHESS-style
// iterative context bounding, Musuvathi & Qadeer, PLDI 2007).
std::unique_ptr<Strategy> make_dfs(int max_preemptions);

// Splitting the DFS search tree (parallel and sharded exploration). A prefix is the first
// decisions of an execution; the executions of the bounded DFS that share a prefix are contiguous
// in its order, so the subtrees of the prefixes, in order, are exactly the single-worker search.
struct DfsFrame {
  std::vector<ThreadId> options;  // enabled threads in the order tried (the previous one first)
  std::size_t chosen = 0;
  int preemptions_before = 0;  // preemptions taken by the choices above this frame
  ThreadId previous = kNoThread;
  bool previous_enabled = false;
};
using DfsPrefix = std::vector<DfsFrame>;
// A DFS that branches only on the first `depth` decisions; after each execution it appends that
// execution's prefix to `out`. One execution per prefix, in DFS order.
std::unique_ptr<Strategy> make_dfs_prefixes(int max_preemptions, std::size_t depth,
                                            std::vector<DfsPrefix>* out);
// The bounded DFS restricted to the executions that start with `prefix`.
std::unique_ptr<Strategy> make_dfs_subtree(int max_preemptions, DfsPrefix prefix);
std::unique_ptr<Strategy> make_strategy(const StrategyParams& params);

// A recorded step to replay: the thread's name and the operation's text, as schedule files hold.
struct ReplayStep {
  std::string thread;
  std::string op;
};

enum class OnDivergence { kFail, kRandom };

// Replay as a checked prefix (as in Coyote): follows `steps`, checking at each step that the named
// thread is enabled and about to perform the recorded operation. On a mismatch it throws
// ReplayDivergence (kFail) or continues under `fallback` (kRandom). After the prefix it continues
// under `fallback`, or, when there is none, runs the lowest enabled thread without preempting.
class ReplayDivergence : public StrategyError {
 public:
  ReplayDivergence(std::uint64_t step, std::string expected, std::string got);
  std::uint64_t step;
};

class ReplayStrategy : public Strategy {
 public:
  ReplayStrategy(std::vector<ReplayStep> steps, OnDivergence on_divergence,
                 std::unique_ptr<Strategy> fallback = nullptr);
  bool begin_execution(std::uint64_t index) override;
  ThreadId pick(const Decision& d) override;
  std::optional<ThreadId> awaited(const Decision& d) const override;
  std::string describe() const override;
  bool diverged() const { return diverged_at_.has_value(); }
  std::optional<std::uint64_t> diverged_at() const { return diverged_at_; }

 private:
  std::vector<ReplayStep> steps_;
  OnDivergence on_divergence_;
  std::unique_ptr<Strategy> fallback_;
  std::optional<std::uint64_t> diverged_at_;
};

// Follows a list of thread choices while they are enabled; afterwards (or when a choice is not
// enabled) keeps the previous thread running if it can, else the lowest enabled thread. Shrinking
// uses it to try schedules with fewer preemptions.
class GuidedStrategy : public Strategy {
 public:
  explicit GuidedStrategy(std::vector<ThreadId> choices) : choices_(std::move(choices)) {}
  bool begin_execution(std::uint64_t) override { return true; }
  ThreadId pick(const Decision& d) override;
  std::string describe() const override { return "guided"; }

 private:
  std::vector<ThreadId> choices_;
};

}  // namespace racelab::sched

// DFS with a preemption bound: stateless depth-first enumeration of schedules (CHESS-style
// iterative context bounding, Musuvathi & Qadeer, PLDI 2007).
//
// Each scheduling step is a frame holding the enabled threads in the order they are tried: the
// previously running thread first (continuing it is never a preemption), then the others by id.
// An execution replays the stack's choices and extends it with first options; the next execution
// advances the deepest frame that still has an alternative within the preemption bound. When the
// stack empties the bounded space has been covered: exhausted() becomes true. The subject must be
// deterministic: a replayed prefix that reaches a different enabled set is reported, not ignored.
//
// Split (--jobs, --shard): a prefix is the first decisions of an execution; the executions that
// share a prefix are contiguous in DFS order, so the subtrees of the prefixes, in order, are
// exactly the single-worker search. The top part is cut at the first depth with several subtrees
// per worker, and within one process a running subtree gives part of itself to an idle worker
// (split()): bounded DFS spaces are very uneven, the subtree that never preempts early holding
// most of them.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "sched/strategies/strategies.h"

namespace racelab::sched {
namespace {

struct Frame {
  std::vector<ThreadId> options;  // enabled threads in the order tried (the previous one first)
  std::size_t chosen = 0;
  int preemptions_before = 0;  // preemptions taken by the choices above this frame
  ThreadId previous = kNoThread;
  bool previous_enabled = false;
};
// The first decisions of an execution.
using Prefix = std::vector<Frame>;

// The bounded DFS restricted to the executions that start with a prefix.
class DfsPrefixSubtree : public Subtree {
 public:
  DfsPrefixSubtree(int bound, Prefix prefix) : bound_(bound), prefix_(std::move(prefix)) {}
  std::unique_ptr<SubtreeSearch> search() const override;

 private:
  int bound_;
  Prefix prefix_;
};

class DfsStrategy : public SubtreeSearch {
 public:
  // `prefix`: decisions that never change (a subtree of the full search); `max_depth`: decisions
  // beyond it are not branched on (prefix enumeration); `prefixes_out`: receives the stack at the
  // end of every execution (each one a prefix of at most max_depth decisions, in DFS order).
  DfsStrategy(int max_preemptions, Prefix prefix = {}, std::size_t max_depth = SIZE_MAX,
              std::vector<Prefix>* prefixes_out = nullptr)
      : bound_(std::max(0, max_preemptions)),
        stack_(std::move(prefix)),
        fixed_(stack_.size()),
        max_depth_(max_depth),
        prefixes_out_(prefixes_out) {}

  bool begin_execution(std::uint64_t) override {
    depth_ = 0;
    ++executions_;
    if (!started_) {
      started_ = true;
      chosen_at_.assign(stack_.size(), executions_);
      return true;
    }
    while (stack_.size() > fixed_) {
      Frame& f = stack_.back();
      for (std::size_t i = f.chosen + 1; i < f.options.size(); ++i) {
        if (allowed(f, i)) {
          f.chosen = i;
          chosen_at_.back() = executions_;
          return true;
        }
      }
      stack_.pop_back();
      chosen_at_.pop_back();
    }
    exhausted_ = true;
    return false;
  }

  void end_execution() override {
    if (prefixes_out_) prefixes_out_->push_back(stack_);
  }

  ThreadId pick(const Decision& d) override {
    if (depth_ < stack_.size()) {
      const Frame& f = stack_[depth_++];
      if (f.options.size() != d.enabled.size() ||
          !std::is_permutation(f.options.begin(), f.options.end(), d.enabled.begin())) {
        throw Nondeterminism("dfs", d, f.options, d.enabled);
      }
      return f.options[f.chosen];
    }
    if (depth_ >= max_depth_) {  // beyond the enumerated depth: the first option, not recorded
      ++depth_;
      return d.previous_enabled ? d.previous : d.enabled.front();
    }
    Frame f;
    f.previous = d.previous;
    f.previous_enabled = d.previous_enabled;
    if (d.previous_enabled) f.options.push_back(d.previous);
    for (ThreadId t : d.enabled) {
      if (!(d.previous_enabled && t == d.previous)) f.options.push_back(t);
    }
    if (!stack_.empty()) {
      const Frame& parent = stack_.back();
      f.preemptions_before =
          parent.preemptions_before + (is_preemption(parent, parent.chosen) ? 1 : 0);
    }
    f.chosen = 0;  // the first option is never a preemption
    stack_.push_back(std::move(f));
    chosen_at_.push_back(executions_);
    ++depth_;
    return stack_.back().options[0];
  }

  Progress progress() const override { return {.exhausted = exhausted_}; }

  // The pieces given away come, in the single-worker order, after what the owner keeps under the
  // chosen frame's current choice; the executions already run under that choice estimate how much
  // that is. The shallowest open frame whose estimate is at most half of `room` gives the largest
  // pieces that are still likely to start within the budget (an uncapped search: the shallowest).
  // The owner then keeps only what is below that frame's choice, so the alternatives of the frames
  // above it go too, after it, deepest first, as the single worker would back up to them.
  Subtrees split(std::uint64_t room) override {
    Subtrees given;
    if (!started_ || exhausted_ || room == 0) return given;  // room 0: nothing more can count
    std::size_t at = stack_.size();
    for (std::size_t d = fixed_; d < stack_.size() && at == stack_.size(); ++d) {
      if (executions_ - chosen_at_[d] <= room / 2 && has_alternative(stack_[d])) at = d;
    }
    if (at == stack_.size()) return given;
    for (std::size_t d = at + 1; d-- > fixed_;) {
      const Frame& f = stack_[d];
      for (std::size_t i = f.chosen + 1; i < f.options.size(); ++i) {
        if (!allowed(f, i)) continue;
        Prefix p(stack_.begin(), stack_.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        p.back().chosen = i;
        given.push_back(std::make_shared<DfsPrefixSubtree>(bound_, std::move(p)));
      }
    }
    fixed_ = at + 1;
    return given;
  }

  std::string describe() const override { return fmt::format("dfs(max_preemptions={})", bound_); }

 private:
  static bool is_preemption(const Frame& f, std::size_t i) {
    return f.previous_enabled && f.options[i] != f.previous;
  }
  bool allowed(const Frame& f, std::size_t i) const {
    return f.preemptions_before + (is_preemption(f, i) ? 1 : 0) <= bound_;
  }
  bool has_alternative(const Frame& f) const {
    for (std::size_t i = f.chosen + 1; i < f.options.size(); ++i) {
      if (allowed(f, i)) return true;
    }
    return false;
  }

  int bound_;
  std::vector<Frame> stack_;
  std::size_t fixed_ = 0;
  std::size_t max_depth_ = SIZE_MAX;
  std::vector<Prefix>* prefixes_out_ = nullptr;
  std::size_t depth_ = 0;
  std::uint64_t executions_ = 0;          // begun so far
  std::vector<std::uint64_t> chosen_at_;  // per frame: the execution its current choice began
  bool started_ = false;
  bool exhausted_ = false;
};

std::unique_ptr<SubtreeSearch> DfsPrefixSubtree::search() const {
  return std::make_unique<DfsStrategy>(bound_, prefix_);
}

// The top part: the prefixes of the first `depth` decisions, one execution each.
class DfsTop : public TopPart {
 public:
  DfsTop(int bound, std::size_t depth)
      : bound_(bound), depth_(depth), enumerate_(bound, {}, depth, &prefixes_) {}
  Strategy& enumerate() override { return enumerate_; }
  // Several subtrees per worker, or no execution reaches the depth: the prefixes are whole
  // executions, deeper adds nothing.
  bool deep_enough(std::uint64_t workers) const override {
    return prefixes_.size() >= std::max<std::uint64_t>(8, 4 * workers) ||
           std::all_of(prefixes_.begin(), prefixes_.end(),
                       [&](const Prefix& p) { return p.size() < depth_; });
  }
  Subtrees subtrees() const override {
    Subtrees out;
    for (const Prefix& p : prefixes_) out.push_back(std::make_shared<DfsPrefixSubtree>(bound_, p));
    return out;
  }

 private:
  int bound_;
  std::size_t depth_;
  std::vector<Prefix> prefixes_;
  DfsStrategy enumerate_;
};

class DfsSplitter : public Splitter {
 public:
  explicit DfsSplitter(int bound) : bound_(bound) {}
  std::unique_ptr<TopPart> top_part(std::size_t depth) const override {
    return std::make_unique<DfsTop>(bound_, depth);
  }
  std::string describe(std::size_t, std::size_t) const override {
    return DfsStrategy(bound_).describe();
  }
  bool resplits() const override { return true; }
  bool counts_classes() const override { return false; }

 private:
  int bound_;
};

}  // namespace

std::unique_ptr<Strategy> make_dfs(int max_preemptions) {
  return std::make_unique<DfsStrategy>(max_preemptions);
}

std::unique_ptr<Splitter> make_dfs_splitter(int max_preemptions) {
  return std::make_unique<DfsSplitter>(max_preemptions);
}

}  // namespace racelab::sched

// DFS with a preemption bound: stateless depth-first enumeration of schedules (CHESS-style
// iterative context bounding, Musuvathi & Qadeer, PLDI 2007).
//
// Each scheduling step is a frame holding the enabled threads in the order they are tried: the
// previously running thread first (continuing it is never a preemption), then the others by id.
// An execution replays the stack's choices and extends it with first options; the next execution
// advances the deepest frame that still has an alternative within the preemption bound. When the
// stack empties the bounded space has been covered: exhausted() becomes true. The subject must be
// deterministic: a replayed prefix that reaches a different enabled set is reported, not ignored.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "sched/strategies/strategies.h"

namespace racelab::sched {
namespace {

using Frame = DfsFrame;

class DfsStrategy : public DfsWorker {
 public:
  // `prefix`: decisions that never change (a subtree of the full search); `max_depth`: decisions
  // beyond it are not branched on (prefix enumeration); `prefixes_out`: receives the stack at the
  // end of every execution (each one a prefix of at most max_depth decisions, in DFS order).
  DfsStrategy(int max_preemptions, DfsPrefix prefix = {}, std::size_t max_depth = SIZE_MAX,
              std::vector<DfsPrefix>* prefixes_out = nullptr)
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
        throw StrategyError(fmt::format(
            "dfs: the subject is not deterministic: step {} had {} enabled threads when first "
            "explored and {} now",
            d.step, f.options.size(), d.enabled.size()));
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

  bool exhausted() const override { return exhausted_; }

  // The pieces given away come, in the single-worker order, after what the owner keeps under the
  // chosen frame's current choice; the executions already run under that choice estimate how much
  // that is. The shallowest open frame whose estimate is at most half of `room` gives the largest
  // pieces that are still likely to start within the budget (an uncapped search: the shallowest).
  // The owner then keeps only what is below that frame's choice, so the alternatives of the frames
  // above it go too, after it, deepest first, as the single worker would back up to them.
  std::vector<DfsPrefix> split(std::uint64_t room) override {
    std::vector<DfsPrefix> given;
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
        DfsPrefix p(stack_.begin(), stack_.begin() + static_cast<std::ptrdiff_t>(d) + 1);
        p.back().chosen = i;
        given.push_back(std::move(p));
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
  std::vector<DfsPrefix>* prefixes_out_ = nullptr;
  std::size_t depth_ = 0;
  std::uint64_t executions_ = 0;          // begun so far
  std::vector<std::uint64_t> chosen_at_;  // per frame: the execution its current choice began
  bool started_ = false;
  bool exhausted_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_dfs(int max_preemptions) {
  return std::make_unique<DfsStrategy>(max_preemptions);
}

std::unique_ptr<Strategy> make_dfs_prefixes(int max_preemptions, std::size_t depth,
                                            std::vector<DfsPrefix>* out) {
  return std::make_unique<DfsStrategy>(max_preemptions, DfsPrefix{}, depth, out);
}

std::unique_ptr<Strategy> make_dfs_subtree(int max_preemptions, DfsPrefix prefix) {
  return std::make_unique<DfsStrategy>(max_preemptions, std::move(prefix));
}

std::unique_ptr<DfsWorker> make_dfs_worker(int max_preemptions, DfsPrefix prefix) {
  return std::make_unique<DfsStrategy>(max_preemptions, std::move(prefix));
}

}  // namespace racelab::sched

// PCT: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).
//
// Each execution gives the threads distinct random priorities d, d+1, ..., d+n-1 and picks d-1
// change points uniformly among the first k steps. The enabled thread with the highest priority
// runs; when the step count reaches change point j (1 <= j < d), the thread that would run drops to
// priority j, below every initial priority. A bug of depth d (d ordering constraints) is found with
// probability at least 1/(n * k^(d-1)) per execution. k is the longest of the executions seen so
// far among the first kPctCalibration ones (the paper assumes it is known; the first executions
// measure it). Freezing k after them makes execution i depend only on i and those calibration
// executions, so workers and shards that run the calibration first agree on every execution.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "sched/strategies/strategies.h"
#include "util/rng.h"

namespace racelab::sched {
namespace {

class PctStrategy : public Strategy {
 public:
  PctStrategy(std::uint64_t seed, int depth) : seed_(seed), depth_(std::max(1, depth)) {}

  bool begin_execution(std::uint64_t index) override {
    index_ = index;
    rng_.reseed(execution_seed(seed_, index));
    priorities_.clear();
    change_points_.clear();
    steps_ = 0;
    // k: the longest execution so far. Invariant: change_points_ sorted, each in [1, k].
    const std::uint64_t k = std::max<std::uint64_t>(max_steps_seen_, 1);
    for (int j = 1; j < depth_; ++j) change_points_.push_back(1 + rng_.below(k));
    return true;
  }

  ThreadId pick(const Decision& d) override {
    steps_ = d.step + 1;
    const std::size_t n = d.exec->thread_count();
    if (priorities_.size() != n) assign_priorities(n);
    ThreadId best = pick_highest(d);
    // A change point can coincide with another; each lowers the thread about to run.
    for (std::size_t j = 0; j < change_points_.size(); ++j) {
      if (change_points_[j] == d.step) {
        priorities_[best] = static_cast<std::uint64_t>(j + 1);
        best = pick_highest(d);
      }
    }
    return best;
  }

  void end_execution() override {
    if (index_ < kPctCalibration) max_steps_seen_ = std::max(max_steps_seen_, steps_);
  }

  std::unique_ptr<Strategy> clone() const override {
    auto c = std::make_unique<PctStrategy>(seed_, depth_);
    c->max_steps_seen_ = max_steps_seen_;
    return c;
  }

  std::string describe() const override {
    return fmt::format("pct(depth={}, seed={})", depth_, seed_);
  }

  std::uint64_t calibration() const override { return kPctCalibration; }

 private:
  void assign_priorities(std::size_t n) {
    // Fisher-Yates over d, d+1, ..., d+n-1.
    priorities_.resize(n);
    std::iota(priorities_.begin(), priorities_.end(), static_cast<std::uint64_t>(depth_));
    for (std::size_t i = n; i > 1; --i) std::swap(priorities_[i - 1], priorities_[rng_.below(i)]);
  }

  ThreadId pick_highest(const Decision& d) const {
    ThreadId best = d.enabled.front();
    for (ThreadId t : d.enabled) {
      if (priorities_[t] > priorities_[best]) best = t;
    }
    return best;
  }

  std::uint64_t seed_;
  int depth_;
  std::uint64_t index_ = 0;
  Rng rng_;
  std::vector<std::uint64_t> priorities_;     // per thread; higher runs first
  std::vector<std::uint64_t> change_points_;  // steps at which the running thread is demoted
  std::uint64_t steps_ = 0;
  std::uint64_t max_steps_seen_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_pct(std::uint64_t seed, int depth) {
  return std::make_unique<PctStrategy>(seed, depth);
}

}  // namespace racelab::sched

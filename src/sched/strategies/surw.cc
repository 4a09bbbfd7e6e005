// SURW: selectively uniform random walk (Zhao, Wolff, Mathur, Roychoudhury: "Selectively Uniform
// Concurrency Testing", ASPLOS 2025; also in Fray and shuttle).
//
// Uniform random walk (URW): if thread t has r_t events left, running t next with probability
// r_t / sum(r) over the enabled threads samples every interleaving of the events with the same
// probability (a uniformly random word over the threads' events), where random walk favours the
// interleavings that switch early. SURW applies it *selectively*: each execution picks one shared
// resource as interesting and counts only the events on it, so it samples the orderings of that
// resource's accesses uniformly; a thread chosen runs on through its uninteresting events until
// its next interesting one (or until it blocks), which therefore costs no draw.
//
// The counts r_t are estimates: the first kSurwCalibration executions run as plain random walk and
// record, per thread name and resource, the most events one execution had; later executions use
// them (a thread with none left still has weight 1, so a low estimate never starves it). The
// resources chosen from are those at least two threads touched in calibration, in key order;
// execution i draws its resource and its choices from (seed, i). Like PCT's k, the estimates freeze
// after the calibration, so execution i is the same on every worker and shard that ran it first.
//
// Live subjects record no operations: there a resource is the text of the event after the
// operation's name (as in pos.cc).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sched/coverage.h"
#include "sched/strategies/strategies.h"
#include "util/hash.h"
#include "util/rng.h"

namespace racelab::sched {
namespace {

std::optional<std::uint64_t> pending_resource(const ThreadView& view, ThreadId t) {
  const FootprintView* footprints = view.footprints();
  if (const Op* op = footprints != nullptr ? footprints->pending_op(t) : nullptr)
    return resource_key(*op);
  const std::string text = view.pending_text(t);
  const std::size_t space = text.find(' ');
  if (space == std::string::npos) return std::nullopt;
  return fnv1a64(std::string_view(text).substr(space + 1));
}

class SurwStrategy : public Strategy {
 public:
  explicit SurwStrategy(std::uint64_t seed) : seed_(seed) {}

  bool begin_execution(std::uint64_t index) override {
    rng_.reseed(execution_seed(seed_, index));
    seen_.clear();
    done_.clear();
    committed_ = kNoThread;
    calibrating_ = index < kSurwCalibration;
    interesting_.reset();
    if (!calibrating_ && !shared_.empty()) interesting_ = shared_[rng_.below(shared_.size())];
    return true;
  }

  ThreadId pick(const Decision& d) override {
    const ThreadView& view = *d.exec;
    if (done_.size() < view.thread_count()) done_.resize(view.thread_count(), 0);
    ThreadId t = choose(d);
    const auto r = pending_resource(view, t);
    if (calibrating_ && r) ++seen_[{view.thread_name(t), *r}];
    if (is_interesting(r)) {
      ++done_[t];
      committed_ = kNoThread;  // its interesting event runs now: the next decision draws again
    } else {
      committed_ = t;
    }
    return t;
  }

  void end_execution() override {
    if (!calibrating_) return;
    for (const auto& [key, n] : seen_) {
      std::uint64_t& most = estimate_[key];
      most = std::max(most, n);
      threads_of_[key.second].insert(key.first);
    }
    shared_.clear();
    for (const auto& [resource, names] : threads_of_) {
      if (names.size() >= 2) shared_.push_back(resource);
    }
  }

  std::uint64_t calibration() const override { return kSurwCalibration; }

  std::unique_ptr<Strategy> clone() const override {
    auto c = std::make_unique<SurwStrategy>(seed_);
    c->estimate_ = estimate_;
    c->threads_of_ = threads_of_;
    c->shared_ = shared_;
    return c;
  }

  std::string describe() const override { return fmt::format("surw(seed={})", seed_); }

 private:
  bool is_interesting(const std::optional<std::uint64_t>& r) const {
    if (calibrating_) return true;  // plain random walk: every event is a draw
    if (!interesting_) return r.has_value();
    return r && *r == *interesting_;
  }

  ThreadId choose(const Decision& d) {
    const auto& enabled = d.enabled;
    if (committed_ != kNoThread &&
        std::find(enabled.begin(), enabled.end(), committed_) != enabled.end())
      return committed_;
    if (calibrating_) return enabled[rng_.below(enabled.size())];
    // Weight: the thread's estimated interesting events left, at least 1.
    std::vector<std::uint64_t> weight(enabled.size(), 1);
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < enabled.size(); ++k) {
      const ThreadId t = enabled[k];
      if (interesting_) {
        auto it = estimate_.find({d.exec->thread_name(t), *interesting_});
        const std::uint64_t expected = it == estimate_.end() ? 0 : it->second;
        if (expected > done_[t]) weight[k] = expected - done_[t];
      }
      total += weight[k];
    }
    std::uint64_t x = rng_.below(total);
    for (std::size_t k = 0; k < enabled.size(); ++k) {
      if (x < weight[k]) return enabled[k];
      x -= weight[k];
    }
    return enabled.back();
  }

  std::uint64_t seed_;
  Rng rng_;
  bool calibrating_ = true;
  // Learned in calibration, frozen after it. Invariant: shared_ sorted, each touched by >= 2
  // threads; estimate_[(thread name, resource)] >= 1 for every pair seen.
  std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> estimate_;
  std::map<std::uint64_t, std::set<std::string>> threads_of_;
  std::vector<std::uint64_t> shared_;
  // This execution.
  std::optional<std::uint64_t> interesting_;
  std::vector<std::uint64_t> done_;  // per thread: interesting events it has run
  ThreadId committed_ = kNoThread;   // chosen for its next interesting event, running up to it
  std::map<std::pair<std::string, std::uint64_t>, std::uint64_t> seen_;  // calibration counts
};

}  // namespace

std::unique_ptr<Strategy> make_surw(std::uint64_t seed) {
  return std::make_unique<SurwStrategy>(seed);
}

}  // namespace racelab::sched

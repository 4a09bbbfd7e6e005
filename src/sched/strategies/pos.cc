// POS: partial-order sampling (Yuan, Yang, Gu: "Partial Order Aware Concurrency Sampling", CAV
// 2018).
//
// Every pending event (a thread's next operation) carries a random priority, and the enabled
// thread whose event has the highest priority runs. After an event runs, the thread's next event
// draws a fresh priority, and so does every pending event that races with the one that ran: the
// same resource, not both reads (for model subjects the executed step's Context::touch footprint
// counts too). Events that do not race keep their priorities, so the relative order of independent
// events is never re-drawn. Random walk samples interleavings, so a partial order with few
// interleavings (a thread delayed past many independent events of the others) gets a probability
// that falls exponentially with their number; POS re-draws only the orderings of racing events,
// and the paper bounds each partial order's probability below independently of them.
//
// Live subjects record no operations (FootprintView::pending_op is nullptr): there a pending
// event's resource is its text after the operation's name ("lock compile_lock" -> compile_lock),
// and every two events on one resource race.
//
// Execution i draws from its own generator, seeded from (seed, i), like random: it needs no
// calibration and splits across workers and shards as it is.
#include <fmt/format.h>

#include <optional>
#include <string_view>
#include <vector>

#include "sched/coverage.h"
#include "sched/strategies/strategies.h"
#include "util/hash.h"
#include "util/rng.h"

namespace racelab::sched {
namespace {

struct Access {
  std::uint64_t resource = 0;
  bool write = true;
};

// What t's pending event accesses; nullopt for an event on no resource (start, a point).
// `footprints`: view's (ThreadView::footprints, fetched once per decision), nullptr where it
// records none.
std::optional<Access> pending_access(const ThreadView& view, const FootprintView* footprints,
                                     ThreadId t) {
  if (const Op* op = footprints != nullptr ? footprints->pending_op(t) : nullptr) {
    auto r = resource_key(*op);
    if (!r) return std::nullopt;
    return Access{*r, op->kind != OpKind::kRead && op->kind != OpKind::kEventWait &&
                          op->kind != OpKind::kWaitJob};
  }
  const std::string text = view.pending_text(t);
  const std::size_t space = text.find(' ');
  if (space == std::string::npos) return std::nullopt;
  return Access{fnv1a64(std::string_view(text).substr(space + 1)), true};
}

bool races(const Access& a, const Access& b) {
  return a.resource == b.resource && (a.write || b.write);
}

class PosStrategy : public Strategy {
 public:
  explicit PosStrategy(std::uint64_t seed) : seed_(seed) {}

  bool begin_execution(std::uint64_t index) override {
    rng_.reseed(execution_seed(seed_, index));
    priority_.clear();
    last_ = kNoThread;
    executed_.clear();
    return true;
  }

  ThreadId pick(const Decision& d) override {
    const ThreadView& view = *d.exec;
    const std::size_t n = view.thread_count();
    while (priority_.size() < n) priority_.push_back(rng_.next());  // a new thread's first event
    if (last_ != kNoThread) reprioritise(d);
    ThreadId best = d.enabled.front();
    for (ThreadId t : d.enabled) {
      if (priority_[t] > priority_[best]) best = t;
    }
    last_ = best;
    executed_.clear();
    if (auto a = pending_access(view, view.footprints(), best)) executed_.push_back(*a);
    return best;
  }

  std::string describe() const override { return fmt::format("pos(seed={})", seed_); }
  std::unique_ptr<Strategy> clone() const override { return std::make_unique<PosStrategy>(seed_); }

 private:
  // After last_'s event ran: its next event is new, and the pending events racing with the one
  // that ran are re-drawn (in thread order, so that the draws are deterministic).
  void reprioritise(const Decision& d) {
    const ThreadView& view = *d.exec;
    const FootprintView* footprints = view.footprints();
    if (d.step > 0 && footprints != nullptr) {
      for (const Touch& t : footprints->step_touches(d.step - 1))
        executed_.push_back({touch_key(t), t.write});
    }
    priority_[last_] = rng_.next();
    if (executed_.empty()) return;
    for (ThreadId t = 0; t < static_cast<ThreadId>(view.thread_count()); ++t) {
      if (t == last_ || view.finished(t)) continue;
      const auto a = pending_access(view, footprints, t);
      if (!a) continue;
      for (const Access& e : executed_) {
        if (races(*a, e)) {
          priority_[t] = rng_.next();
          break;
        }
      }
    }
  }

  std::uint64_t seed_;
  Rng rng_;
  std::vector<std::uint64_t> priority_;  // per thread: its pending event's; higher runs first
  ThreadId last_ = kNoThread;            // the thread picked at the previous decision
  std::vector<Access> executed_;         // what last_'s event accessed
};

}  // namespace

std::unique_ptr<Strategy> make_pos(std::uint64_t seed) {
  return std::make_unique<PosStrategy>(seed);
}

}  // namespace racelab::sched

// Random: each step picks uniformly among the enabled threads. Execution i draws from its own
// generator, seeded from (seed, i), so any execution can be re-run alone.
#include <fmt/format.h>

#include "sched/strategies/strategies.h"
#include "util/rng.h"

namespace racelab::sched {
namespace {

class RandomStrategy : public Strategy {
 public:
  explicit RandomStrategy(std::uint64_t seed) : seed_(seed) {}
  bool begin_execution(std::uint64_t index) override {
    rng_.reseed(execution_seed(seed_, index));
    return true;
  }
  ThreadId pick(const Decision& d) override { return d.enabled[rng_.below(d.enabled.size())]; }
  std::string describe() const override { return fmt::format("random(seed={})", seed_); }
  std::unique_ptr<Strategy> clone() const override {
    return std::make_unique<RandomStrategy>(seed_);
  }

 private:
  std::uint64_t seed_;
  Rng rng_;
};

}  // namespace

std::unique_ptr<Strategy> make_random(std::uint64_t seed) {
  return std::make_unique<RandomStrategy>(seed);
}

}  // namespace racelab::sched

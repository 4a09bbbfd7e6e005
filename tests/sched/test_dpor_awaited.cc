// dpor's awaited reads (sched::Touch::awaited: a live guarded point, e.g. a Python queue's get
// that waited for the put of its item): ordered after the write they read, never reversed with
// it, and no obstacle to reversing two writers of one order (two gets).
#include "catch.h"
#include "sched/strategies/dpor_events.h"

namespace racelab::sched {
namespace {

constexpr std::int32_t kGets = 1;  // the order of the gets
constexpr std::int32_t kItem = 2;  // the second item (put by thread 0 after its own get)

void step(dpor::EventLog& log, ThreadId t, std::vector<Touch> touches) {
  log.append(t, Op{OpKind::kPoint, -1, -1}, 0, touches);
}

TEST_CASE("an awaited read follows its write and is never a race with it", "[dpor]") {
  dpor::EventLog log;
  log.reset(2, 0);
  step(log, 0, {{kItem, true}});                        // 0: put item 1
  step(log, 1, {{kGets, true}, {kItem, false, true}});  // 1: get, awaited item 1
  CHECK(log.happens_before(0, 1));
  CHECK(log.take_races().empty());
  // A plain read of the same write is a race (a timed get could have run first and timed out).
  log.reset(2, 0);
  step(log, 0, {{kItem, true}});
  step(log, 1, {{kItem, false}});
  CHECK(log.take_races().size() == 1);
}

TEST_CASE("two gets race although the second awaited a put made after the first", "[dpor]") {
  // Thread 0 gets item 0 and then puts item 1; thread 1's get awaits item 1. Run first, thread
  // 1's get would have taken item 0: the two gets are a race, which the awaited put between them
  // does not order (a semaphore's second acquire awaiting the first holder's release, likewise).
  dpor::EventLog log;
  log.reset(2, 0);
  step(log, 0, {{kGets, true}});                        // 0: get item 0
  step(log, 0, {{kItem, true}});                        // 1: put item 1
  step(log, 1, {{kGets, true}, {kItem, false, true}});  // 2: get, awaited item 1
  const auto races = log.take_races();
  REQUIRE(races.size() == 1);
  CHECK(races[0].earlier == 0);
  CHECK(races[0].later == 2);
  CHECK(log.initials(races[0]) == std::vector<ThreadId>{1});
}

TEST_CASE("a thread blocked at a guarded point races with the last writer of what it declares",
          "[dpor]") {
  dpor::EventLog log;
  log.reset(2, 0);
  step(log, 0, {{kGets, true}});  // thread 0 took the only item; thread 1 waits at its get
  const std::vector<Touch> pending = {{kGets, true}};
  log.add_blocked(1, Op{OpKind::kPoint, -1, -1}, pending);
  const auto races = log.take_races();
  REQUIRE(races.size() == 1);
  CHECK(races[0].earlier == 0);
  CHECK(races[0].later_thread == 1);
}

}  // namespace
}  // namespace racelab::sched

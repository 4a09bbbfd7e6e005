// Following a model schedule on a live program: the strategy's choices (the name mapping is the
// Python bridge's: tests/live/test_follow.cc).
#include <algorithm>
#include <string>
#include <vector>

#include "catch.h"
#include "sched/strategies/strategies.h"

namespace sched = racelab::sched;

namespace {

// A live program as the strategy sees it: names, pending operations, finished threads.
struct View : sched::ThreadView {
  std::vector<std::string> names, pending;
  std::vector<bool> done;
  std::size_t thread_count() const override { return names.size(); }
  const std::string& thread_name(sched::ThreadId t) const override { return names[t]; }
  bool finished(sched::ThreadId t) const override { return done[t]; }
  std::string pending_text(sched::ThreadId t) const override { return pending[t]; }
};

sched::ThreadId pick(sched::FollowStrategy& s, const View& v, std::vector<sched::ThreadId> enabled,
                     sched::ThreadId previous = sched::kNoThread) {
  sched::Decision d;
  d.enabled = enabled;
  d.previous = previous;
  d.previous_enabled = std::find(enabled.begin(), enabled.end(), previous) != enabled.end();
  d.exec = &v;
  return s.pick(d);
}

}  // namespace

TEST_CASE("The strategy runs each step's thread until it performs the step", "[follow]") {
  sched::FollowStrategy s({{"b", "lock"}, {"a", "lock"}, {"b", "unlock"}});
  REQUIRE(s.begin_execution(0));
  View v;
  v.names = {"a", "b"};
  v.pending = {"lock", "point"};
  v.done = {false, false};
  // b is not at its lock yet: it runs (the live program has a point the model has not).
  CHECK(pick(s, v, {0, 1}) == 1);
  CHECK(s.met() == 0);
  v.pending[1] = "lock";
  CHECK(pick(s, v, {0, 1}) == 1);
  CHECK(s.met() == 1);
  // a's lock now waits for b: b runs on, although the model's next step is a's.
  v.pending[1] = "unlock";
  CHECK(pick(s, v, {1}, 1) == 1);
  CHECK(s.met() == 2);  // b's unlock, passed ahead of a's blocked lock
  CHECK(pick(s, v, {0}, 1) == 0);
  CHECK(s.met() == 3);
  // Past the last step: no preemption.
  v.pending = {"x", "y"};
  CHECK(pick(s, v, {0, 1}, 1) == 1);
}

TEST_CASE("A step its thread performed before the model's order asked for it is passed over",
          "[follow]") {
  sched::FollowStrategy s({{"worker", "start"}, {"main", "start"}, {"worker", "lock"}});
  REQUIRE(s.begin_execution(0));
  View v;
  v.names = {"main"};
  v.pending = {"start"};
  v.done = {false};
  // worker does not exist yet: main must run first (it starts the worker).
  CHECK(pick(s, v, {0}) == 0);
  v.names = {"main", "worker"};
  v.pending = {"join worker", "start"};
  v.done = {false, false};
  CHECK(pick(s, v, {1}, 0) == 1);
  v.pending[1] = "lock";
  // main's start happened already: the worker's lock is next.
  CHECK(pick(s, v, {1}, 1) == 1);
  CHECK(s.met() == 3);
}

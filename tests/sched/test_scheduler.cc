// Scheduler properties: determinism, replay round trips, shrinking, the two backends agreeing,
// divergence reports, DFS bounds, the livelock checker.
#include <algorithm>
#include <string>
#include <type_traits>

#include "catch.h"
#include "corpus.h"
#include "report/schedule_file.h"
#include "sched/decide.h"
#include "sched/explore.h"
#include "sched/schedule.h"
#include "sched/shrink.h"
#include "util/errors.h"

using namespace racelab;
using namespace racelab::sched;

namespace {

ExecutionResult once(Subject& s, Strategy& strategy, std::uint64_t index = 0,
                     Backend backend = Backend::kCoroutine) {
  RunOptions o;
  o.backend = backend;
  return std::move(*run_execution(s, strategy, index, o));
}

// The first execution of `kind` under PCT seed 1, as (index, result).
ExecutionResult first_failing(Subject& s, const char* kind) {
  auto pct = make_pct(1, 3);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    ExecutionResult r = once(s, *pct, i);
    if (r.found(kind)) return r;
  }
  FAIL("no " << kind << " within 1000 executions");
  return {};
}

class Spinner : public Subject {
 public:
  std::string name() const override { return "spinner"; }
  std::string content_hash() const override { return "spinner/1"; }
  void setup(Context& ctx) override {
    spin_ = ctx.label("poll flag");
    ctx.spawn("spinner", body(ctx));
  }

 private:
  Task body(Context& ctx) {
    for (;;) co_await ctx.point(spin_);
  }
  int spin_ = -1;
};

// A broken strategy: it picks a thread that is not enabled whenever there is one (blocked on a
// lock, finished), else `missing` an id that names no thread, else the lowest enabled thread.
class WrongStrategy : public Strategy {
 public:
  explicit WrongStrategy(bool missing) : missing_(missing) {}
  bool begin_execution(std::uint64_t) override { return true; }
  ThreadId pick(const Decision& d) override {
    if (missing_) return static_cast<ThreadId>(d.exec->thread_count());
    for (ThreadId t = 0; t < static_cast<ThreadId>(d.exec->thread_count()); ++t)
      if (std::find(d.enabled.begin(), d.enabled.end(), t) == d.enabled.end()) return t;
    // Round robin, so that one thread ends up waiting for the lock another holds.
    return d.enabled[d.step % d.enabled.size()];
  }
  std::string describe() const override { return "wrong-on-purpose"; }

 private:
  bool missing_;
};

// A thread waits for an event nobody sets: a deadlock without a wait-for cycle.
class NeverSet : public Subject {
 public:
  std::string name() const override { return "never-set"; }
  std::string content_hash() const override { return "never-set/1"; }
  void setup(Context& ctx) override {
    ready_ = ctx.event("ready");
    ctx.spawn("waiter", body(ctx));
  }

 private:
  Task body(Context& ctx) { co_await ctx.wait(ready_); }
  int ready_ = -1;
};

// A thread that spawns another once the execution has begun, which the model does not support.
class LateSpawn : public Subject {
 public:
  std::string name() const override { return "late-spawn"; }
  std::string content_hash() const override { return "late-spawn/1"; }
  void setup(Context& ctx) override {
    go_ = ctx.label("go");
    ctx.spawn("parent", parent(ctx));
  }

 private:
  Task parent(Context& ctx) {
    co_await ctx.point(go_);
    ctx.spawn("child", child(ctx));
  }
  Task child(Context& ctx) { co_await ctx.point(go_); }
  int go_ = -1;
};

}  // namespace

TEST_CASE("a spawn after the first step is refused with the thread and the step", "[scheduler]") {
  LateSpawn subject;
  auto random = make_random(1);
  ExecutionResult r = once(subject, *random);
  // Inside a thread's body the check's exception ends that thread, as any exception does.
  REQUIRE(r.found("exception"));
  const std::string& m = r.findings.front().message;
  INFO(m);
  CHECK(m.find("invariant violated at src/sched/execution.cc:") != std::string::npos);
  CHECK(m.find("spawn of thread child after step ") != std::string::npos);
}

TEST_CASE("deadlock messages: one wording for the model and the live runtime", "[scheduler]") {
  CHECK(deadlock_message({"a holds x and waits for y", "b holds y and waits for x"}) ==
        "deadlock: a holds x and waits for y; b holds y and waits for x");
  CHECK(stuck_deadlock_message({}) == "deadlock: no thread can run: ");
  CHECK(stuck_deadlock_message({"a waits for e", "b waits for f"}) ==
        "deadlock: no thread can run: a waits for e; b waits for f");
  CHECK(held_wait_text("compile_lock", "drafter 1") == "waits for compile_lock held by drafter 1");
  // The model's deadlock without a cycle names the first stuck thread (its traces must not change).
  NeverSet subject;
  auto random = make_random(1);
  ExecutionResult r = once(subject, *random);
  REQUIRE(r.found("deadlock"));
  CHECK(r.findings.front().message ==
        "deadlock: no thread can run: waiter waits for ready, which is never set");
  CHECK(r.findings.front().cycle.empty());
}

TEST_CASE("the same seed gives a byte-identical trace across 100 runs", "[scheduler]") {
  corpus::CompileLockDeadlock subject(false, 3);
  for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kPct}) {
    StrategyParams p;
    p.kind = kind;
    p.seed = 42;
    std::string reference;
    for (int run = 0; run < 100; ++run) {
      auto strategy = make_strategy(p);
      std::string all;
      for (std::uint64_t i = 0; i < 5; ++i) all += once(subject, *strategy, i).trace_text();
      if (run == 0) {
        reference = all;
        REQUIRE(!reference.empty());
      } else {
        REQUIRE(all == reference);
      }
    }
  }
  // Different seeds explore different schedules.
  auto a = make_random(1), b = make_random(2);
  std::string ta, tb;
  for (std::uint64_t i = 0; i < 5; ++i) {
    ta += once(subject, *a, i).trace_text();
    tb += once(subject, *b, i).trace_text();
  }
  CHECK(ta != tb);
}

TEST_CASE("replay round trip: run, write, read, replay gives the same finding and trace",
          "[scheduler]") {
  corpus::CompileLockDeadlock subject(false);
  ExecutionResult r = first_failing(subject, "deadlock");
  Schedule s;
  s.racelab_version = "test";
  s.subject_name = subject.name();
  s.subject_hash = subject.content_hash();
  s.strategy_name = "pct";
  s.strategy_description = "pct(depth=3, seed=1)";
  s.finding_kind = "deadlock";
  s.steps = replay_steps(*r.exec);
  Schedule back = report::parse_schedule(report::schedule_to_json(s), "round-trip");
  REQUIRE(back.steps.size() == s.steps.size());
  ReplayStrategy replay(back.steps, OnDivergence::kFail);
  ExecutionResult again = once(subject, replay);
  CHECK(again.found("deadlock"));
  CHECK(again.trace_text() == r.trace_text());
  CHECK(again.findings.front().message == r.findings.front().message);
  // A replay of a fixed twin diverges, with the step and both operations named.
  corpus::CompileLockDeadlock fixed(true);
  ReplayStrategy strict(back.steps, OnDivergence::kFail);
  try {
    (void)once(fixed, strict);
    FAIL("expected a divergence");
  } catch (const ReplayDivergence& e) {
    CHECK(std::string(e.what()).rfind("diverged at step ", 0) == 0);
    CHECK(std::string(e.what()).find("expected ") != std::string::npos);
    CHECK(std::string(e.what()).find(", got ") != std::string::npos);
  }
  // ...or continues under seeded random when asked, and completes without the deadlock.
  ReplayStrategy lenient(back.steps, OnDivergence::kRandom, make_random(7));
  ExecutionResult relaxed = once(fixed, lenient);
  CHECK(lenient.diverged());
  CHECK(!relaxed.found("deadlock"));
  CHECK(relaxed.completed);
}

TEST_CASE("shrink never increases preemptions and keeps the finding", "[scheduler]") {
  corpus::CompileLockDeadlock deadlock(false, 3);
  corpus::LostUpdate lost(false);
  corpus::OrderingDepth3 ordering(false);
  struct Case {
    Subject* subject;
    const char* kind;
  };
  int reduced = 0;
  for (Case c :
       {Case{&deadlock, "deadlock"}, Case{&lost, "assertion"}, Case{&ordering, "assertion"}}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      auto random = make_random(seed);
      for (std::uint64_t i = 0; i < 2000; ++i) {
        ExecutionResult r = once(*c.subject, *random, i);
        if (!r.found(c.kind)) continue;
        ShrinkResult s = shrink(*c.subject, r.choices, c.kind);
        INFO(c.subject->name() << " seed " << seed);
        CHECK(s.result.found(c.kind));
        CHECK(s.result.preemptions <= r.preemptions);
        CHECK(s.original_preemptions == r.preemptions);
        if (s.result.preemptions < r.preemptions) ++reduced;
        break;
      }
    }
  }
  CHECK(reduced > 0);  // random schedules carry preemptions the findings do not need
  // The compile_lock deadlock needs exactly one preemption once shrunk.
  auto random = make_random(3);
  for (std::uint64_t i = 0; i < 2000; ++i) {
    ExecutionResult r = once(deadlock, *random, i);
    if (!r.found("deadlock")) continue;
    CHECK(shrink(deadlock, r.choices, "deadlock").result.preemptions <= 2);
    break;
  }
}

TEST_CASE("the OS-thread backend gives the same trace as the coroutine backend", "[threads]") {
  corpus::CompileLockDeadlock deadlock(false);
  corpus::CompileLockDeadlock clean(true);
  corpus::LostUpdate lost(false);
  corpus::OrderingDepth3 ordering(false);
  for (Subject* s : std::initializer_list<Subject*>{&deadlock, &clean, &lost, &ordering}) {
    for (std::uint64_t i = 0; i < 20; ++i) {
      auto a = make_pct(9, 3);
      auto b = make_pct(9, 3);
      // PCT learns k from earlier executions, so give both the same history.
      for (std::uint64_t j = 0; j < i; ++j) {
        (void)once(*s, *a, j);
        (void)once(*s, *b, j, Backend::kCoroutine);
      }
      ExecutionResult coro = once(*s, *a, i, Backend::kCoroutine);
      ExecutionResult threads = once(*s, *b, i, Backend::kThreads);
      INFO(s->name() << " execution " << i);
      REQUIRE(threads.trace_text() == coro.trace_text());
      REQUIRE(threads.findings.size() == coro.findings.size());
      for (std::size_t k = 0; k < coro.findings.size(); ++k) {
        CHECK(threads.findings[k].message == coro.findings[k].message);
      }
    }
  }
  // A recorded schedule replays on real threads.
  ExecutionResult r = first_failing(deadlock, "deadlock");
  ReplayStrategy replay(replay_steps(*r.exec), OnDivergence::kFail);
  ExecutionResult live = once(deadlock, replay, 0, Backend::kThreads);
  CHECK(live.found("deadlock"));
  CHECK(live.trace_text() == r.trace_text());
}

TEST_CASE("DFS reports a capped search as not exhausted", "[scheduler]") {
  corpus::CompileLockDeadlock fixed(true, 2);
  ExploreOptions o;
  o.strategy.kind = StrategyKind::kDfs;
  o.strategy.max_preemptions = 2;
  o.iterations = 10;
  auto capped = explore(fixed, o);
  CHECK(capped.executions == 10);
  CHECK(capped.stop == StopReason::kBudget);
  CHECK(!capped.exhausted());
  // Bound 0: only non-preemptive schedules, a small exhaustible space.
  o.strategy.max_preemptions = 0;
  o.iterations = 100000;
  auto zero = explore(fixed, o);
  CHECK(zero.exhausted());
  CHECK(zero.executions > 1);
  // A larger bound explores a strictly larger space.
  o.strategy.max_preemptions = 1;
  o.iterations = 1000000;
  auto one = explore(fixed, o);
  CHECK(one.exhausted());
  CHECK(one.executions > zero.executions);
  WARN("dfs executions for the fixed 2-drafter pipeline: bound 0: "
       << zero.executions << ", bound 1: " << one.executions);
}

TEST_CASE("a thread that never ends is reported as a livelock", "[scheduler]") {
  Spinner spinner;
  auto random = make_random(1);
  RunOptions o;
  o.max_steps = 500;
  ExecutionResult r = std::move(*run_execution(spinner, *random, 0, o));
  REQUIRE(r.found("livelock"));
  CHECK(r.exec->steps().size() == 500);
  CHECK(r.findings.front().message.find("500 steps") != std::string::npos);
}

TEST_CASE("a data race names both accesses and both threads", "[scheduler]") {
  corpus::LostUpdate lost(false);
  ExecutionResult r = first_failing(lost, "data_race");
  const auto& msg = r.findings.front().message;
  CHECK(msg.find("data race on counter") != std::string::npos);
  CHECK(msg.find("by t0") != std::string::npos);
  CHECK(msg.find("by t1") != std::string::npos);
  // The locked twin never races, in any schedule.
  corpus::LostUpdate fixed(true);
  ExploreOptions o;
  o.strategy.kind = StrategyKind::kDfs;
  o.strategy.max_preemptions = 10;
  o.iterations = 100000;
  auto all = explore(fixed, o);
  CHECK(all.exhausted());
  CHECK(all.find("data_race") == nullptr);
}

TEST_CASE(
    "a strategy that picks a thread that is not enabled trips the invariant check, in every "
    "build type",
    "[scheduler]") {
  static_assert(std::is_base_of_v<std::exception, InvariantError> &&
                    !std::is_base_of_v<InputError, InvariantError>,
                "the command line must report a broken invariant as an internal error (exit 3)");
  corpus::LostUpdate subject(true);
  for (Backend backend : {Backend::kCoroutine, Backend::kThreads}) {
    for (bool missing : {false, true}) {
      WrongStrategy wrong(missing);
      RunOptions o;
      o.backend = backend;
      std::string message;
      try {
        run_execution(subject, wrong, 0, o);
      } catch (const InvariantError& e) {
        message = e.what();
      }
      INFO(message);
      // Where, which strategy, which step, which thread, and the threads it could have picked.
      // One decision core for both worlds: the check lives there.
      CHECK(message.rfind("invariant violated at src/sched/decide.cc:", 0) == 0);
      CHECK(message.find(missing
                             ? "strategy wrong-on-purpose picked thread 2 (no such thread) at "
                               "step 0, which is not enabled (enabled: 0 (t0), 1 (t1))"
                             : "strategy wrong-on-purpose picked thread ") != std::string::npos);
      CHECK(message.find(", which is not enabled (enabled: ") != std::string::npos);
    }
  }
  // The engine is usable afterwards.
  auto pct = make_pct(1, 3);
  CHECK(once(subject, *pct).completed);
}

// The live runtime: controlled real threads, foreign threads, hang detection.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "catch.h"
#include "live/live.h"
#include "live/search.h"
#include "lock_order.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

namespace live = racelab::live;
namespace sched = racelab::sched;

namespace {

live::Options fast() {
  live::Options o;
  // Long enough that a loaded CI machine never looks hung; the hang tests wait it out once each.
  o.hang_timeout = std::chrono::milliseconds(2000);
  o.settle = std::chrono::milliseconds(2);
  return o;
}

using racelab::live_test::LockOrder;

// Two threads increment a shared counter, under a mutex when `locked`.
class Counter : public live::Subject {
 public:
  explicit Counter(bool locked) : locked_(locked) {}
  std::string name() const override { return "counter"; }
  std::string content_hash() const override { return "1"; }
  void setup(live::Runtime& rt) override {
    auto& m = rt.mutex("m");
    auto& n = rt.shared<int>("n", 0);
    n_ = &n;
    for (int i = 0; i < 2; ++i) {
      rt.spawn(fmt::format("t{}", i), [&m, &n, this] {
        if (locked_) m.lock();
        const int v = n.get();
        n.set(v + 1);
        if (locked_) m.unlock();
      });
    }
  }
  void finish(live::Runtime& rt) override {
    final_ = n_->get();
    (void)rt;
  }
  int final_ = -1;

 private:
  bool locked_;
  live::Shared<int>* n_ = nullptr;
};

std::vector<sched::ReplayStep> as_replay(const live::Result& r) { return r.replay_steps(); }

// A foreign worker serving jobs from a queue, like the autograd engine's device thread: callers
// submit a job and wait for it inside a Blocking scope.
class Worker {
 public:
  explicit Worker(std::string name) : name_(std::move(name)) {
    os_ = std::thread([this] { loop(); });
  }
  ~Worker() {
    {
      std::lock_guard g(m_);
      stop_ = true;
      cancel_ = true;
    }
    cv_.notify_all();
    os_.join();
  }
  // Runs `job` on the worker and waits for it (or for cancel()).
  void call(const std::string& what, std::function<void()> job) {
    live::Blocking b(what, name_);
    auto done = std::make_shared<bool>(false);
    {
      std::lock_guard g(m_);
      jobs_.push_back([job = std::move(job), done, this] {
        job();
        std::lock_guard g(m_);
        *done = true;
      });
    }
    cv_.notify_all();
    std::unique_lock lk(m_);
    cv_.wait(lk, [&] { return *done || cancel_; });
  }
  void cancel() {
    {
      std::lock_guard g(m_);
      cancel_ = true;
    }
    cv_.notify_all();
  }

 private:
  void loop() {
    bool named = false;
    std::unique_lock lk(m_);
    for (;;) {
      cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lk.unlock();
      if (!named) {
        live::name_this_thread(name_);
        named = true;
      }
      job();
      cv_.notify_all();
      lk.lock();
    }
  }
  std::string name_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  bool cancel_ = false;
  std::thread os_;
};

// The compile_lock cycle of docs/facts.md F1-F4 in miniature: drafter 0's backward runs on the
// worker and takes the compile lock there; drafter 1 holds the compile lock and needs the worker.
class WorkerCycle : public live::Subject {
 public:
  explicit WorkerCycle(Worker& w) : w_(w) {}
  std::string name() const override { return "worker-cycle"; }
  std::string content_hash() const override { return "1"; }
  void setup(live::Runtime& rt) override {
    auto& lock = rt.recursive_mutex("compile_lock");
    rt.spawn("drafter 0", [&lock, this] {
      live::point("backward");
      w_.call("backward()", [&lock] { std::lock_guard g(lock); });
    });
    rt.spawn("drafter 1", [&lock, this] {
      std::lock_guard g(lock);
      live::point("trace");
      w_.call("autograd.grad", [] {});
    });
  }

 private:
  Worker& w_;
};

}  // namespace

TEST_CASE("DFS over real threads finds the lock-order deadlock and proves the fix", "[live]") {
  LockOrder bad(false);
  auto dfs = sched::make_dfs(2);
  bool found = false;
  std::string message;
  for (std::uint64_t i = 0; i < 100; ++i) {
    auto r = live::run(bad, *dfs, i, fast());
    if (!r) break;
    CHECK_FALSE(r->hung);
    if (r->found("deadlock")) {
      found = true;
      message = r->findings.front().message;
      break;
    }
  }
  REQUIRE(found);
  CHECK(message.find("waits for") != std::string::npos);
  CHECK(message.find("held by t") != std::string::npos);

  LockOrder good(true);
  auto dfs2 = sched::make_dfs(2);
  std::uint64_t n = 0;
  for (;; ++n) {
    auto r = live::run(good, *dfs2, n, fast());
    if (!r) break;
    REQUIRE(r->findings.empty());
    REQUIRE(r->completed);
  }
  CHECK(dfs2->exhausted());
  CHECK(n > 1);
}

TEST_CASE("A live schedule replays to the same decisions and finding", "[live]") {
  LockOrder bad(false);
  auto pct = sched::make_random(7);
  std::optional<live::Result> first;
  for (std::uint64_t i = 0; i < 200 && !first; ++i) {
    auto r = live::run(bad, *pct, i, fast());
    if (r->found("deadlock")) first = std::move(r);
  }
  REQUIRE(first);
  // The lock-order deadlock needs a switch away from a thread that could go on: the record names
  // the decisions that preempted, as a model execution's does.
  CHECK(first->preemptions == first->preemption_steps.size());
  CHECK_FALSE(first->preemption_steps.empty());
  CHECK(first->choices.size() == first->replay_steps().size());
  for (int k = 0; k < 20; ++k) {
    sched::ReplayStrategy replay(as_replay(*first), sched::OnDivergence::kFail, nullptr);
    auto r = live::run(bad, replay, 0, fast());
    REQUIRE((r->replay_steps() == first->replay_steps()));
    REQUIRE((r->choices == first->choices));
    REQUIRE((r->preemption_steps == first->preemption_steps));
    REQUIRE(r->findings.size() == 1);
    CHECK(r->findings.front().message == first->findings.front().message);
  }
}

TEST_CASE("A live command searches with its options or replays with the recorded parameters",
          "[live]") {
  auto make = [](const sched::Schedule* recorded) -> std::unique_ptr<live::Subject> {
    return std::make_unique<LockOrder>(recorded != nullptr &&
                                       recorded->live_configuration.boolean("fixed") == true);
  };
  const live::Prepared search = live::prepare(
      "", std::nullopt, sched::kLiveTorchSubject, [] { return sched::make_random(7); }, make);
  CHECK_FALSE(search.replaying);
  CHECK(search.subject->name() == "lock-order");
  CHECK(search.warning.empty());

  const std::string path = "racelab-test-prepare.json";  // named in messages only
  sched::Schedule s;
  s.subject_name = sched::kLiveTorchSubject;
  s.subject_hash = "0";  // LockOrder's is "1": recorded from another build
  s.live_configuration.set("fixed", true);
  s.steps = {{"t0", "start"}};
  const live::Prepared replay = live::prepare(
      path, s, sched::kLiveTorchSubject, [] { return sched::make_random(7); }, make);
  CHECK(replay.replaying);
  CHECK(replay.subject->name() == "lock-order-fixed");
  CHECK(replay.warning ==
        path + " was recorded with another build or workload (0); replaying anyway");
  CHECK(replay.strategy->describe().find("replay") != std::string::npos);
  CHECK_THROWS_AS(
      live::prepare(
          path, s, sched::kLivePythonSubject, [] { return sched::make_random(7); }, make),
      racelab::InputError);
}

TEST_CASE("Shared variables report unordered accesses as data races", "[live]") {
  Counter racy(false);
  auto dfs = sched::make_dfs(2);
  bool race = false;
  bool lost = false;
  for (std::uint64_t i = 0;; ++i) {
    auto r = live::run(racy, *dfs, i, fast());
    if (!r) break;
    race = race || r->found("data_race");
    if (r->completed && racy.final_ == 1) lost = true;
  }
  CHECK(race);
  // Races are findings, not fatal: the lost update itself also happens.
  CHECK(lost);

  Counter safe(true);
  auto dfs2 = sched::make_dfs(2);
  for (std::uint64_t i = 0;; ++i) {
    auto r = live::run(safe, *dfs2, i, fast());
    if (!r) break;
    INFO((r->findings.empty() ? std::string() : r->findings.front().message));
    REQUIRE(r->findings.empty());
    REQUIRE(safe.final_ == 2);
  }
}

namespace {

// drafter 1 takes the lock; drafter 0 hands its backward to the worker, which then waits for the
// lock; drafter 1 asks the worker for autograd.grad.
std::vector<sched::ReplayStep> worker_cycle_plan() {
  return {{"drafter 0", "start"},
          {"drafter 1", "start"},
          {"drafter 1", "lock compile_lock"},
          {"drafter 0", "backward"},
          {"drafter 1", "trace"}};
}

}  // namespace

TEST_CASE("A blocking call served by a foreign worker closes the wait-for cycle", "[live]") {
  Worker worker("autograd worker cuda:0");
  WorkerCycle subject(worker);
  sched::ReplayStrategy replay(worker_cycle_plan(), sched::OnDivergence::kFail, nullptr);
  auto r = live::run(subject, replay, 0, fast());
  REQUIRE(r);
  CHECK(r->hung);
  REQUIRE(r->found("deadlock"));
  const auto& f = r->findings.front();
  CHECK(f.message ==
        "deadlock: drafter 1 holds compile_lock and is inside autograd.grad, served by autograd "
        "worker cuda:0; autograd worker cuda:0 waits for compile_lock "
        "held by drafter 1");
  REQUIRE(f.cycle == std::vector<std::string>{"drafter 1", "autograd worker cuda:0"});
  CHECK(r->foreign == std::vector<std::string>{"autograd worker cuda:0"});
  bool foreign_wait = false;
  for (const auto& e : r->events) foreign_wait |= e.foreign && e.text == "waits for compile_lock";
  CHECK(foreign_wait);
  // Release the stuck threads so the worker can be joined.
  worker.cancel();
  CHECK(live::wait_hung_threads(std::chrono::seconds(10)));
}

TEST_CASE("A cycle through a blocking call is reported without waiting for the hang timeout",
          "[live]") {
  Worker worker("autograd worker cuda:0");
  WorkerCycle subject(worker);
  sched::ReplayStrategy replay(worker_cycle_plan(), sched::OnDivergence::kFail, nullptr);
  live::Options o = fast();
  o.hang_timeout = std::chrono::milliseconds(300000);  // a cold compile's worth
  o.cycle_confirm = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  auto r = live::run(subject, replay, 0, o);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(r);
  REQUIRE(r->found("deadlock"));
  CHECK(r->findings.front().cycle ==
        std::vector<std::string>{"drafter 1", "autograd worker cuda:0"});
  // Waiting for the hang timeout would take five minutes.
  CHECK(took < std::chrono::seconds(120));
  worker.cancel();
  CHECK(live::wait_hung_threads(std::chrono::seconds(10)));
}

namespace {

// One caller: drafter 1 holds the lock and hands the worker a job that needs it (a lazy compile
// on the worker inside the caller's own call); with `release`, drafter 0 holds it instead and lets
// it go after the call has started, so the call returns.
class OneCaller : public live::Subject {
 public:
  OneCaller(Worker& w, bool release) : w_(w), release_(release) {}
  std::string name() const override { return "one-caller"; }
  std::string content_hash() const override { return release_ ? "2" : "1"; }
  void setup(live::Runtime& rt) override {
    auto& lock = rt.recursive_mutex("compile_lock");
    if (release_) {
      rt.spawn("drafter 0", [&lock] {
        std::lock_guard g(lock);
        live::point("trace");
      });
    }
    rt.spawn("drafter 1", [&lock, this] {
      std::unique_lock g(lock, std::defer_lock);
      if (!release_) g.lock();
      live::point("backward");
      w_.call("backward()", [&lock] { std::lock_guard in(lock); });
    });
  }

 private:
  Worker& w_;
  bool release_;
};

}  // namespace

// issue 34, point 1: a thread inside a blocking call whose server waits on an instrumented mutex,
// with no other thread inside a call to that server, cannot have been served (the server blocks
// inside its one call), so neither a decision nor a deadlock waits for a quiet period there.
TEST_CASE("A lone caller of a blocked server is certainly inside its call", "[live]") {
  SECTION("its cycle is a deadlock at once") {
    Worker worker("autograd worker cuda:0");
    OneCaller subject(worker, false);
    live::Options o = fast();
    o.hang_timeout = std::chrono::milliseconds(300000);
    o.cycle_confirm = std::chrono::milliseconds(300000);
    sched::ReplayStrategy replay(
        {{"drafter 1", "start"}, {"drafter 1", "lock compile_lock"}, {"drafter 1", "backward"}},
        sched::OnDivergence::kFail, nullptr);
    const auto start = std::chrono::steady_clock::now();
    auto r = live::run(subject, replay, 0, o);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(r);
    REQUIRE(r->found("deadlock"));
    CHECK(r->findings.front().cycle ==
          std::vector<std::string>{"drafter 1", "autograd worker cuda:0"});
    // Confirming the cycle by a quiet period would take five minutes.
    CHECK(took < std::chrono::seconds(120));
    worker.cancel();
    CHECK(live::wait_hung_threads(std::chrono::seconds(10)));
  }
  SECTION("its cycle left behind by an abandoned execution is a deadlock at once") {
    // dpor gives the execution up (kNoThread) while main could still run, after drafter 1 went
    // into the call: the wind-down finds the cycle (parked main unwinds; the cycle does not).
    class Abandon : public sched::Strategy {
     public:
      bool begin_execution(std::uint64_t index) override { return replay_.begin_execution(index); }
      sched::ThreadId pick(const sched::Decision& d) override {
        return d.step < 4 ? replay_.pick(d) : sched::kNoThread;
      }
      std::string describe() const override { return "abandon after the call"; }

     private:
      sched::ReplayStrategy replay_{{{"main", "start"},
                                     {"drafter 1", "start"},
                                     {"drafter 1", "lock compile_lock"},
                                     {"drafter 1", "backward"}},
                                    sched::OnDivergence::kFail,
                                    nullptr};
    };
    struct WithMain : OneCaller {
      using OneCaller::OneCaller;
      void setup(live::Runtime& rt) override {
        rt.spawn("main", [] { live::point("idle"); });
        OneCaller::setup(rt);
      }
    };
    Worker worker("autograd worker cuda:0");
    WithMain subject(worker, false);
    Abandon abandon;
    live::Options o = fast();
    o.footprints = true;
    o.hang_timeout = std::chrono::milliseconds(300000);
    o.cycle_confirm = std::chrono::milliseconds(300000);
    const auto start = std::chrono::steady_clock::now();
    auto r = live::run(subject, abandon, 0, o);
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE(r);
    CHECK(r->hung);
    REQUIRE(r->found("deadlock"));
    CHECK(r->findings.front().cycle ==
          std::vector<std::string>{"drafter 1", "autograd worker cuda:0"});
    CHECK(took < std::chrono::seconds(120));
    worker.cancel();
    CHECK(live::wait_hung_threads(std::chrono::seconds(10)));
  }
  SECTION("a decision beside it waits for no quiet period") {
    Worker worker("autograd worker cuda:0");
    OneCaller subject(worker, true);
    live::Options o = fast();
    o.settle = std::chrono::milliseconds(100);
    sched::ReplayStrategy replay({{"drafter 0", "start"},
                                  {"drafter 0", "lock compile_lock"},
                                  {"drafter 1", "start"},
                                  {"drafter 1", "backward"},
                                  {"drafter 0", "trace"},
                                  {"drafter 0", "unlock compile_lock"}},
                                 sched::OnDivergence::kFail, nullptr);
    auto r = live::run(subject, replay, 0, o);
    REQUIRE(r);
    INFO((r->findings.empty() ? std::string() : r->findings.front().message));
    CHECK(r->completed);
    CHECK(r->settled == 0);
  }
}

// issue 34: dpor abandons an execution (sleep-set blocked: kNoThread) while a third thread can
// still run, after the two drafters have formed the cycle through the worker. Their threads
// cannot unwind; until 2026-12-05 the execution ended with no finding after the hang timeout and
// the search went on in the same process, beside the busy worker, and a later execution hung.
TEST_CASE("Threads left stuck by an abandoned execution are its deadlock, and end the process",
          "[live]") {
  class Abandon : public sched::Strategy {
   public:
    bool begin_execution(std::uint64_t index) override { return replay_.begin_execution(index); }
    sched::ThreadId pick(const sched::Decision& d) override {
      return d.step < plan_size ? replay_.pick(d) : sched::kNoThread;
    }
    std::string describe() const override { return "abandon after the cycle"; }
    const std::size_t plan_size = worker_cycle_plan().size() + 1;

   private:
    sched::ReplayStrategy replay_{[] {
                                    auto plan = worker_cycle_plan();
                                    plan.insert(plan.begin(), {"main", "start"});
                                    return plan;
                                  }(),
                                  sched::OnDivergence::kFail, nullptr};
  };
  struct WithMain : WorkerCycle {
    using WorkerCycle::WorkerCycle;
    void setup(live::Runtime& rt) override {
      rt.spawn("main", [] { live::point("idle"); });  // still enabled when dpor gives up
      WorkerCycle::setup(rt);
    }
  };
  Worker worker("autograd worker cuda:0");
  WithMain subject(worker);
  Abandon abandon;
  live::Options o = fast();
  o.footprints = true;  // what lets a strategy abandon an execution (dpor)
  o.hang_timeout = std::chrono::milliseconds(300000);
  o.cycle_confirm = std::chrono::milliseconds(200);
  auto r = live::run(subject, abandon, 0, o);
  REQUIRE(r);
  CHECK(r->hung);
  CHECK_FALSE(r->completed);
  REQUIRE(r->found("deadlock"));
  CHECK(r->findings.front().cycle ==
        std::vector<std::string>{"drafter 1", "autograd worker cuda:0"});
  // The search does not run another execution beside them: --all-findings hands over.
  live::StopAtFailure all(false, false, true);
  CHECK_FALSE(all.keep(0, *r));
  CHECK(all.hand_over);
  worker.cancel();
  CHECK(live::wait_hung_threads(std::chrono::seconds(10)));
}

TEST_CASE("try_lock takes a free mutex and reports a held one, as scheduled", "[live]") {
  struct TryLock : live::Subject {
    std::vector<bool> outcomes;
    std::string name() const override { return "try-lock"; }
    std::string content_hash() const override { return "1"; }
    void setup(live::Runtime& rt) override {
      auto& m = rt.mutex("m");
      auto& r = rt.recursive_mutex("r");
      rt.spawn("holder", [&m] {
        std::lock_guard g(m);
        live::point("inside");
      });
      rt.spawn("trier", [&m, &r, this] {
        const bool got = m.try_lock();
        if (got) m.unlock();
        std::lock_guard g(r);
        const bool again = r.try_lock();  // recursive: its owner takes it again
        if (again) r.unlock();
        outcomes.push_back(got && again);
        outcomes.push_back(!got && again);
      });
    }
  } subject;
  auto dfs = sched::make_dfs(2);
  bool took = false, refused = false;
  for (std::uint64_t i = 0;; ++i) {
    subject.outcomes.clear();
    auto r = live::run(subject, *dfs, i, fast());
    if (!r) break;
    REQUIRE(r->completed);
    REQUIRE(subject.outcomes.size() == 2);
    took |= subject.outcomes[0];
    refused |= subject.outcomes[1];
    bool seen = false;
    for (const auto& e : r->events) seen |= e.text == "try lock m";
    CHECK(seen);
  }
  CHECK(took);
  CHECK(refused);
}

TEST_CASE("The other order through the worker completes", "[live]") {
  Worker worker("autograd worker cuda:0");
  WorkerCycle subject(worker);
  std::vector<sched::ReplayStep> plan = {{"drafter 0", "start"},
                                         {"drafter 0", "backward"},
                                         {"drafter 1", "start"},
                                         {"drafter 1", "lock compile_lock"}};
  sched::ReplayStrategy replay(plan, sched::OnDivergence::kFail, nullptr);
  auto r = live::run(subject, replay, 0, fast());
  REQUIRE(r);
  CHECK(r->findings.empty());
  CHECK(r->completed);
  CHECK_FALSE(r->hung);
}

TEST_CASE("A thread that never comes back to a scheduling point is racelab losing control",
          "[live]") {
  struct Stuck : live::Subject {
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    bool exited = false;
    std::string name() const override { return "stuck"; }
    std::string content_hash() const override { return "1"; }
    void setup(live::Runtime& rt) override {
      auto& lk = rt.mutex("m");
      rt.spawn("sleeper", [this, &lk] {
        {
          std::lock_guard g(lk);
          std::unique_lock u(m);
          cv.wait(u, [&] { return release; });
        }
        std::lock_guard u(m);
        exited = true;
        cv.notify_all();
      });
    }
  } subject;
  auto dfs = sched::make_dfs(0);
  auto r = live::run(subject, *dfs, 0, fast());
  REQUIRE(r);
  CHECK(r->hung);
  // Not the program's hang: racelab's blind spot, said as such (never a pass, never a deadlock).
  CHECK(r->found("lost_control"));
  CHECK_FALSE(r->found("hang"));
  CHECK_FALSE(r->found("deadlock"));
  CHECK(r->findings.front().message.find("racelab lost control of sleeper: it holds m and has "
                                         "run") != std::string::npos);
  CHECK(r->findings.front().message.find("(last: lock m)") != std::string::npos);
  CHECK(r->findings.front().message.find("not a verdict on the program") != std::string::npos);
  {
    std::lock_guard g(subject.m);
    subject.release = true;
  }
  subject.cv.notify_all();
  std::unique_lock u(subject.m);
  subject.cv.wait(u, [&] { return subject.exited; });
  u.unlock();
  CHECK(live::wait_hung_threads(std::chrono::seconds(10)));
}

TEST_CASE("Exceptions, spawn and join from controlled threads", "[live]") {
  struct Tree : live::Subject {
    bool throw_ = false;
    std::string name() const override { return "tree"; }
    std::string content_hash() const override { return "1"; }
    void setup(live::Runtime& rt) override {
      auto& total = rt.shared<int>("total", 0);
      auto& m = rt.mutex("m");
      rt.spawn("main", [this, &total, &m] {
        std::vector<sched::ThreadId> kids;
        for (int i = 0; i < 3; ++i) {
          kids.push_back(live::spawn(fmt::format("child {}", i), [&total, &m, i, this] {
            std::lock_guard g(m);
            total.set(total.get() + 1);
            if (throw_ && i == 1) throw std::runtime_error("boom\nsecond line");
          }));
        }
        for (auto k : kids) live::join(k);
        // Joined: ordered after every child, so no race.
        if (total.get() != 3) throw std::runtime_error("lost an increment");
      });
    }
  } subject;
  auto rnd = sched::make_random(3);
  for (std::uint64_t i = 0; i < 30; ++i) {
    auto r = live::run(subject, *rnd, i, fast());
    REQUIRE(r->findings.empty());
    REQUIRE(r->threads.size() == 4);
  }
  subject.throw_ = true;
  auto r = live::run(subject, *rnd, 99, fast());
  REQUIRE(r->found("exception"));
  CHECK(r->findings.front().message == "child 1 threw: boom");
  CHECK_FALSE(r->completed);
  CHECK_FALSE(r->hung);
}

TEST_CASE(
    "A strategy that picks a thread that is not enabled trips the invariant check, and the "
    "threads unwind",
    "[live]") {
  // Picks a thread that cannot run (waiting for the lock the other holds, or finished) whenever
  // there is one, else `missing` an id that names no thread, else the enabled threads in turn.
  struct Wrong : sched::Strategy {
    bool missing = false;
    bool begin_execution(std::uint64_t) override { return true; }
    sched::ThreadId pick(const sched::Decision& d) override {
      const auto count = static_cast<sched::ThreadId>(d.exec->thread_count());
      if (missing) return count;
      for (sched::ThreadId t = 0; t < count; ++t)
        if (std::find(d.enabled.begin(), d.enabled.end(), t) == d.enabled.end()) return t;
      return d.enabled[d.step % d.enabled.size()];
    }
    std::string describe() const override { return "wrong-on-purpose"; }
  } wrong;
  LockOrder subject(true);
  for (bool missing : {false, true}) {
    wrong.missing = missing;
    std::string message;
    try {
      live::run(subject, wrong, 0, fast());
    } catch (const racelab::InvariantError& e) {
      message = e.what();
    }
    INFO(message);
    CHECK(message.rfind("invariant violated at src/sched/decide.cc:", 0) == 0);  // the shared core
    CHECK(message.find(missing ? "strategy wrong-on-purpose picked thread 2 (no such thread) at "
                                 "step 0, which is not enabled (enabled: 0 (t0), 1 (t1))"
                               : "strategy wrong-on-purpose picked thread ") != std::string::npos);
    CHECK(message.find(", which is not enabled (enabled: ") != std::string::npos);
  }
  // The parked threads were unwound and the runtime released: the next execution runs.
  auto dfs = sched::make_dfs(0);
  auto r = live::run(subject, *dfs, 0, fast());
  REQUIRE(r);
  CHECK(r->completed);
}

TEST_CASE("Daemon threads do not keep an execution going; a non-daemon deadlock is still one",
          "[live]") {
  // main lets a daemon consumer take one item, then returns: the consumer is left waiting for
  // the next item (blocked) and a second daemon keeps reaching points (it could run for ever).
  // Python's exit: the execution is complete. `stuck`: a non-daemon thread waits for m for ever
  // (without the heartbeat, which could still release m for all the runtime knows).
  struct Daemons : live::Subject {
    bool stuck = false;
    std::string name() const override { return "daemons"; }
    std::string content_hash() const override { return "1"; }
    void setup(live::Runtime& rt) override {
      auto& item = rt.python_lock("item");
      auto& m = rt.mutex("m");
      rt.spawn("main", [this, &item, &m] {
        item.lock();  // empty: the consumer's take waits until main releases it
        live::spawn(
            "consumer",
            [&item] {
              for (;;) item.lock();  // takes the one item, then waits for another for ever
            },
            true);
        if (!stuck) {
          live::spawn(
              "heartbeat",
              [] {
                for (;;) live::point("beat");
              },
              true);
        }
        item.unlock();
        if (stuck) {
          m.lock();
          live::spawn("waiter", [&m] { std::lock_guard g(m); });
        }
      });
    }
  } subject;
  auto rnd = sched::make_random(5);
  for (std::uint64_t i = 0; i < 30; ++i) {
    auto r = live::run(subject, *rnd, i, fast());
    REQUIRE(r);
    INFO((r->findings.empty() ? std::string() : r->findings.front().message));
    CHECK(r->findings.empty());
    CHECK(r->completed);
    CHECK_FALSE(r->hung);
  }
  subject.stuck = true;
  bool deadlock = false;
  for (std::uint64_t i = 0; i < 30 && !deadlock; ++i) {
    auto r = live::run(subject, *rnd, i, fast());
    REQUIRE(r);
    CHECK_FALSE(r->found("livelock"));
    deadlock = r->found("deadlock");
  }
  CHECK(deadlock);
}

TEST_CASE("Without control the same subject runs as plain code", "[live]") {
  Counter locked(true);
  live::Options o = fast();
  o.control = false;
  auto rnd = sched::make_random(1);
  for (std::uint64_t i = 0; i < 20; ++i) {
    auto r = live::run(locked, *rnd, i, o);
    REQUIRE(r);
    CHECK(r->completed);
    CHECK(r->choices.empty());  // the strategy was never asked
    CHECK(locked.final_ == 2);
  }
  struct Joins : live::Subject {
    std::atomic<int> done{0};
    std::string name() const override { return "joins"; }
    std::string content_hash() const override { return "1"; }
    void setup(live::Runtime& rt) override {
      rt.spawn("main", [this] {
        auto a = live::spawn("a", [this] { ++done; });
        auto b = live::spawn("b", [this] { ++done; });
        live::join(a);
        live::join(b);
        if (done.load() != 2) throw std::runtime_error("joined before the children ended");
      });
    }
  } joins;
  auto r = live::run(joins, *rnd, 0, o);
  CHECK(r->completed);
  CHECK(r->findings.empty());
}

TEST_CASE("A replay waits for a foreign thread to release what its next step needs", "[live]") {
  // The worker holds m far longer than the settle window; the replayed step "t1: lock m" is not
  // enabled when the engine first looks, and becomes enabled once the worker lets go.
  Worker worker("worker");
  struct Slow : live::Subject {
    Worker& w;
    explicit Slow(Worker& wk) : w(wk) {}
    std::string name() const override { return "slow-foreign"; }
    std::string content_hash() const override { return "1"; }
    void setup(live::Runtime& rt) override {
      auto& m = rt.mutex("m");
      rt.spawn("t0", [this, &m] {
        w.call("work", [&m] {
          std::lock_guard g(m);
          std::this_thread::sleep_for(std::chrono::milliseconds(60));
        });
      });
      rt.spawn("t1", [&m] {
        live::point("ready");
        std::lock_guard g(m);
      });
      // Always enabled: without waiting, the engine would have to choose while t1 is blocked.
      rt.spawn("t2", [] { live::point("idle"); });
    }
  } subject(worker);
  std::vector<sched::ReplayStep> plan = {{"t0", "start"},    {"t1", "start"},
                                         {"t1", "ready"},    {"t1", "lock m"},
                                         {"t1", "unlock m"}, {"t0", "return from work"},
                                         {"t2", "start"},    {"t2", "idle"}};
  for (int k = 0; k < 3; ++k) {
    sched::ReplayStrategy replay(plan, sched::OnDivergence::kFail, nullptr);
    auto r = live::run(subject, replay, 0, fast());
    REQUIRE(r);
    CHECK(r->completed);
    CHECK(r->findings.empty());
  }
}

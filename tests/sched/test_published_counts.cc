// dpor against published numbers: the classic benchmarks of stateless model checking, written as
// small programs over the scheduler core, explore exactly as many interleaving classes
// (Mazurkiewicz traces under sequential consistency) as the literature and the test suites of
// Nidhugg and GenMC state. Our own random-program tests check dpor against our own brute force;
// these check the dependency relation and the search against numbers nobody here chose.
//
// Each shared location is an atomic variable; every access is its own scheduling point (a read or
// write operation), and a compare-and-swap is a read operation whose local code writes the
// location when it succeeds (Context::touch): a failed CAS is a read, a successful one a
// read-modify-write, which is how the published counts treat them.
//
// Sources of the counts (docs/performance.md, "Published counts"):
//   lastzero(N)  Abdulla, Aronis, Jonsson, Sagonas, "Optimal Dynamic Partial Order Reduction",
//                POPL 2014, and Nidhugg's / GenMC's test suites
//   readers(N)   2^N (the same sources)
//   casrot(N)    GenMC's test suite
//   indexer(N)   Flanagan & Godefroid, "Dynamic Partial-Order Reduction for Model Checking
//                Software", POPL 2005; the optimal-DPOR paper's table
#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "catch.h"
#include "sched/engine.h"
#include "sched/state.h"
#include "sched/strategies/strategies.h"

namespace racelab::sched {
namespace {

// A program over `locations` integer cells, every thread's code a coroutine of the benchmark.
// Describes its state (StateSource) so that dpor's state cache can run on it: a thread sees a cell
// only through a read or write operation on it, and var_digest gives the cell's value.
class Benchmark : public Subject, public StateSource {
 public:
  using Body = std::function<Task(Benchmark&, Context&)>;
  // `fixed`: the threads' touches follow from their operations (Context::fix_touches); not so
  // for a compare-and-swap, whose write depends on the value it read.
  Benchmark(std::string name, int locations, std::vector<Body> threads, bool fixed = true)
      : name_(std::move(name)),
        locations_(locations),
        threads_(std::move(threads)),
        fixed_(fixed) {}

  std::string name() const override { return name_; }
  std::string content_hash() const override { return name_; }
  void setup(Context& ctx) override {
    ctx.describe_state(*this);
    if (fixed_) ctx.fix_touches();
    vars_.clear();
    values_.assign(static_cast<std::size_t>(locations_), 0);
    for (int i = 0; i < locations_; ++i) vars_.push_back(ctx.atomic_var("x" + std::to_string(i)));
    for (std::size_t t = 0; t < threads_.size(); ++t)
      ctx.spawn("t" + std::to_string(t), threads_[t](*this, ctx));
  }
  std::uint64_t shared_digest(const StateNames&) const override {
    std::uint64_t h = 0;
    for (int v : values_) h = state_mix(h, static_cast<std::uint64_t>(v));
    return h;
  }
  std::uint64_t var_digest(int var, ThreadId) const override {
    for (std::size_t i = 0; i < vars_.size(); ++i)
      if (vars_[i] == var) return static_cast<std::uint64_t>(values_[i]);
    return UINT64_MAX;
  }

  // The accesses, each one step. Values are read right after the operation ran (one thread runs
  // at a time, so nothing comes between the operation and the code after it).
  Task load(Context& ctx, int cell, int& out) {
    co_await ctx.read(vars_[static_cast<std::size_t>(cell)]);
    out = values_[static_cast<std::size_t>(cell)];
  }
  Task store(Context& ctx, int cell, int value) {
    co_await ctx.write(vars_[static_cast<std::size_t>(cell)]);
    values_[static_cast<std::size_t>(cell)] = value;
  }
  // compare-and-swap: a read, and a write of the cell by the same step when it succeeds.
  Task cas(Context& ctx, int cell, int expected, int desired, bool& ok) {
    const int var = vars_[static_cast<std::size_t>(cell)];
    co_await ctx.read(var);
    int& value = values_[static_cast<std::size_t>(cell)];
    ok = value == expected;
    if (ok) {
      ctx.touch(var, true);
      value = desired;
    }
  }
  const std::vector<int>& values() const { return values_; }

 private:
  std::string name_;
  int locations_;
  std::vector<Body> threads_;
  bool fixed_;
  std::vector<int> vars_;
  std::vector<int> values_;
};

// The threads' code: coroutines with their parameters copied into their frames (a capturing
// lambda coroutine would read its captures from the closure, which may move).
// `strict`: it also asserts that no setter ran before the scan met its cell, which fails in most
// classes, with a message per cell where it stopped (lastzero_failing).
Task lastzero_scan(Benchmark& b, Context& ctx, int n, bool strict = false) {
  int i = n;
  for (;;) {
    int v = 0;
    co_await b.load(ctx, i, v);
    // The step branches on v: where it is 0 the scan ends in the checks. The first never fails
    // (no thread sets a[0]); the strict one may, which the step declares (Context::fix_touches).
    if (strict) ctx.may_fail();
    if (v == 0) break;
    --i;
  }
  ctx.check(i >= 0, "a zero exists");
  if (strict) ctx.check(i == n, "the last zero is a[" + std::to_string(i) + "]");
}
Task lastzero_set(Benchmark& b, Context& ctx, int j) {
  int v = 0;
  co_await b.load(ctx, j - 1, v);
  co_await b.store(ctx, j, v + 1);
}
Task write_once(Benchmark& b, Context& ctx, int cell, int value) {
  co_await b.store(ctx, cell, value);
}
Task read_once(Benchmark& b, Context& ctx, int cell) {
  int v = 0;
  co_await b.load(ctx, cell, v);
}

// lastzero(N): cells a[0..N], all 0. Thread 0 scans down from a[N] for the last zero; thread j
// (1..N) sets a[j] = a[j-1] + 1. Thread 0 asserts what it found (never false).
Benchmark lastzero(int n) {
  std::vector<Benchmark::Body> threads;
  threads.push_back([n](Benchmark& b, Context& ctx) { return lastzero_scan(b, ctx, n); });
  for (int j = 1; j <= n; ++j)
    threads.push_back([j](Benchmark& b, Context& ctx) { return lastzero_set(b, ctx, j); });
  return Benchmark("lastzero(" + std::to_string(n) + ")", n + 1, std::move(threads));
}

// lastzero(N) with the strict check: failures in every class where a setter came first.
Benchmark lastzero_failing(int n) {
  std::vector<Benchmark::Body> threads;
  threads.push_back([n](Benchmark& b, Context& ctx) { return lastzero_scan(b, ctx, n, true); });
  for (int j = 1; j <= n; ++j)
    threads.push_back([j](Benchmark& b, Context& ctx) { return lastzero_set(b, ctx, j); });
  return Benchmark("lastzero_failing(" + std::to_string(n) + ")", n + 1, std::move(threads));
}

// readers(N): one writer writes x, N readers read it once each.
Benchmark readers(int n) {
  std::vector<Benchmark::Body> threads;
  threads.push_back([](Benchmark& b, Context& ctx) { return write_once(b, ctx, 0, 42); });
  for (int j = 1; j <= n; ++j)
    threads.push_back([](Benchmark& b, Context& ctx) { return read_once(b, ctx, 0); });
  return Benchmark("readers(" + std::to_string(n) + ")", 1, std::move(threads));
}

Task cas_once(Benchmark& b, Context& ctx, int expected, int desired) {
  bool ok = false;
  co_await b.cas(ctx, 0, expected, desired, ok);
}
// indexer's thread: four values into a 128-cell hash table with linear probing by CAS.
Task index_values(Benchmark& b, Context& ctx, int tid) {
  for (int m = 1; m <= 4; ++m) {
    const int w = 11 * m + tid;
    int h = (7 * w) % 128;
    for (bool ok = false; !ok; h = (h + 1) % 128) {
      co_await b.cas(ctx, h, 0, w, ok);
      if (ok) break;
    }
  }
}

// casrot(N): x = 0; thread i (1..N) does one CAS(x, i-1, i): the successes form a chain 1, 2, ...
Benchmark casrot(int n) {
  std::vector<Benchmark::Body> threads;
  for (int i = 1; i <= n; ++i)
    threads.push_back([i](Benchmark& b, Context& ctx) { return cas_once(b, ctx, i - 1, i); });
  return Benchmark("casrot(" + std::to_string(n) + ")", 1, std::move(threads), false);
}

// indexer(N) (Flanagan & Godefroid): thread tid inserts w = 11 m + tid for m = 1..4 at slot
// 7 w mod 128, probing on. Two threads collide only when their values do (tid and tid + 11).
Benchmark indexer(int n) {
  std::vector<Benchmark::Body> threads;
  for (int tid = 0; tid < n; ++tid)
    threads.push_back([tid](Benchmark& b, Context& ctx) { return index_values(b, ctx, tid); });
  return Benchmark("indexer(" + std::to_string(n) + ")", 128, std::move(threads), false);
}

struct Count {
  std::uint64_t executions = 0;
  std::uint64_t complete = 0;  // not abandoned
  std::set<std::string> failures;
};

Count run_all(Subject& subject, Strategy& strategy) {
  Count c;
  for (std::uint64_t i = 0;; ++i) {
    auto run = run_execution(subject, strategy, i);
    if (!run) break;
    ++c.executions;
    if (!run->abandoned) ++c.complete;
    for (const auto& f : run->findings) c.failures.insert(f.kind + ": " + f.message);
  }
  return c;
}

struct Published {
  std::function<Benchmark(int)> make;
  int n;
  std::uint64_t traces;
};

// Stateless dpor: one complete execution per published trace, every class once (the complete
// executions are the classes: Classes::classes), and brute force agrees where it is small.
void check_published(const Published& p) {
  Benchmark program = p.make(p.n);
  auto stateless = make_dpor(std::nullopt, true, false, false);  // source sets
  const Count dpor = run_all(program, *stateless);
  const auto classes = stateless->classes();
  REQUIRE(classes.has_value());
  INFO(program.name() << ": published " << p.traces << " traces; dpor " << dpor.executions
                      << " executions, " << classes->classes << " classes, " << classes->redundant
                      << " sleep-set blocked");
  CHECK(stateless->exhausted());
  CHECK(classes->classes == p.traces);
  CHECK(dpor.complete == p.traces);
  CHECK(dpor.failures.empty());
  // Optimal dpor (wakeup trees): the same classes, and not one sleep-set blocked execution.
  auto optimal = make_dpor(std::nullopt, true, false, true);
  const Count best = run_all(program, *optimal);
  INFO("optimal: " << best.executions << " executions, " << optimal->classes()->redundant
                   << " sleep-set blocked");
  CHECK(optimal->exhausted());
  CHECK(optimal->classes()->classes == p.traces);
  CHECK(optimal->classes()->redundant == 0);
  CHECK(best.executions == p.traces);
  // The state cache on: never a failure fewer (there are none), and it ends.
  auto stateful = make_dpor(std::nullopt, true, true);
  const Count cached = run_all(program, *stateful);
  CHECK(stateful->exhausted());
  CHECK(cached.failures == dpor.failures);
  // dpor as it runs by default (stateless first, then the cache if that did not end): never
  // more executions than stateless dpor.
  auto by_default = make_dpor(std::nullopt, true, true, true, {}, kDporStatelessFirst);
  const Count usual = run_all(program, *by_default);
  CHECK(by_default->exhausted());
  CHECK(usual.executions <= best.executions);
  CHECK(usual.failures == dpor.failures);
}

TEST_CASE("dpor explores as many classes as published: lastzero(N)", "[published]") {
  // 2, 5, 12, 28, 64 for N = 1..5.
  const std::uint64_t traces[] = {2, 5, 12, 28, 64};
  for (int n = 1; n <= 5; ++n) check_published({lastzero, n, traces[n - 1]});
}

TEST_CASE("dpor explores as many classes as published: readers(N) = 2^N", "[published]") {
  for (int n = 1; n <= 8; ++n) check_published({readers, n, std::uint64_t{1} << n});
}

}  // namespace
}  // namespace racelab::sched

namespace racelab::sched {
namespace {

TEST_CASE("dpor explores as many classes as published: casrot(N)", "[published]") {
  // 2, 5, 14, 43, 144 for N = 2..6: a failed CAS is a read, a successful one a write.
  const std::uint64_t traces[] = {2, 5, 14, 43, 144};
  for (int n = 2; n <= 6; ++n) check_published({casrot, n, traces[n - 2]});
}

// With failures to find: every stop of lastzero's scan but the last cell is its own message.
// Stateless dpor (source sets and optimal), the state cache from the first execution and dpor by
// default find the same set, each in a class of its own.
TEST_CASE("the state cache and dpor by default find every failure stateless dpor finds",
          "[published]") {
  for (int n = 2; n <= 5; ++n) {
    Benchmark program = lastzero_failing(n);
    auto source_sets = make_dpor(std::nullopt, true, false, false);
    auto optimal = make_dpor(std::nullopt, true, false, true);
    auto cache = make_dpor(std::nullopt, true, true, true, {}, 0);
    auto by_default = make_dpor(std::nullopt, true, true, true, {}, kDporStatelessFirst);
    const Count a = run_all(program, *source_sets);
    const Count b = run_all(program, *optimal);
    const Count c = run_all(program, *cache);
    const Count d = run_all(program, *by_default);
    INFO(program.name() << ": failures " << a.failures.size() << "; executions: source sets "
                        << a.executions << ", optimal " << b.executions << ", cache "
                        << c.executions << ", by default " << d.executions);
    CHECK(a.failures.size() == static_cast<std::size_t>(n));  // a[0] .. a[n-1]
    CHECK(b.failures == a.failures);
    CHECK(c.failures == a.failures);
    CHECK(d.failures == a.failures);
    CHECK(optimal->classes()->redundant == 0);
    CHECK(d.executions <= b.executions);
    CHECK(cache->exhausted());
    CHECK(by_default->exhausted());
  }
}

TEST_CASE("dpor explores as many classes as published: indexer(N)", "[published]") {
  // 1 up to 11 threads (no two values collide), then 8^(N-11): 8 for 12, 64 for 13.
  for (int n = 10; n <= 13; ++n)
    check_published({indexer, n, n <= 11 ? 1 : std::uint64_t{1} << (3 * (n - 11))});
}

}  // namespace
}  // namespace racelab::sched

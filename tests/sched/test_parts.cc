// Alike parts (Context::part) for the states strategy: on random programs of two or three alike
// parts (each a thread, a worker, a mutex, a variable and a job queue of its own, beside a mutex,
// a variable and an event that all share), states with parts reaches every end state that every
// interleaving reaches, up to renaming parts, in fewer executions than without them.
#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catch.h"
#include "sched/engine.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::sched {
namespace {

struct Instr {
  enum Kind { kLock, kUnlock, kRead, kWrite, kCheck, kSet, kWait, kJob, kLockedJob };
  Kind kind;
  int object = 0;  // 0: the part's own mutex or variable, 1: the shared one
};
using Script = std::vector<Instr>;

// Part p's objects are made between ctx.part(p) and ctx.part(-1) (unless `declare` is false):
// thread 2p runs `script` on them, thread 2p+1 serves the part's queue. Mutex 0, variable 0 and
// the event are shared; part p's mutex and variable are number p + 1, its queue p.
class PartsSubject : public Subject, public StateSource {
 public:
  PartsSubject(std::string name, int parts, Script script, bool declare)
      : name_(std::move(name)), parts_(parts), script_(std::move(script)), declare_(declare) {}
  std::string name() const override { return name_; }
  std::string content_hash() const override { return name_; }
  const std::vector<int>& values() const { return values_; }  // each variable's writer + 1

  std::uint64_t var_digest(int var, ThreadId reader) const override {
    const int v = values_[static_cast<std::size_t>(var)];
    return v == 0 ? 0 : v == reader + 1 ? 1 : 2;
  }
  std::uint64_t part_digest(int part) const override {
    const int v = values_[static_cast<std::size_t>(part) + 1];
    return v == 0 ? 0 : (v - 1) / 2 == part ? 1 : 2;
  }
  std::uint64_t shared_digest(const StateNames& names) const override {
    const auto writer = [&](int v) { return v == 0 ? 0 : names.thread(v - 1) + 1; };
    std::uint64_t h = writer(values_[0]);
    std::vector<std::uint64_t> by_part(static_cast<std::size_t>(parts_));
    for (int p = 0; p < parts_; ++p)
      by_part[names.part(p)] = writer(values_[static_cast<std::size_t>(p) + 1]);
    for (std::uint64_t w : by_part) h = state_mix(h, w);
    return h;
  }

  void setup(Context& ctx) override {
    ctx.describe_state(*this);
    values_.assign(static_cast<std::size_t>(parts_) + 1, 0);
    mutexes_.assign(1, ctx.mutex("shared m"));
    vars_.assign(1, ctx.atomic_var("shared v"));
    queues_.clear();
    event_ = ctx.event("e");
    locked_ = ctx.label("locked job");
    plain_ = ctx.label("job");
    for (int p = 0; p < parts_; ++p) {
      if (declare_) ctx.part(p);
      mutexes_.push_back(ctx.mutex("m" + std::to_string(p)));
      vars_.push_back(ctx.atomic_var("v" + std::to_string(p)));
      queues_.push_back(ctx.queue("q" + std::to_string(p)));
      ctx.spawn("t" + std::to_string(p), body(ctx, p));
      ctx.serve(queues_.back(), ctx.spawn("w" + std::to_string(p), worker(ctx, p), true));
    }
    ctx.part(-1);
  }

 private:
  int mutex(int part, int object) const { return mutexes_[object == 0 ? part + 1 : 0]; }
  int var(int part, int object) const { return object == 0 ? part + 1 : 0; }

  Task body(Context& ctx, int part) {
    const int self = 2 * part;
    for (const Instr& in : script_) {
      const int v = var(part, in.object);
      switch (in.kind) {
        case Instr::kLock:
          co_await ctx.lock(mutex(part, in.object));
          break;
        case Instr::kUnlock:
          co_await ctx.unlock(mutex(part, in.object));
          break;
        case Instr::kRead:
          co_await ctx.read(vars_[static_cast<std::size_t>(v)]);
          break;
        case Instr::kWrite:
          co_await ctx.write(vars_[static_cast<std::size_t>(v)]);
          values_[static_cast<std::size_t>(v)] = self + 1;
          break;
        case Instr::kCheck:
          co_await ctx.read(vars_[static_cast<std::size_t>(v)]);
          ctx.check(values_[static_cast<std::size_t>(v)] == 0 ||
                        values_[static_cast<std::size_t>(v)] == self + 1,
                    "no foreign write");
          break;
        case Instr::kSet:
          co_await ctx.set(event_);
          break;
        case Instr::kWait:
          co_await ctx.wait(event_);
          break;
        case Instr::kJob:
        case Instr::kLockedJob: {
          const auto job = static_cast<int>(co_await ctx.submit(
              queues_[static_cast<std::size_t>(part)], in.kind == Instr::kJob ? plain_ : locked_));
          co_await ctx.wait_job(job);
          break;
        }
      }
    }
  }
  Task worker(Context& ctx, int part) {
    for (;;) {
      ctx.forget_past(0);
      const int job = static_cast<int>(co_await ctx.take(queues_[static_cast<std::size_t>(part)]));
      if (job < 0) co_return;
      if (ctx.execution().job_label(job) == locked_) {  // the shared mutex
        co_await ctx.lock(mutexes_[0]);
        co_await ctx.unlock(mutexes_[0]);
      }
      co_await ctx.complete(job);
    }
  }

  std::string name_;
  int parts_;
  Script script_;
  bool declare_;
  std::vector<int> mutexes_, vars_, queues_, values_;
  int event_ = -1, locked_ = -1, plain_ = -1;
};

// Where an execution ended, up to renaming parts (the least text over every renaming): its
// finding kinds, each thread's steps and pending operation, each variable's last writer.
std::string end_state(const ExecutionResult& run, const std::vector<int>& values, int parts) {
  const Execution& exec = *run.exec;
  std::vector<std::size_t> steps(exec.thread_count(), 0);
  for (const auto& st : exec.steps()) ++steps[static_cast<std::size_t>(st.thread)];
  std::set<std::string> kinds;
  for (const auto& f : run.findings) kinds.insert(f.kind);
  std::vector<int> perm(static_cast<std::size_t>(parts));
  std::iota(perm.begin(), perm.end(), 0);
  std::string least;
  do {
    const auto thread = [&](int t) { return 2 * perm[static_cast<std::size_t>(t / 2)] + t % 2; };
    const auto object = [&](int id) {
      return id == 0 ? 0 : perm[static_cast<std::size_t>(id - 1)] + 1;
    };
    std::vector<std::string> per_thread(exec.thread_count());
    for (std::size_t t = 0; t < exec.thread_count(); ++t) {
      const auto tid = static_cast<ThreadId>(t);
      std::string pending = " done";
      if (!exec.finished(tid)) {
        const Op& op = *exec.pending_op(tid);
        int id = -1;  // jobs and the event: no part's
        if (op.kind == OpKind::kLock || op.kind == OpKind::kUnlock || op.kind == OpKind::kRead ||
            op.kind == OpKind::kWrite)
          id = object(op.object);
        if (op.kind == OpKind::kTake || op.kind == OpKind::kSubmit)
          id = perm[static_cast<std::size_t>(op.object)];
        pending = " " + std::to_string(static_cast<int>(op.kind)) + ":" + std::to_string(id);
      }
      per_thread[static_cast<std::size_t>(thread(static_cast<int>(t)))] =
          std::to_string(steps[t]) + pending;
    }
    std::vector<int> renamed(values.size());
    for (std::size_t v = 0; v < values.size(); ++v) {
      const int w = values[v];
      renamed[static_cast<std::size_t>(object(static_cast<int>(v)))] =
          w == 0 ? 0 : thread(w - 1) + 1;
    }
    std::string text;
    for (const auto& k : kinds) text += k + ",";
    for (const auto& p : per_thread) text += "|" + p;
    for (int w : renamed) text += ";" + std::to_string(w);
    if (least.empty() || text < least) least = text;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return least;
}

struct Census {
  std::uint64_t executions = 0;
  std::set<std::string> end_states;
  std::set<std::string> kinds;
};

Census census(PartsSubject& subject, Strategy& strategy, int parts, std::uint64_t cap) {
  Census c;
  for (std::uint64_t i = 0; i < cap; ++i) {
    auto run = run_execution(subject, strategy, i);
    if (!run) break;
    ++c.executions;
    for (const auto& f : run->findings) c.kinds.insert(f.kind);
    if (!run->abandoned) c.end_states.insert(end_state(*run, subject.values(), parts));
  }
  return c;
}

Script random_script(std::uint64_t& state, std::size_t length) {
  const auto next = [&](std::uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % n;
  };
  Script script;
  int held = -1;
  for (std::size_t i = 0; i < length; ++i) {
    const auto pick = next(10);
    const int object = static_cast<int>(next(2));
    if (held >= 0 && pick < 4) {
      script.push_back({Instr::kUnlock, held});
      held = -1;
    } else if (held < 0 && pick < 3) {
      script.push_back({Instr::kLock, object});
      held = object;
    } else if (pick < 5) {
      script.push_back({next(2) == 0 ? Instr::kRead : Instr::kCheck, object});
    } else if (pick < 7) {
      script.push_back({Instr::kWrite, object});
    } else if (pick < 8) {
      script.push_back({next(2) == 0 ? Instr::kSet : Instr::kWait, 0});
    } else {
      script.push_back({next(2) == 0 ? Instr::kJob : Instr::kLockedJob, 0});
    }
  }
  if (held >= 0) script.push_back({Instr::kUnlock, held});
  return script;
}

int program_count() {  // the sanitizer job draws fewer
  const char* env = std::getenv("RACELAB_DPOR_PROGRAMS");
  return env != nullptr ? std::atoi(env) : 40;
}

// A random program: 2 or 3 parts running one script of `shortest` to `shortest + spread - 1`
// instructions.
struct Program {
  int parts;
  Script script;
};
Program random_program(std::uint64_t& draw, std::size_t shortest, std::uint64_t spread) {
  const int parts = 2 + static_cast<int>(draw % 2);
  Script script = random_script(draw, shortest + static_cast<std::size_t>(draw % spread));
  return {parts, std::move(script)};
}

// Every interleaving of `plain`, or nullopt when it has more than `cap`.
std::optional<Census> brute_force(PartsSubject& plain, int parts, std::uint64_t cap) {
  auto all = make_dfs(1000);
  Census brute = census(plain, *all, parts, cap);
  if (!all->exhausted()) return std::nullopt;
  return brute;
}

}  // namespace

TEST_CASE("states reaches every end state of random programs, alike parts renamed", "[parts]") {
  const int programs = program_count();
  std::uint64_t draw = 777;
  std::uint64_t with_parts = 0, without_parts = 0, brute_total = 0;
  int checked = 0;
  for (int p = 0; p < programs; ++p) {
    const auto [parts, script] = random_program(draw, 1, 3);
    PartsSubject plain("plain " + std::to_string(p), parts, script, false);
    PartsSubject alike("parts " + std::to_string(p), parts, script, true);
    const std::optional<Census> all = brute_force(plain, parts, 50'000);
    if (!all) continue;
    const Census& brute = *all;
    auto stateful = make_states();
    const Census found = census(alike, *stateful, parts, UINT64_MAX);
    auto unsorted = make_states();
    const Census apart = census(plain, *unsorted, parts, UINT64_MAX);
    INFO(alike.name() << ": " << parts << " parts, " << script.size() << " instructions; "
                      << brute.end_states.size() << " end states up to renaming in "
                      << brute.executions << " interleavings; states with parts "
                      << found.executions << " executions, without " << apart.executions);
    CHECK(stateful->exhausted());
    CHECK(found.end_states == brute.end_states);
    CHECK(found.kinds == brute.kinds);
    CHECK(apart.end_states == brute.end_states);
    CHECK(found.executions <= apart.executions);
    with_parts += found.executions;
    without_parts += apart.executions;
    brute_total += brute.executions;
    ++checked;
  }
  INFO(checked << " programs: " << brute_total << " interleavings; states " << without_parts
               << " executions without parts, " << with_parts << " with");
  CHECK(checked * 3 > programs);  // many are small enough (the sanitizer job draws fewer)
  CHECK(with_parts * 3 < without_parts * 2);  // renaming parts saves a third at least
}

// Stateful dpor (dpor_cache.h) abandons an execution where it meets a state explored before, from
// a sleep set within the current one, and adds the races of that state's summary to the stack.
// Whatever it skips, every end state any interleaving reaches must still be reached, up to
// renaming parts, with every finding kind: on programs longer than the states test's, and on the
// same programs without parts (threads renamed only where alike) and with stateless dpor beside.
TEST_CASE("stateful dpor reaches every end state of random parts programs", "[parts]") {
  const int programs = program_count();
  std::uint64_t draw = 4242;
  std::uint64_t stateful_total = 0, stateless_total = 0, brute_total = 0, hits = 0;
  int checked = 0;
  for (int p = 0; p < programs; ++p) {
    const auto [parts, script] = random_program(draw, 2, 4);
    PartsSubject plain("plain " + std::to_string(p), parts, script, false);
    PartsSubject alike("parts " + std::to_string(p), parts, script, true);
    const std::optional<Census> all = brute_force(plain, parts, 100'000);
    if (!all) continue;
    const Census& brute = *all;
    auto with_parts = make_dpor(std::nullopt, true, true);
    const Census found = census(alike, *with_parts, parts, UINT64_MAX);
    auto without_parts = make_dpor(std::nullopt, true, true);
    const Census apart = census(plain, *without_parts, parts, UINT64_MAX);
    auto stateless = make_dpor(std::nullopt, true, false);
    const Census classes = census(plain, *stateless, parts, UINT64_MAX);
    INFO(alike.name() << ": " << parts << " parts, " << script.size() << " instructions; "
                      << brute.end_states.size() << " end states up to renaming in "
                      << brute.executions << " interleavings; stateful dpor with parts "
                      << found.executions << " executions, without " << apart.executions
                      << ", stateless " << classes.executions);
    REQUIRE(with_parts->states().has_value());  // the cache was on
    CHECK(with_parts->describe() == "dpor(unbounded, states)");
    CHECK(with_parts->exhausted());
    CHECK(without_parts->exhausted());
    CHECK(found.end_states == brute.end_states);
    CHECK(found.kinds == brute.kinds);
    CHECK(apart.end_states == brute.end_states);
    CHECK(apart.kinds == brute.kinds);
    CHECK(classes.end_states == brute.end_states);
    stateful_total += found.executions;
    stateless_total += classes.executions;
    brute_total += brute.executions;
    hits += with_parts->classes()->cached;
    ++checked;
  }
  INFO(checked << " programs: " << brute_total << " interleavings; stateless dpor "
               << stateless_total << " executions, stateful with parts " << stateful_total);
  CHECK(checked * 3 > programs);
  CHECK(hits > 0);  // the cache was met, so the summaries were exercised
}

// A subject whose parts differ cannot be renamed soundly: the first digest says so.
class UnlikeParts : public Subject, public StateSource {
 public:
  std::string name() const override { return "unlike parts"; }
  std::string content_hash() const override { return "unlike"; }
  std::uint64_t var_digest(int, ThreadId) const override { return 0; }
  std::uint64_t shared_digest(const StateNames&) const override { return 0; }
  void setup(Context& ctx) override {
    ctx.describe_state(*this);
    for (int p = 0; p < 2; ++p) {
      ctx.part(p);
      const int m = ctx.mutex("m" + std::to_string(p));
      if (p == 1) ctx.mutex("extra");
      ctx.spawn("t" + std::to_string(p), body(ctx, m));
    }
    ctx.part(-1);
  }

 private:
  // Not static: clang 14 under UBSan fails to emit this coroutine as a static member ("Cannot
  // represent a difference across sections"), which the sanitizer CI job builds with.
  Task body(Context& ctx, int m) {
    co_await ctx.lock(m);
    co_await ctx.unlock(m);
  }
};

TEST_CASE("states refuses parts that are not alike", "[parts]") {
  UnlikeParts subject;
  auto stateful = make_states();
  try {
    run_execution(subject, *stateful, 0);
    FAIL("no error");
  } catch (const InvariantError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("part 1 has 2 mutexes where part 0 has 1") !=
          std::string::npos);
  }
}

}  // namespace racelab::sched

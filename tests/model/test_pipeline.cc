// The pipeline model against the H200 observations of docs/facts.md, and its rules M2-M4.
#include <fmt/format.h>

#include <cstdlib>
#include <set>
#include <string>

#include "catch.h"
#include "model/pipeline.h"
#include "model/suite.h"
#include "results/scenario_run.h"
#include "run/explore.h"
#include "sched/schedule.h"
#include "util/errors.h"

using namespace racelab;
using namespace racelab::model;
using racelab::results::ScenarioRun;
using racelab::run::explore_options;
using racelab::run::run_scenario;

namespace {

std::string source_dir() {
  const char* dir = std::getenv("RACELAB_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

ScenarioRun run_text(const std::string& text, sched::StrategyKind kind, std::uint64_t iterations,
                     int preemptions = 2) {
  Scenario s = parse_scenario(text, "inline.toml");
  sched::ExploreOptions o = explore_options(s);
  o.strategy.kind = kind;
  o.strategy.max_preemptions = preemptions;
  o.iterations = iterations;
  return run_scenario(s, o);
}

}  // namespace

std::set<std::string> kinds(const ScenarioRun& r) {
  std::set<std::string> out;
  for (const auto& f : r.result.found) out.insert(f.finding.kind);
  return out;
}

// The bundled scenarios that prove (a clean variant, a warmup that removes the races) prove with
// dpor, unbounded. Each is explored here under its own [explore], for its expectations, and checked
// against two references that must reach exactly its finding kinds: stateless dpor (one execution
// per interleaving class, the reference of the state cache: docs/concepts.md) and dfs within 2
// preemptions, exhaustive (the suite's proof before dpor; millions of executions, most of this
// test's time). test_dpor_scenarios.cc has the small unseen scenarios.
TEST_CASE("every bundled scenario's expectations hold; its dpor proof reaches bounded dfs's kinds",
          "[scenarios]") {
  const auto files = collect_scenario_files({source_dir() + "/scenarios"});
  REQUIRE(files.size() >= 11);
  int proofs = 0;
  for (const Scenario& s : load_suite(files)) {
    if (s.live) continue;  // a live case runs a real program (racelab suite; live.suite)
    ScenarioRun run = run_scenario(s, explore_options(s));
    INFO(s.name);
    CHECK(run.missing.empty());
    CHECK(run.unexpected.empty());
    if (!sched::strategy_proves(s.explore.kind)) continue;
    ++proofs;
    CHECK(s.explore.kind == sched::StrategyKind::kDpor);  // not a bounded dfs: issue 35
    REQUIRE(run.result.exhausted());
    CHECK(run.result.strategy.rfind("dpor(unbounded", 0) == 0);
    sched::ExploreOptions o = explore_options(s);
    o.shrink = false;
    o.strategy.kind = sched::StrategyKind::kDpor;
    sched::set_strategy_option(o.strategy, "--stateless");
    o.iterations = 1'000'000;
    const ScenarioRun stateless = run_scenario(s, o);
    CHECK(stateless.result.exhausted());
    CHECK(kinds(stateless) == kinds(run));
    o.strategy.kind = sched::StrategyKind::kDfs;
    o.strategy.max_preemptions = 2;
    o.iterations = 10'000'000;
    const ScenarioRun dfs = run_scenario(s, o);
    REQUIRE(dfs.result.exhausted());
    CHECK(kinds(dfs) == kinds(run));
    CHECK(run.result.executions * 100 < dfs.result.executions);
  }
  CHECK(proofs >= 8);
}

namespace {

// Everything an execution shows: its steps (with their virtual times and results), notes,
// findings, decisions and threads.
std::string everything(const sched::ExecutionResult& r) {
  const sched::Execution& e = *r.exec;
  std::string out;
  for (const sched::Step& st : e.steps())
    out += fmt::format("{} @{} ={}\n", e.describe_step(st), st.vtime, st.result);
  for (const sched::Note& n : e.notes())
    out += fmt::format("note {} {} @{}: {}\n", n.step, n.thread, n.vtime, n.text);
  for (const sched::Finding& f : r.findings)
    out += fmt::format("{} at {} by {}: {}\n", f.kind, f.step, f.thread, f.message);
  for (sched::ThreadId t : r.choices) out += fmt::format("{} ", t);
  for (sched::ThreadId t = 0; t < static_cast<sched::ThreadId>(e.thread_count()); ++t)
    out += fmt::format("\n{} {} {}", e.thread_name(t), e.finished(t), e.vtime(t));
  return out + fmt::format("\ncompleted {} preemptions {}", r.completed, r.preemptions);
}

}  // namespace

TEST_CASE("an Execution recycled from another subject's run runs as a fresh one", "[pipeline]") {
  // run_execution reuses the Execution of a result no longer held (engine.cc). Subjects with
  // different objects, threads, labels and findings, in both orders: nothing of the earlier run
  // may show in the later one.
  PipelineModel big(
      load_scenario(source_dir() + "/scenarios/recompile/eight-gpus-long-context.toml"));
  PipelineModel lazy(load_scenario(source_dir() + "/scenarios/deadlock/lazy-2-drafters.toml"));
  for (int order = 0; order < 2; ++order) {
    PipelineModel& first = order == 0 ? big : lazy;
    PipelineModel& second = order == 0 ? lazy : big;
    for (std::uint64_t i = 0; i < 10; ++i) {
      auto random = sched::make_random(7);
      // Held while `fresh` runs, so that `fresh` gets a new Execution.
      const auto held = sched::run_execution(first, *random, i);
      const auto fresh = sched::run_execution(second, *random, i);
      const sched::Execution* used = nullptr;
      {
        const auto earlier = sched::run_execution(first, *random, i + 1);
        used = earlier->exec.get();
      }
      const auto again = sched::run_execution(second, *random, i);
      CHECK(again->exec.get() == used);
      CHECK(everything(*again) == everything(*fresh));
    }
  }
}

TEST_CASE("one lazy drafter never deadlocks (seen: pass), two always can (seen: 3/3 hang)",
          "[pipeline]") {
  auto one = run_text("name = \"one\"\n[pipeline]\ndrafters_per_device = 1\n",
                      sched::StrategyKind::kDfs, 1000000, 3);
  CHECK(one.result.exhausted());
  CHECK(one.result.find("deadlock") == nullptr);
  CHECK(one.result.find("duplicate_compile") == nullptr);
  auto two = run_text("name = \"two\"\n", sched::StrategyKind::kPct, 2000);
  const auto* d = two.result.find("deadlock");
  REQUIRE(d != nullptr);
  // The cycle of docs/facts.md, every thread named with what it waits for.
  CHECK(d->finding.cycle.size() == 2);
  CHECK(d->finding.message.find("holds compile_lock and waits for job") != std::string::npos);
  CHECK(d->finding.message.find("trace autograd.grad from drafter") != std::string::npos);
  CHECK(d->finding.message.find("runs job") != std::string::npos);
  CHECK(d->finding.message.find("(backward from drafter") != std::string::npos);
  CHECK(d->finding.message.find("waits for compile_lock held by drafter") != std::string::npos);
}

TEST_CASE("one drafter per GPU cannot deadlock: each device has its own worker", "[pipeline]") {
  auto r = run_text("name = \"x\"\n[pipeline]\ndevices = 2\ndrafters_per_device = 1\nsteps = 1\n",
                    sched::StrategyKind::kDfs, 2000000, 1);
  CHECK(r.result.exhausted());
  CHECK(r.result.find("deadlock") == nullptr);
  CHECK(r.result.find("compile_after_warmup") != nullptr);
}

TEST_CASE("the recompile budget is shared by every device and spent by warmup (F6, F7)",
          "[pipeline]") {
  const std::string base =
      "name = \"x\"\n[pipeline]\ndevices = 8\ndrafters_per_device = 1\nsteps = 1\n"
      "seq_len = 68048\nheads = 16\n[warmup]\nmode = \"sequential\"\nseq_len = 1024\n";
  auto r = run_text(base, sched::StrategyKind::kRandom, 20);
  const auto* oom = r.result.find("oom");
  REQUIRE(oom != nullptr);
  CHECK(oom->finding.message.find("Tried to allocate 276.00 GiB") != std::string::npos);
  CHECK(oom->finding.message.find("total capacity of 141.00 GiB") != std::string::npos);
  REQUIRE(r.result.find("recompile_limit") != nullptr);
  // With one more entry of budget the first device recompiles dynamically and nothing falls back.
  auto roomy = run_text(base + "[torch]\nrecompile_limit = 16\n", sched::StrategyKind::kRandom, 20);
  CHECK(roomy.result.find("recompile_limit") == nullptr);
  CHECK(roomy.result.find("oom") == nullptr);
  // A GPU large enough for the scores survives the fallback.
  auto big = run_text(base + "[gpu]\nmemory_gib = 300\n", sched::StrategyKind::kRandom, 20);
  CHECK(big.result.find("recompile_limit") != nullptr);
  CHECK(big.result.find("oom") == nullptr);
}

TEST_CASE("flex_eager allocates B x H x L x L fp32 scores and never compiles", "[pipeline]") {
  auto r = run_text(
      "name = \"x\"\n[pipeline]\nattention = \"flex_eager\"\nseq_len = 65536\n"
      "heads = 16\n[gpu]\nmemory_gib = 141\n",
      sched::StrategyKind::kRandom, 5);
  const auto* oom = r.result.find("oom");
  REQUIRE(oom != nullptr);
  CHECK(oom->finding.message.find("Tried to allocate 256.00 GiB") != std::string::npos);
  CHECK(r.result.find("compile_after_warmup") == nullptr);
}

TEST_CASE("automatic_dynamic off: every new length is a fixed recompile", "[pipeline]") {
  const std::string text =
      "name = \"x\"\n[pipeline]\ndrafters_per_device = 1\nsteps = 12\n"
      "seq_len = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]\n";
  auto dynamic = run_text(text, sched::StrategyKind::kRandom, 3);
  CHECK(dynamic.result.find("recompile_limit") == nullptr);  // one static, then one dynamic entry
  auto fixed =
      run_text(text + "[torch]\nautomatic_dynamic = false\n", sched::StrategyKind::kRandom, 3);
  CHECK(fixed.result.find("recompile_limit") != nullptr);  // nine lengths, eight entries
}

TEST_CASE("format_size matches PyTorch's units and decimals", "[pipeline]") {
  CHECK(PipelineModel::format_size(512) == "512 bytes");
  CHECK(PipelineModel::format_size(2048) == "2.00 KiB");
  CHECK(PipelineModel::format_size(20u << 20) == "20.00 MiB");
  CHECK(PipelineModel::format_size(std::uint64_t{256} << 30) == "256.00 GiB");
}

TEST_CASE("warmup costs virtual time; verdicts do not depend on it", "[pipeline]") {
  auto lazy = run_text("name = \"x\"\n", sched::StrategyKind::kPct, 10);
  auto warm =
      run_text("name = \"x\"\n[warmup]\nmode = \"sequential\"\n", sched::StrategyKind::kPct, 10);
  CHECK(lazy.warmup_seconds == 0);
  CHECK(warm.warmup_seconds >= 10.0);  // a forward (~7 s) and a backward (~3 s) compile
  auto sep = run_text(
      "name = \"x\"\n[pipeline]\ndrafters_per_device = 1\n"
      "[warmup]\nmode = \"separate_process\"\n",
      sched::StrategyKind::kPct, 10);
  auto none = run_text("name = \"x\"\n[pipeline]\ndrafters_per_device = 1\n",
                       sched::StrategyKind::kPct, 10);
  CHECK(sep.makespan_seconds < none.makespan_seconds);  // F8: warm disk caches, shorter compiles
}

TEST_CASE("a schedule replays only against the scenario content it was recorded with",
          "[pipeline]") {
  sched::Schedule s;
  s.subject_name = "lazy-2-drafters";
  s.subject_path = source_dir() + "/scenarios/deadlock/lazy-2-drafters.toml";
  s.subject_hash = load_scenario(s.subject_path).hash;
  CHECK(scenario_for_schedule(s, "s.json", "").name == "lazy-2-drafters");
  s.subject_hash = "0000000000000000";
  try {
    (void)scenario_for_schedule(s, "s.json", "");
    FAIL("expected a refusal");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("the scenario changed since recording") != std::string::npos);
  }
}

namespace {

// The thread a fx_trace_error message names as the caller: "(drafter 0.1 called ...".
std::string fx_caller(const std::string& message) {
  const auto open = message.find('(');
  const auto end = message.find(" called its compiled flex_attention");
  REQUIRE(open != std::string::npos);
  REQUIRE(end != std::string::npos);
  return message.substr(open + 1, end - open - 1);
}

}  // namespace

TEST_CASE("a drafter entering its compiled wrapper while another traces raises (F10, M2a)",
          "[pipeline]") {
  auto r = run_text("name = \"x\"\n", sched::StrategyKind::kPct, 2000);
  const auto* fx = r.result.find("fx_trace_error");
  REQUIRE(fx != nullptr);
  const std::string& m = fx->finding.message;
  CHECK(m.rfind("RuntimeError: Detected that you are using FX to symbolically trace a "
                "dynamo-optimized function. This is not supported at the moment.",
                0) == 0);
  // It names the caller and the thread that was tracing, which are different drafters.
  const std::string caller = fx_caller(m);
  const auto tracer_at = m.find("while ");
  REQUIRE(tracer_at != std::string::npos);
  const std::string tracer = m.substr(tracer_at + 6, m.find(" was inside make_fx") - tracer_at - 6);
  CHECK(caller.rfind("drafter 0.", 0) == 0);
  CHECK(tracer.rfind("drafter 0.", 0) == 0);
  CHECK(caller != tracer);
  // The exception ends the caller: it takes no step after the entry check that raised.
  const sched::Execution& exec = *fx->result.exec;
  bool after = false;
  for (const sched::Step& st : exec.steps()) {
    if (static_cast<std::int64_t>(&st - exec.steps().data()) > fx->finding.step &&
        exec.thread_name(st.thread) == caller) {
      after = true;
    }
  }
  CHECK_FALSE(after);
}

TEST_CASE("a drafter that raises leaves its `with` lock and ends (M2a)", "[pipeline]") {
  // Three drafters, a shared lock around each first step, and a second length: the first drafter's
  // step-2 recompile traces while the next one runs its first step under the lock and raises. If
  // the lock stayed held, the third drafter would wait for it forever.
  const std::string text =
      "name = \"x\"\n[pipeline]\ndrafters_per_device = 3\nseq_len = [1024, 2048]\n"
      "[warmup]\nmode = \"lock_first_step\"\n";
  auto r = run_text(text, sched::StrategyKind::kRandom, 3000);
  const auto* fx = r.result.find("fx_trace_error");
  REQUIRE(fx != nullptr);
  const auto* d = r.result.find("deadlock");
  if (d != nullptr) CHECK(d->finding.message.find("warmup_lock") == std::string::npos);
  // In the execution that raised, the caller raised inside its first step, under warmup_lock,
  // and released it on the way out: its last step is the unlock.
  const sched::Execution& exec = *fx->result.exec;
  const std::string caller = fx_caller(fx->finding.message);
  int held = 0, warmup_locks = 0;
  std::string last;
  for (const sched::Step& st : exec.steps()) {
    if (exec.thread_name(st.thread) != caller) continue;
    if (st.op.kind == sched::OpKind::kLock) ++held;
    if (st.op.kind == sched::OpKind::kUnlock) --held;
    last = exec.describe_step(st);
    if (last.find("lock warmup_lock") != std::string::npos) ++warmup_locks;
  }
  INFO(last);
  CHECK(warmup_locks == 2);  // the lock and its release
  CHECK(held == 0);
  CHECK(last.find("unlock warmup_lock") != std::string::npos);
}

TEST_CASE("a thread-local FX flag (after 2.11) has no entry-check crash", "[pipeline]") {
  Scenario s = parse_scenario("name = \"x\"\n", "inline.toml");
  sched::ExploreOptions o = explore_options(s);
  o.strategy.kind = sched::StrategyKind::kPct;
  o.iterations = 2000;
  TorchProfile later = profile_2_11();
  later.fx_tracing_process_wide = false;
  auto r = sched::explore([&] { return std::make_unique<PipelineModel>(s, later); }, o);
  CHECK(r.find("fx_trace_error") == nullptr);
  CHECK(r.find("deadlock") != nullptr);  // the lazy-compile cycle does not need the flag
}

TEST_CASE("does upgrading fix it? the torch-2.14 twins under profiles 2.11 and 2.14",
          "[pipeline]") {
  // Each twin (scenarios/torch-2.14/) names profile 2.14; --torch 2.11 (apply_torch) runs the
  // same file under 2.11. Both searches are dpor's, every interleaving.
  struct Twin {
    const char* file;
    bool deadlock_stays;
  };
  for (const Twin& twin : {Twin{"lazy-2-drafters", true}, Twin{"warmup-other-length", false},
                           Twin{"eager-flex-trace", false}}) {
    INFO(twin.file);
    const Scenario newer =
        load_scenario(source_dir() + "/scenarios/torch-2.14/" + twin.file + ".toml");
    REQUIRE(newer.profile == "2.14");
    const ScenarioRun upgraded = run_scenario(newer, explore_options(newer));
    REQUIRE(upgraded.result.exhausted());
    CHECK(upgraded.result.find("fx_trace_error") == nullptr);
    CHECK((upgraded.result.find("deadlock") != nullptr) == twin.deadlock_stays);

    Scenario older = newer;
    apply_torch(older, "2.11");
    CHECK(older.hash != newer.hash);  // another subject: its schedules are its own
    const ScenarioRun before = run_scenario(older, explore_options(older));
    CHECK(before.result.find("fx_trace_error") != nullptr);
    CHECK((before.result.find("deadlock") != nullptr) == twin.deadlock_stays);
  }
  // No twin file for one drafter per GPU (its bounded-dfs cross-check under 2.14 takes 7.9
  // million executions): the bundled scenario under --torch 2.14 proves it clean.
  Scenario per_gpu =
      load_scenario(source_dir() + "/scenarios/deadlock/lazy-one-drafter-per-gpu.toml");
  apply_torch(per_gpu, "2.14");
  const ScenarioRun clean = run_scenario(per_gpu, explore_options(per_gpu));
  REQUIRE(clean.result.exhausted());
  CHECK(clean.result.find("fx_trace_error") == nullptr);
  CHECK(clean.result.find("deadlock") == nullptr);
}

TEST_CASE("--torch refuses an unknown version and a live case in one line", "[pipeline]") {
  Scenario s = parse_scenario("name = \"x\"\n", "s.toml");
  try {
    apply_torch(s, "9.9");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "--torch: unknown torch version \"9.9\": the profiles cover 2.10-2.13 (profile 2.11), "
          "2.14-2.15 (profile 2.14)");
  }
  apply_torch(s, "2.15.0");
  CHECK(s.profile == "2.15.0");
  CHECK(s.hash == torch_hash(s.content, "2.14"));
}

TEST_CASE("a dynamic recompile compiles its backward ahead of time on the drafter (F11, M2e)",
          "[pipeline]") {
  // One training step keeps the proof small (308,440 executions); the bundled
  // warmup-other-length proves the two-step pipeline.
  const std::string base =
      "name = \"x\"\n[pipeline]\nsteps = 1\nseq_len = 1536\n[warmup]\nmode = \"sequential\"\n"
      "seq_len = 1024\n";
  // Default automatic_dynamic: the cycle cannot form (the worker never compiles), the crash can.
  auto dynamic = run_text(base, sched::StrategyKind::kDfs, 4000000, 2);
  CHECK(dynamic.result.exhausted());
  CHECK(dynamic.result.find("deadlock") == nullptr);
  REQUIRE(dynamic.result.find("fx_trace_error") != nullptr);
  const auto* late = dynamic.result.find("compile_after_warmup");
  REQUIRE(late != nullptr);
  // Every compile after the warmup is on a drafter: the dynamic forward and its backward.
  bool worker_compiles = false, ahead_of_time = false;
  for (const sched::Note& n : late->result.exec->notes()) {
    const std::string& who = late->result.exec->thread_name(n.thread);
    // The worker compiles the warmup's backward (L=1024), and nothing else.
    if (who.rfind("autograd", 0) == 0 && n.text.rfind("compile backward", 0) == 0 &&
        n.text.find("L=1024") == std::string::npos) {
      worker_compiles = true;
    }
    if (n.text.find("backward (cuda:0, dynamic) ahead of time") != std::string::npos) {
      ahead_of_time = true;
      CHECK(who.rfind("drafter 0.", 0) == 0);
    }
  }
  CHECK(ahead_of_time);
  CHECK_FALSE(worker_compiles);
  // automatic_dynamic off: a fixed recompile whose backward the worker compiles lazily (F2).
  auto fixed =
      run_text(base + "[torch]\nautomatic_dynamic = false\n", sched::StrategyKind::kPct, 2000);
  CHECK(fixed.result.find("deadlock") != nullptr);
  CHECK(fixed.result.find("fx_trace_error") != nullptr);
}

TEST_CASE("eager flex_attention traces outside compile_lock and crashes another drafter (F12, M2f)",
          "[pipeline]") {
  Scenario s = parse_scenario("name = \"x\"\n[pipeline]\nattention = \"flex_eager\"\nsteps = 1\n",
                              "inline.toml");
  sched::ExploreOptions o = explore_options(s);
  o.strategy.kind = sched::StrategyKind::kDfs;
  o.strategy.max_preemptions = 2;
  o.iterations = 1000000;
  auto seen = sched::explore([&] { return std::make_unique<PipelineModel>(s); }, o);
  CHECK(seen.exhausted());
  const auto* fx = seen.find("fx_trace_error");
  REQUIRE(fx != nullptr);
  CHECK(fx->finding.message.find("eager flex_attention call, outside compile_lock (F12)") !=
        std::string::npos);
  CHECK(seen.find("deadlock") == nullptr);  // nothing compiles: no lock to wait for
  // Without F12 (a torch whose eager path does not trace), eager drafters cannot crash each other.
  TorchProfile quiet = profile_2_11();
  quiet.eager_flex_traces = false;
  auto none = sched::explore([&] { return std::make_unique<PipelineModel>(s, quiet); }, o);
  CHECK(none.exhausted());
  CHECK(none.find("fx_trace_error") == nullptr);
}

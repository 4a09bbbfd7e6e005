// The pipeline model against the H200 observations of docs/facts.md, and its rules M2-M4.
#include <cstdlib>

#include "catch.h"
#include "model/pipeline.h"
#include "model/suite.h"
#include "sched/schedule.h"
#include "util/errors.h"

using namespace racelab;
using namespace racelab::model;

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

TEST_CASE("every bundled scenario's expectations hold", "[scenarios]") {
  const auto files = collect_scenario_files({source_dir() + "/scenarios"});
  REQUIRE(files.size() >= 11);
  for (const Scenario& s : load_suite(files)) {
    ScenarioRun run = run_scenario(s, explore_options(s));
    INFO(s.name);
    CHECK(run.missing.empty());
    CHECK(run.unexpected.empty());
    if (s.explore.kind == sched::StrategyKind::kDfs) CHECK(run.result.exhausted());
  }
}

TEST_CASE("one lazy drafter never deadlocks (seen: pass), two always can (seen: 3/3 hang)",
          "[pipeline]") {
  auto one = run_text("name = \"one\"\n[pipeline]\ndrafters_per_device = 1\n",
                      sched::StrategyKind::kDfs, 1000000, 3);
  CHECK(one.result.exhausted());
  CHECK(one.result.find("deadlock") == nullptr);
  CHECK(one.result.find("duplicate_compile") == nullptr);
  auto two = run_text("name = \"two\"\n", sched::StrategyKind::kPct, 200);
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

// racelab merge's reader of a shard's report.json and summary.json (report/shard_read.h): what a
// good file reads back as, and the exact line each malformed one is refused with.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catch.h"
#include "model/scenario.h"
#include "report/report.h"
#include "report/shard_read.h"
#include "results/scenario_run.h"
#include "run/explore.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/document.h"
#include "util/errors.h"
#include "util/files.h"

using namespace racelab;
namespace fs = std::filesystem;

namespace {

// A fresh directory holding `name` with `text` (none where `text` is null).
std::string shard_dir(const std::string& tag, const char* name, const char* text) {
  const fs::path dir = fs::temp_directory_path() / ("racelab-test-shard-read-" + tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (text) std::ofstream(dir / name, std::ios::binary) << text;
  return dir.string();
}

template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kHead =
    fmt::format("\"format\": \"{}\", \"version\": {}", kReportFormat, kReportVersion);

}  // namespace

TEST_CASE("a shard's report.json reads back typed", "[formats]") {
  const std::string text = "{" + kHead + R"J(,
    "partition": {"shard": 1, "shards": 2}, "scenario": "x", "scenario_hash": "abc",
    "scenario_path": "x.toml", "strategy": "dfs", "strategy_description": "dfs (depth 5)",
    "seed": 7, "iterations": 30, "strategy_params": {"depth": 5, "max_preemptions": 2},
    "dfs_split": {"subtrees": 4, "ran": [{"index": 1, "executions": 3, "redundant": 0,
                                          "complete": true, "steps": 40}]},
    "executions": 3, "steps": 40, "seconds": 0.5, "stopped_by": "time_limit",
    "findings": [{"kind": "deadlock", "execution": 2, "subtree": 1, "preemptions": 1,
                  "preemptions_before_shrink": 3}],
    "interleavings": {"saturated": true, "fingerprints": {"0a": 2, "ff": 1}},
    "determinism": {"ok": true}, "virtual_time": {"warmup_s": 1.5, "makespan_s": 4.0}})J";
  const std::string dir = shard_dir("good", "report.json", text.c_str());
  const report::ShardReport r = report::read_shard_report(dir);
  CHECK(r.dir == dir);
  CHECK(r.is_shard);
  CHECK(r.shards.get() == 2);
  CHECK(r.shard.get() == 1);
  REQUIRE(r.identity.size() == 6);
  CHECK(std::string(r.identity[0].key) == "scenario");
  CHECK(r.identity[0].text() == "\"x\"");
  CHECK(r.identity[5].text() == R"({"depth":5,"max_preemptions":2})");
  CHECK(r.identity[3].same_as(r.identity[3]));
  CHECK(!r.identity[3].same_as(r.identity[4]));
  CHECK(r.scenario_path.get() == "x.toml");
  CHECK(r.scenario_hash.get() == "abc");
  CHECK(!r.torch);
  CHECK(r.strategy.get() == sched::StrategyKind::kDfs);
  CHECK(r.strategy_description.get() == "dfs (depth 5)");
  CHECK(r.seed.get() == 7);
  CHECK(r.depth.get() == 5);
  CHECK(r.max_preemptions.get() == 2);
  CHECK(r.iterations.get() == 30);
  CHECK(r.subtrees.get() == 4);
  CHECK(r.subtrees_text == "4");
  REQUIRE(r.ran.get().size() == 1);
  CHECK(r.ran.get()[0].index.get() == 1);
  CHECK(r.ran.get()[0].executions.get() == 3);
  CHECK(r.ran.get()[0].complete.get());
  CHECK(r.ran.get()[0].steps.get() == 40);
  CHECK(r.executions.get() == 3);
  CHECK(r.seconds.get() == 0.5);
  CHECK(r.stop == sched::StopReason::kTimeLimit);
  REQUIRE(r.findings.get().size() == 1);
  const report::ShardFinding& f = r.findings.get()[0];
  CHECK(f.kind.get() == "deadlock");
  CHECK(f.execution.get() == 2);
  REQUIRE(f.subtree);
  CHECK(f.subtree->get() == 1);
  CHECK(f.preemptions.get() == 1);
  CHECK(f.preemptions_before_shrink.get() == 3);
  REQUIRE(r.interleavings);
  CHECK(r.interleavings->saturated.get());
  REQUIRE(r.interleavings->fingerprints.size() == 2);
  CHECK(r.interleavings->fingerprints[0].get() ==
        std::make_pair(std::uint64_t{10}, std::uint64_t{2}));
  CHECK(r.determinism);
  CHECK(r.warmup_seconds.get() == 1.5);
  CHECK(r.makespan_seconds.get() == 4.0);
  fs::remove_all(dir);
}

TEST_CASE("our own explore report.json reads back as the run that wrote it", "[formats]") {
  const model::Scenario sc = model::parse_scenario(
      "name = \"x\"\n[explore]\nstrategy = \"dfs\"\niterations = 30\n", "x.toml");
  const results::ScenarioRun run = run::run_scenario(sc, run::explore_options(sc));
  const report::ExploreOutput out = report::write_explore_outputs(run, "");
  const std::string dir = shard_dir("ours", "report.json", nullptr);
  write_file_atomic(fs::path(dir) / "report.json", document_text(out.report));
  const report::ShardReport r = report::read_shard_report(dir);
  CHECK(!r.is_shard);  // an unsharded run: merge refuses it
  CHECK(r.strategy.get() == sched::StrategyKind::kDfs);
  CHECK(r.iterations.get() == 30);
  CHECK(r.scenario_hash.get() == sc.hash);
  CHECK(r.stop == run.result.stop);
  CHECK(r.findings.get().size() == out.found.size());
  fs::remove_all(dir);
}

TEST_CASE("a shard's malformed report.json is refused in merge's own words", "[formats]") {
  const std::string none = shard_dir("none", "report.json", nullptr);
  CHECK(refusal([&] { report::read_shard_report(none); }) ==
        none + ": no report.json (not an explore --out directory)");

  const std::string cut = shard_dir("cut", "report.json", "x");
  CHECK(refusal([&] { report::read_shard_report(cut); }) ==
        (fs::path(cut) / "report.json").string() + ": byte 1: invalid JSON");

  // Fields are refused where merge needs them, each in one line naming the file and the key.
  const std::string bad_text =
      "{" + kHead + R"(, "partition": {"shard": 0}, "iterations": "many", "strategy": "bfs"})";
  const std::string bad = shard_dir("bad", "report.json", bad_text.c_str());
  const report::ShardReport r = report::read_shard_report(bad);
  CHECK(r.is_shard);
  CHECK(r.shard.get() == 0);
  CHECK(refusal([&] { r.shards.get(); }) == bad + "/report.json: missing 'shards'");
  CHECK(refusal([&] { r.seed.get(); }) == bad + "/report.json: missing 'seed'");
  CHECK(refusal([&] { r.iterations.get(); }) ==
        bad + "/report.json: 'iterations' has the wrong type");
  CHECK(refusal([&] { r.depth.get(); }) == bad + "/report.json: missing 'depth'");
  CHECK(refusal([&] { r.strategy.get(); }) ==
        refusal([] { sched::parse_strategy("bfs"); }));  // the command line's own refusal
  CHECK(!r.identity[0].value);
  CHECK(r.identity[0].text() == "(missing)");
  CHECK(!r.interleavings);
  for (const std::string& d : {none, cut, bad}) fs::remove_all(d);
}

TEST_CASE("a shard's summary.json reads back typed, or is refused in one line", "[formats]") {
  const std::string text = fmt::format(
      R"({{"format": "{}", "version": {}, "partition": {{"shard": 0, "shards": 2}},
          "scenarios": [{{"scenario": "a"}}, {{"scenario": "b", "live": true, "verdict": "pass"}}]}})",
      kSummaryFormat, kSummaryVersion);
  const std::string dir = shard_dir("summary", "summary.json", text.c_str());
  const report::ShardSummary s = report::read_shard_summary(dir);
  CHECK(s.shard_zero.get());
  REQUIRE(s.scenarios.size() == 2);
  CHECK(!s.scenarios[0].live.get());
  CHECK(s.scenarios[0].scenario.get() == "a");
  CHECK(s.scenarios[1].live.get());
  CHECK(s.scenarios[1].entry["verdict"] == "pass");  // a live case, kept as judged

  const std::string cut = shard_dir("summary-cut", "summary.json", "x");
  CHECK(refusal([&] { report::read_shard_summary(cut); }) ==
        cut + "/summary.json: byte 1: invalid JSON");
  const std::string other = shard_dir("summary-other", "summary.json",
                                      "{\"format\": \"racelab-report\", \"version\": 1}");
  CHECK(refusal([&] { report::read_shard_summary(other); }) ==
        (fs::path(other) / "summary.json").string() +
            ": this is a \"racelab-report\" file, not the summary.json of racelab suite --out "
            "(\"format\": \"racelab-summary\")");
  for (const std::string& d : {dir, cut, other}) fs::remove_all(d);
}

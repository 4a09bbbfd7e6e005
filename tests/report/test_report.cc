// The verdict contract (pass / fail / inconclusive), report order of findings, and the command
// line's own words (suggestions, option checks, file kinds).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "alloc/report.h"
#include "catch.h"
#include "live/torch/workload.h"
#include "report/check_json.h"
#include "report/cli.h"
#include "report/junit.h"
#include "report/live_report_read.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "report/schedule_paths.h"
#include "results/check_result.h"
#include "results/scenario_run.h"
#include "run/explore.h"
#include "run/live_case.h"
#include "run/shrink.h"
#include "sched/kinds.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/html.h"

using namespace racelab;
namespace fs = std::filesystem;

namespace {

results::ScenarioRun make_run(sched::StrategyKind strategy, sched::StopReason stop,
                              std::vector<std::string> must, std::vector<std::string> must_not,
                              std::vector<std::string> found) {
  results::ScenarioRun run;
  run.scenario.name = "s";
  run.scenario.must = std::move(must);
  run.scenario.must_not = std::move(must_not);
  run.options.strategy.kind = strategy;
  run.options.iterations = 1000;
  run.result.strategy = "dfs(max_preemptions=2)";
  run.result.executions = 1000;
  run.result.stop = stop;
  for (const auto& k : found) {
    sched::FoundKind f;
    f.finding.kind = k;
    f.finding.message = k + ": something";
    run.result.found.push_back(std::move(f));
  }
  run::judge(run);
  return run;
}

}  // namespace

TEST_CASE("a proving strategy passes a must_not only when its space was exhausted", "[verdict]") {
  using sched::StopReason;
  using sched::StrategyKind;
  auto done = make_run(StrategyKind::kDfs, StopReason::kExhausted, {}, {"deadlock"}, {});
  CHECK(done.verdict() == results::Outcome::kPass);
  CHECK(done.verdict_reason().empty());
  CHECK(done.coverage().find("exhaustive within the bound") != std::string::npos);
  for (StopReason cut : {StopReason::kBudget, StopReason::kTimeLimit, StopReason::kInterrupted}) {
    auto run = make_run(StrategyKind::kDfs, cut, {}, {"deadlock"}, {"compile_after_warmup"});
    INFO(sched::stop_reason_name(cut));
    CHECK(run.holds());
    CHECK(run.verdict() == results::Outcome::kInconclusive);
    CHECK(run.verdict_reason().rfind("inconclusive: the dfs search was cut short by ", 0) == 0);
    CHECK(run.coverage().find("not a proof") != std::string::npos);
    CHECK(results::explore_exit_code(run) == kExitFound);
  }
  // A must_not that is found fails, cut short or not: fail wins over inconclusive.
  auto found = make_run(StrategyKind::kDfs, StopReason::kBudget, {}, {"deadlock"}, {"deadlock"});
  CHECK(found.verdict() == results::Outcome::kFail);
  CHECK(found.verdict_reason() == "found but must not occur: deadlock");
  // Finding every `must` kind is a witness: no exhaustion needed.
  auto witness = make_run(StrategyKind::kDfs, StopReason::kBudget, {"deadlock"}, {}, {"deadlock"});
  CHECK(witness.verdict() == results::Outcome::kPass);
  // A `must` kind missed by a search cut short: it showed nothing either way (issue 36).
  auto missing = make_run(StrategyKind::kDfs, StopReason::kBudget, {"deadlock"}, {}, {});
  CHECK(missing.verdict() == results::Outcome::kInconclusive);
  CHECK(missing.verdict_reason().rfind(
            "inconclusive: expected but not found: deadlock, but the dfs search was cut short by "
            "the execution cap",
            0) == 0);
  // Missed by a search that covered its bounded space: it is not there.
  auto absent = make_run(StrategyKind::kDfs, StopReason::kExhausted, {"deadlock"}, {}, {});
  CHECK(absent.verdict() == results::Outcome::kFail);
  CHECK(absent.verdict_reason() == "expected but not found: deadlock");
}

TEST_CASE("sampling strategies pass on what they sampled and say so", "[verdict]") {
  for (auto k : {sched::StrategyKind::kRandom, sched::StrategyKind::kPct}) {
    auto run = make_run(k, sched::StopReason::kBudget, {}, {"deadlock"}, {});
    run.result.strategy = "pct(depth=3, seed=1)";
    CHECK(run.verdict() == results::Outcome::kPass);
    CHECK(run.coverage() == "sampled 1000 executions (pct(depth=3, seed=1)), not a proof");
    CHECK(run.coverage_brief() == "1000 executions sampled, not a proof");
  }
}

TEST_CASE("evidence kinds never make explore exit 1 on their own", "[verdict]") {
  using sched::StopReason;
  using sched::StrategyKind;
  auto evidence = make_run(StrategyKind::kDfs, StopReason::kExhausted, {}, {"deadlock"},
                           {"compile_after_warmup", "duplicate_compile", "recompile_limit"});
  CHECK(evidence.failures().empty());
  CHECK(results::explore_exit_code(evidence) == kExitOk);
  auto failure = make_run(StrategyKind::kPct, StopReason::kBudget, {"deadlock"}, {}, {"deadlock"});
  CHECK(results::explore_exit_code(failure) == kExitFound);
  // No expectations: only failure kinds count.
  auto bare = make_run(StrategyKind::kDfs, StopReason::kBudget, {}, {}, {"duplicate_compile"});
  CHECK(results::explore_exit_code(bare) == kExitOk);
}

TEST_CASE("findings are in registry rank order, the same order whatever the discovery order",
          "[verdict]") {
  auto a = make_run(sched::StrategyKind::kPct, sched::StopReason::kBudget, {}, {},
                    {"compile_after_warmup", "duplicate_compile", "fx_trace_error", "deadlock"});
  auto b = make_run(sched::StrategyKind::kPct, sched::StopReason::kBudget, {}, {},
                    {"fx_trace_error", "deadlock", "compile_after_warmup", "duplicate_compile"});
  std::vector<std::string> ka, kb;
  for (const auto& f : a.result.found) ka.push_back(f.finding.kind);
  for (const auto& f : b.result.found) kb.push_back(f.finding.kind);
  CHECK(ka == std::vector<std::string>{"deadlock", "fx_trace_error", "duplicate_compile",
                                       "compile_after_warmup"});
  CHECK(ka == kb);
  // The expectations' lists follow the same order, whatever the scenario's order.
  auto c =
      make_run(sched::StrategyKind::kPct, sched::StopReason::kBudget, {"duplicate_compile", "oom"},
               {"compile_after_warmup", "deadlock"}, {"compile_after_warmup", "deadlock"});
  CHECK(c.unexpected == std::vector<std::string>{"deadlock", "compile_after_warmup"});
  CHECK(c.missing == std::vector<std::string>{"oom", "duplicate_compile"});
  CHECK(c.verdict_reason() ==
        "expected but not found: oom, duplicate_compile; found but must not occur: deadlock, "
        "compile_after_warmup");
  std::vector<sched::Finding> fs = {{"duplicate_compile", "x", -1, {}, {}},
                                    {"deadlock", "deadlock: y", -1, {}, {}}};
  auto o = report::ordered(fs);
  CHECK(o.front()->kind == "deadlock");
  CHECK(report::message_text(*o.front()) == "y");
  CHECK(report::message_text(*o.back()) == "x");
}

TEST_CASE("report order: by rank, then by name, for kinds the registry does not know too",
          "[verdict]") {
  CHECK(sched::kinds::before("deadlock", "hang"));
  CHECK_FALSE(sched::kinds::before("hang", "deadlock"));
  CHECK_FALSE(sched::kinds::before("deadlock", "deadlock"));
  CHECK(sched::kinds::before("crash", "oom"));                          // one rank: by name
  CHECK(sched::kinds::before("compile_after_warmup", "a_table_kind"));  // unknown kinds last
  CHECK(sched::kinds::before("a_table_kind", "b_table_kind"));
}

TEST_CASE("a finding's JSON: kind, message, where it was found, details, cycle", "[verdict]") {
  const sched::Finding f{"deadlock", "deadlock: a ...", 7, {"a waits", "b waits"}, {"a", "b"}};
  CHECK(report::finding_json(f, {{"decision", f.step}}).dump() ==
        R"({"kind":"deadlock","message":"deadlock: a ...","decision":7,"details":["a waits",)"
        R"("b waits"],"cycle":["a","b"]})");
}

TEST_CASE("a Python exception's finding: its stack, outermost first, user frames marked",
          "[verdict]") {
  sched::Finding f{"exception", "IndexError in thread w at work.py:3 (in helper): x", 2, {}, {}};
  f.stack = {{"/usr/lib/python3.12/threading.py", 1073, "_bootstrap_inner", false},
             {"/tmp/work.py", 3, "helper", true}};
  CHECK(report::finding_json(f, {}).dump() ==
        R"({"kind":"exception","message":"IndexError in thread w at work.py:3 (in helper): x",)"
        R"("details":[],"cycle":[],"stack":[{"file":"/usr/lib/python3.12/threading.py",)"
        R"("line":1073,"function":"_bootstrap_inner","user":false},{"file":"/tmp/work.py",)"
        R"("line":3,"function":"helper","user":true}]})");
}

TEST_CASE("JSON seconds are rounded to the microsecond", "[verdict]") {
  CHECK(report::round_seconds(49.29800000000001) == 49.298);
  CHECK(nlohmann::json(report::round_seconds(49.29800000000001)).dump() == "49.298");
}

TEST_CASE("suggestions: the closest command or option within a typo's distance", "[cli_words]") {
  CHECK(report::edit_distance("strategi", "strategy") == 1);
  CHECK(report::edit_distance("", "abc") == 3);
  CHECK(report::edit_distance("kitten", "sitting") == 3);
  CHECK(report::closest("--strategi", {"--seed", "--strategy", "--depth"}) == "--strategy");
  CHECK(report::closest("exlpore", {"doctor", "explore", "replay"}) == "explore");
  CHECK(report::closest("frobnicate", {"doctor", "explore", "replay"}).empty());
  CHECK(report::word_list({"a", "b", "c"}, "or") == "a, b or c");
}

TEST_CASE("option checks say what was expected and what was given", "[cli_words]") {
  CHECK(report::check_integer("0", 1, INT64_MAX) == "expected a positive integer, got 0");
  CHECK(report::check_integer("-1", 0, INT64_MAX) == "expected a non-negative integer, got -1");
  CHECK(report::check_integer("70", 1, 64) == "expected an integer in 1..64, got 70");
  CHECK(report::check_integer("12x", 1, 64) == "expected an integer in 1..64, got 12x");
  CHECK(report::check_integer("99999999999999999999", 1, INT64_MAX) != "");
  CHECK(report::check_integer("7", 1, 64).empty());
  CHECK(report::check_number("-2", 0) == "expected a number >= 0, got -2");
  CHECK(report::check_number("0.5", 0).empty());
}

TEST_CASE("file kinds are told apart by content; expect_file names both", "[cli_words]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-filekinds";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  const auto schedule = write("s.json", R"({"finding": {}, "format": "racelab-schedule"})");
  const auto summary = write("summary.json", R"({"failed": 0, "passed": 1, "scenarios": []})");
  const auto report = write("report.json", R"({"findings": [], "scenario_hash": "ab"})");
  const auto stats = write("stats.json", R"({"rows": [{"iter": 0, "t_start_us": 1}]})");
  const auto scenario = write("x.toml", "name = \"x\"\n[explore]\niterations = 5\n");
  const auto pickle = write("snap.pickle", std::string("\x80\x04", 2) + "rest");
  CHECK(report::identify_file(schedule) == report::FileKind::kSchedule);
  CHECK(report::identify_file(summary) == report::FileKind::kSuiteSummary);
  CHECK(report::identify_file(report) == report::FileKind::kExploreReport);
  CHECK(report::identify_file(stats) == report::FileKind::kStats);
  CHECK(report::identify_file(scenario) == report::FileKind::kScenario);
  CHECK(report::identify_file(pickle) == report::FileKind::kSnapshot);
  CHECK(report::identify_file(dir.string()) == report::FileKind::kDirectory);
  CHECK(report::identify_file((dir / "none").string()) == report::FileKind::kMissing);
  CHECK_NOTHROW(report::expect_file(schedule, report::FileKind::kSchedule, "replay SCHEDULE"));
  try {
    report::expect_file(summary, report::FileKind::kSchedule, "replay SCHEDULE");
    FAIL("a suite summary passed as a schedule");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("this is a suite summary") != std::string::npos);
    CHECK(m.find("not a schedule") != std::string::npos);
    CHECK(m.find("\"format\": \"racelab-schedule\"") != std::string::npos);
  }
  CHECK_THROWS_AS(report::expect_file(pickle, report::FileKind::kScenario, "explore SCENARIO"),
                  InputError);
  fs::remove_all(dir);
}

TEST_CASE("schedule files keep their two layouts, and replay commands name them", "[formats]") {
  using report::ScheduleName;
  // The README and users' CI scripts name these paths: they must not move.
  CHECK(report::schedule_path("out", {ScheduleName::Layout::kScenario, "lazy-2", "deadlock"}) ==
        fs::path("out/schedules/lazy-2.deadlock.json"));
  CHECK(report::schedules_dir("out") == fs::path("out/schedules"));
  CHECK(report::schedule_path("out", {ScheduleName::Layout::kLive, "", "hang"}) ==
        fs::path("out/schedule-hang.json"));
  CHECK(report::schedule_path("out", {ScheduleName::Layout::kLive, "", ""}) ==
        fs::path("out/schedule-run.json"));
  CHECK(report::replay_command("out/schedules/a.deadlock.json") ==
        "racelab replay out/schedules/a.deadlock.json");
  CHECK(report::replay_command("o/schedule-hang.json", "live python") ==
        "racelab live python --replay o/schedule-hang.json");
}

TEST_CASE("alloc report's JUnit: a failure where not as expected, inconclusive where not measured",
          "[formats]") {
  auto report = [](std::string name, bool stable, bool measured, std::string verdict) {
    alloc::StabilityReport r;
    r.name = std::move(name);
    r.stable = stable;
    r.measured = measured;
    r.verdict = std::move(verdict);
    r.boundaries_source = "stats JSON";
    r.iterations = true;
    r.rows.resize(3);
    r.peak_reserved = 2u << 20;
    return r;
  };
  const std::vector<alloc::StabilityReport> reports = {
      report("flat", true, true, "stable"), report("grow", false, true, "unstable: grows"),
      report("short<1>", false, false, "not measured")};
  // The bytes alloc report --junit wrote before it went through the one writer.
  CHECK(report::alloc_junit_xml(reports, results::MemoryExpect::kStable, 1.5) ==
        R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="racelab" tests="3" failures="2" time="1.500">
  <testsuite name="racelab.alloc" tests="3" failures="2" errors="0" skipped="0" time="1.500">
    <testcase classname="racelab.alloc.stable" name="flat" time="0">
      <system-out>stable; 3 iterations (stats JSON); peak reserved 2 MiB</system-out>
    </testcase>
    <testcase classname="racelab.alloc.stable" name="grow" time="0">
      <failure message="expected stable: unstable: grows" type="expectation">unstable: grows; 3 iterations (stats JSON); peak reserved 2 MiB</failure>
      <system-out>unstable: grows; 3 iterations (stats JSON); peak reserved 2 MiB</system-out>
    </testcase>
    <testcase classname="racelab.alloc.stable" name="short&lt;1&gt;" time="0">
      <failure message="inconclusive: expected stable: not measured" type="inconclusive">not measured; 3 iterations (stats JSON); peak reserved 2 MiB</failure>
      <system-out>not measured; 3 iterations (stats JSON); peak reserved 2 MiB</system-out>
    </testcase>
  </testsuite>
</testsuites>
)");
  // Expecting growth: the flat trace is the failure.
  const std::string unstable =
      report::alloc_junit_xml(reports, results::MemoryExpect::kUnstable, 0);
  CHECK(unstable.find(R"(name="flat" time="0">
      <failure message="expected unstable: stable" type="expectation">)") != std::string::npos);
  CHECK(unstable.find(R"(name="grow" time="0">
      <system-out>)") != std::string::npos);
}

TEST_CASE("JUnit text never holds a control character XML 1.0 forbids", "[formats]") {
  report::JunitCase c{.classname = "racelab.alloc.stable",
                      .name = "a\x01z",
                      .time = "0",
                      .outcome = results::Outcome::kFail,
                      .message = "bell\a",
                      .body = "line\nnext\ttab"};
  const std::string xml = report::junit_xml("racelab.alloc", {c}, 0);
  CHECK(xml.find("name=\"a z\"") != std::string::npos);
  CHECK(xml.find("message=\"bell \"") != std::string::npos);
  CHECK(xml.find(">line\nnext\ttab</failure>") != std::string::npos);
  CHECK(xml.find("<system-out>") == std::string::npos);
}

TEST_CASE("report.json and summary.json name their format and version first", "[formats]") {
  const results::ScenarioRun run =
      make_run(sched::StrategyKind::kDfs, sched::StopReason::kExhausted, {}, {"deadlock"}, {});
  const nlohmann::json report = report::write_explore_outputs(run, "").report;
  CHECK(report["format"] == "racelab-report");
  CHECK(report["version"] == 1);
  CHECK(document_text(report).rfind(
            "{\n  \"format\": \"racelab-report\",\n  \"version\": 1,\n  \"coverage\": ", 0) == 0);
  const nlohmann::json summary = report::suite_summary({}, false, 1.5, sched::Partition{});
  CHECK(document_text(summary).rfind(
            "{\n  \"format\": \"racelab-summary\",\n  \"version\": 1,\n  \"failed\": 0,", 0) == 0);
  // The other keys keep their order and layout: only the two come first.
  const nlohmann::json doc = {
      {"b", 1}, {"version", 1}, {"format", "x"}, {"a", {{"z", 1.5}, {"y", {1, "s", nullptr}}}}};
  CHECK(document_text(doc) ==
        "{\n  \"format\": \"x\",\n  \"version\": 1,\n  \"a\": {\n    \"y\": [\n      1,\n      "
        "\"s\",\n      null\n    ],\n    \"z\": 1.5\n  },\n  \"b\": 1\n}\n");
  CHECK(document_text(nlohmann::json{{"b", 1}, {"a", 2}}) ==
        nlohmann::json({{"b", 1}, {"a", 2}}).dump(2) + "\n");
  // An ordered document (the live report.json) keeps the order its keys were set in.
  nlohmann::ordered_json live;
  live["format"] = "x";
  live["version"] = 1;
  live["subject"] = racelab::sched::kLivePythonSubject;
  live["build"] = "b";
  CHECK(document_text(live) == live.dump(2) + "\n");
}

TEST_CASE("explore's typed output says what its report.json says", "[formats]") {
  // A sampling run (its estimates) and a proving one (none), as summary.json reads them.
  for (const char* strategy : {"random", "dfs"}) {
    const racelab::model::Scenario sc = racelab::model::parse_scenario(
        fmt::format("name = \"x\"\n[explore]\nstrategy = \"{}\"\niterations = 30\n", strategy),
        "x.toml");
    const results::ScenarioRun run =
        racelab::run::run_scenario(sc, racelab::run::explore_options(sc));
    const report::ExploreOutput out = report::write_explore_outputs(run, "");
    const nlohmann::json& r = out.report;
    REQUIRE(out.found.size() == r["findings"].size());
    for (std::size_t i = 0; i < out.found.size(); ++i) {
      CHECK(out.found[i].kind == r["findings"][i]["kind"]);
      CHECK(out.found[i].replay.empty());  // nothing written
    }
    REQUIRE(r.contains("interleavings"));
    CHECK(out.classes_seen == r["interleavings"]["classes_seen"].get<std::uint64_t>());
    CHECK(out.unseen_probability.has_value() == r["interleavings"].contains("unseen_probability"));
    if (out.unseen_probability)
      CHECK(*out.unseen_probability == r["interleavings"]["unseen_probability"].get<double>());
    const nlohmann::json entry = report::suite_summary_entry(run, out, "");
    CHECK(entry["classes_seen"] == r["interleavings"]["classes_seen"]);
    CHECK(entry["found"] == r["findings"].size());
  }
}

TEST_CASE("check_format: another format or a newer version is one line; none is an old file",
          "[formats]") {
  auto message = [](const nlohmann::json& doc) -> std::string {
    try {
      check_format(doc, "d/report.json", kReportFormat, kReportVersion,
                   "the report.json of racelab explore or suite --out");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message({{"scenario", "s"}}).empty());  // written before the keys: accepted
  CHECK(message({{"format", "racelab-report"}, {"version", 1}}).empty());
  CHECK(message({{"format", "racelab-report"}}).empty());
  const std::string other = message({{"format", "racelab-live-report"}, {"version", 1}});
  CHECK(other ==
        "d/report.json: this is a \"racelab-live-report\" file, not the report.json of racelab "
        "explore or suite --out (\"format\": \"racelab-report\")");
  const std::string newer =
      message({{"format", "racelab-report"}, {"version", 2}, {"racelab_version", "9.0.0"}});
  CHECK(newer.find("d/report.json: racelab-report version 2 (written by racelab 9.0.0) is newer "
                   "than racelab ") == 0);
  CHECK(newer.find("reads (up to version 1); use racelab 9.0.0 or newer") != std::string::npos);
  CHECK(message({{"version", 3}}).find("version 3") != std::string::npos);
  CHECK(message({{"version", "1"}}).find("\"version\" is \"1\", expected a positive integer") !=
        std::string::npos);
  CHECK(message({{"format", 7}}).find("not the report.json") != std::string::npos);
  for (const std::string& m : {other, newer}) CHECK(m.find('\n') == std::string::npos);
}

TEST_CASE("a live child's argv spells its typed strategy by name, and none when not given",
          "[formats]") {
  using racelab::run::live_python_argv;
  const std::vector<std::string> with = live_python_argv(
      {.racelab = "racelab", .strategy = racelab::sched::live_prover().kind, .script = "a.py"});
  CHECK(with == std::vector<std::string>{"racelab", "live", "python", "--strategy",
                                         racelab::sched::live_prover().name, "a.py"});
  const std::vector<std::string> without =
      live_python_argv({.racelab = "racelab", .script = "a.py"});
  CHECK(without == std::vector<std::string>{"racelab", "live", "python", "a.py"});
}

TEST_CASE("a live torch job's recorded configuration is its content hash's text, in its order",
          "[formats]") {
  namespace tw = racelab::live::torch_workload;
  CHECK_FALSE(tw::built_with_torch());  // the stand-in: the mapping needs no LibTorch
  tw::Config c;
  c.seq_lens = {8, 16};
  c.device = "cuda";
  // The report's "parameters" (ordered) are the bytes the hash reads; a schedule reads them back.
  CHECK(racelab::report::subject_config_json(tw::to_config(c)).dump() == tw::config_json(c));
  racelab::sched::Schedule s;
  s.subject_name = racelab::sched::kLiveTorchSubject;
  s.live_configuration = tw::to_config(c);
  const racelab::sched::Schedule back =
      racelab::report::parse_schedule(racelab::report::schedule_to_json(s), "s.json");
  CHECK(tw::config_json(tw::from_config(back.live_configuration)) == tw::config_json(c));
  CHECK(tw::recorded_device(back.live_configuration) == "cuda");
  CHECK(tw::recorded_device({}) == "");
}

TEST_CASE("a live case refuses a live report of another format or a newer version in one line",
          "[formats]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-live-report";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path path = dir / "report.json";
  auto read = [&](const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
    return report::read_live_report(path);
  };
  auto refusal = [&](const std::string& text) -> std::string {
    try {
      read(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(!report::read_live_report(dir / "none.json"));  // the child died first
  CHECK(!read("{\"format\": \"racelab-live-re"));       // cut off
  const auto ours = read(fmt::format("{{\"format\": \"{}\", \"version\": {}, \"executions\": 3}}",
                                     kLiveReportFormat, kLiveReportVersion));
  REQUIRE(ours);
  CHECK(ours->executions == 3);
  CHECK(read("{\"executions\": 2}")->executions == 2);  // before the keys: accepted
  const std::string other = refusal("{\"format\": \"racelab-report\", \"version\": 1}");
  CHECK(other ==
        path.string() +
            ": this is a \"racelab-report\" file, not the report.json of racelab live python "
            "--out (\"format\": \"racelab-live-report\")");
  const std::string newer = refusal(
      "{\"format\": \"racelab-live-report\", \"version\": 2, \"racelab_version\": \"9.0.0\"}");
  CHECK(newer.find(path.string() + ": racelab-live-report version 2 (written by racelab 9.0.0) is "
                                   "newer than racelab ") == 0);
  for (const std::string& m : {other, newer}) CHECK(m.find('\n') == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a child's live report reads back typed: counts, stop, kinds, findings and stack",
          "[formats]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-live-report-read";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path path = dir / "report.json";
  // The keys write_outputs writes (live_report.cc), a dpor proof that found an exception.
  std::ofstream(path, std::ios::binary) << fmt::format(
      R"({{"format": "{}", "version": {}, "versions": {{"outside": "torch 2.12 is outside"}},
  "executions": 7, "stopped_by": "time_limit", "exhausted": false, "proves": true,
  "interleavings": {{"classes_seen": 5}}, "kinds_seen": {{"exception": 2, "deadlock": 1}},
  "proof_covers": "dpor's proof covers", "schedule": "out/schedule-exception.json",
  "findings": [{{"kind": "exception", "message": "boom", "execution": 4,
    "stack": [{{"file": "a.py", "line": 3, "function": "f", "user": true}},
              {{"file": "/usr/lib/threading.py", "line": 9, "function": "run", "user": false}}]}},
   {{"kind": "deadlock", "message": "stuck", "execution": 6}}]}})",
      kLiveReportFormat, kLiveReportVersion);
  const auto r = report::read_live_report(path);
  REQUIRE(r);
  CHECK(r->executions == 7);
  CHECK(r->stopped_by == racelab::sched::StopReason::kTimeLimit);
  CHECK(!r->exhausted);
  CHECK(r->proves);
  CHECK(!r->crashed);
  CHECK(r->classes_seen == std::optional<std::uint64_t>(5));
  CHECK(r->kinds_seen == std::map<std::string, std::uint64_t>{{"deadlock", 1}, {"exception", 2}});
  CHECK(r->outside_verified == "torch 2.12 is outside");
  CHECK(r->proof_covers == "dpor's proof covers");
  CHECK(r->schedule == "out/schedule-exception.json");
  REQUIRE(r->findings.size() == 2);
  CHECK(r->findings[0].kind == "exception");
  CHECK(r->findings[0].message == "boom");
  CHECK(r->findings[0].execution == 4);
  REQUIRE(r->findings[0].stack.size() == 2);
  CHECK(r->findings[0].stack[0].file == "a.py");
  CHECK(r->findings[0].stack[0].line == 3);
  CHECK(r->findings[0].stack[0].function == "f");
  CHECK(r->findings[0].stack[0].user);
  CHECK(!r->findings[0].stack[1].user);
  CHECK(r->findings[1].stack.empty());
  // An uncontrolled run's report: no search, so no stop; the crash handler's, crashed.
  std::ofstream(path, std::ios::binary) << R"({"uncontrolled": true, "findings": []})";
  const auto plain = report::read_live_report(path);
  REQUIRE(plain);
  CHECK(!plain->stopped_by);
  CHECK(!plain->classes_seen);
  std::ofstream(path, std::ios::binary)
      << R"({"crashed": true, "execution": 2, "findings": [{"kind": "crash", "message": "x",
            "execution": 2}]})";
  CHECK(report::read_live_report(path)->crashed);
  fs::remove_all(dir);
}

TEST_CASE("check.json gives a traceback's frames as it always has", "[formats]") {
  results::CheckResult r;
  results::VariantResult v;
  v.name = "(as given)";
  v.races.state = results::RaceVerdict::State::kFound;
  v.races.kind = "exception";
  v.races.stopped_by = racelab::sched::StopReason::kBudget;
  v.races.stack = {{.file = "a.py", .line = 3, .function = "f", .user = true}};
  r.variants.push_back(v);
  const std::string text = report::check_json(r, results::CheckOptions{}).dump();
  CHECK(text.find(R"("stopped_by":"budget")") != std::string::npos);
  CHECK(text.find(R"("stack":[{"file":"a.py","function":"f","line":3,"user":true}])") !=
        std::string::npos);
  // The native runs' traceback, none here; the proof did not run: its stop is no word.
  CHECK(text.find(R"("stack":[])") != std::string::npos);
  CHECK(text.find(R"("proof":null)") != std::string::npos);
}

TEST_CASE("an interrupted check says what it finished and what not, and is no verdict",
          "[verdict]") {
  results::CheckResult r;
  results::VariantResult done;
  done.name = "--warmup none";
  done.races.state = results::RaceVerdict::State::kProven;
  done.races.proof.ran = true;
  done.races.proof.exhausted = true;
  done.races.proof.stopped_by = racelab::sched::StopReason::kExhausted;
  done.memory.reason = "not asked for (--no-memory)";
  r.variants.push_back(done);
  CHECK(r.exit_code() == 0);
  CHECK(results::interrupted_line(r).empty());
  results::VariantResult cut = done;
  cut.name = "--warmup sequential";
  cut.races = {};
  cut.races.state = results::RaceVerdict::State::kClean;
  cut.races.stopped_by = racelab::sched::StopReason::kInterrupted;
  cut.interrupted_in = "races, the hunt";
  cut.not_run = {"races, the proof", "native runs"};
  r.variants.push_back(cut);
  r.not_run = {"--warmup compile"};
  r.interrupted = true;
  CHECK(r.variants[0].passed());  // what finished keeps its verdict
  CHECK(r.variants[1].verdict().outcome == results::Outcome::kInconclusive);
  CHECK(r.exit_code() == 1);
  CHECK(results::interrupted_line(r) ==
        "finished: --warmup none; cut short: --warmup sequential (in races, the hunt; not run: "
        "races, the proof, native runs); not run: --warmup compile");
  const std::string text = report::check_json(r, results::CheckOptions{}).dump();
  CHECK(text.find(R"("passed":false,"interrupted":true,"not_run":["--warmup compile"])") !=
        std::string::npos);
  CHECK(text.find(
            R"("interrupted_in":"races, the hunt","not_run":["races, the proof","native runs"])") !=
        std::string::npos);
}

TEST_CASE("file kinds: report.json and summary.json are known by their format, whatever the size",
          "[formats]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-formats";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  // A shard's report.json with every interleaving class it saw is larger than the 1 MiB head that
  // identify_file reads: "scenario_hash" lies beyond it, the leading "format" does not.
  const std::string padding(3 << 20, 'x');
  const auto big = write("big.json",
                         "{\n  \"format\": \"racelab-report\",\n  \"version\": 1,\n  "
                         "\"coverage\": \"" +
                             padding +
                             "\",\n  \"scenario_hash\": "
                             "\"ab\"\n}\n");
  const auto summary = write("summary.json", "{\"format\": \"racelab-summary\", \"version\": 1}");
  const auto live = write("live.json", "{\"format\": \"racelab-live-report\", \"version\": 1}");
  CHECK(report::identify_file(big) == report::FileKind::kExploreReport);
  CHECK(report::identify_file(summary) == report::FileKind::kSuiteSummary);
  CHECK(report::identify_file(live) == report::FileKind::kLiveReport);
  const auto alloc =
      write("alloc-report.json", "{\"format\": \"racelab-alloc-report\", \"version\": 1}");
  CHECK(report::identify_file(alloc) == report::FileKind::kAllocReport);
  try {
    report::expect_file(live, report::FileKind::kSchedule, "replay SCHEDULE");
    FAIL("a live report passed as a schedule");
  } catch (const InputError& e) {
    const std::string m = e.what();
    CHECK(m.find("this is a live search report") != std::string::npos);
    CHECK(m.find("OUT/schedule-<kind>.json") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("shrink writes the schedule through make_schedule and keeps its finding", "[shrink]") {
  const std::string src = std::getenv("RACELAB_SOURCE_DIR");
  const std::string scenario = src + "/scenarios/deadlock/lazy-2-drafters.toml";
  const model::Scenario sc = model::load_scenario(scenario);
  sched::ExploreOptions o = run::explore_options(sc);
  o.strategy.kind = sched::StrategyKind::kRandom;
  o.iterations = 300;
  const results::ScenarioRun run = run::run_scenario(sc, o);
  REQUIRE_FALSE(run.result.found.empty());
  const fs::path dir = fs::temp_directory_path() / "racelab-test-shrink";
  fs::remove_all(dir);
  report::write_explore_outputs(run, dir.string());
  const std::string found = (dir / "schedules" / "lazy-2-drafters.deadlock.json").string();
  const std::string out = (dir / "shrunk.json").string();
  const run::ShrinkSummary got = run::shrink_schedule(found, out, scenario);
  CHECK(got.preemptions_after <= got.preemptions_before);
  const sched::Schedule before = report::read_schedule(found);
  const sched::Schedule after = report::read_schedule(out);
  CHECK(after.finding_kind == "deadlock");
  CHECK(after.subject_name == before.subject_name);
  CHECK(after.execution == before.execution);
  CHECK(after.preemptions == got.preemptions_after);
  CHECK(after.steps.size() == got.steps_after);
  // A shrunk schedule shrinks to itself.
  run::shrink_schedule(out, (dir / "again.json").string(), scenario);
  CHECK(report::read_schedule((dir / "again.json").string()).steps == after.steps);

  sched::Schedule none = before;
  none.finding_kind.clear();
  racelab::write_file_atomic(dir / "none.json", report::schedule_to_json(none));
  CHECK_THROWS_AS(run::shrink_schedule((dir / "none.json").string(), out, scenario), InputError);
  fs::remove_all(dir);
}

TEST_CASE("chart ticks are round numbers: 1, 2 or 5 times a power of ten, four to ten of them",
          "[charts]") {
  using V = std::vector<double>;
  CHECK(html::round_ticks(0, 149, 1) == V{0, 20, 40, 60, 80, 100, 120, 140});
  CHECK(html::round_ticks(191, 45858, 1) ==
        V{5000, 10000, 15000, 20000, 25000, 30000, 35000, 40000, 45000});
  CHECK(html::round_ticks(376, 432) == V{380, 390, 400, 410, 420, 430});
  CHECK(html::round_ticks(0, 3, 1) == V{0, 1, 2, 3});  // iterations: never half of one
  CHECK(html::round_ticks(0, 3) == V{0, 0.5, 1, 1.5, 2, 2.5, 3});
  CHECK(html::round_ticks(5, 5).empty());
}

TEST_CASE("a chart of numbered points: x ticks at round numbers where they fall, a legend per line",
          "[charts]") {
  // What whatif draws: samples at trace events 191, 382, ... (not round), labelled by number.
  std::vector<std::string> labels;
  html::Series a{"recorded", "s-a", {}}, b{"expandable", "s-b", {}};
  for (int k = 1; k <= 240; ++k) {
    labels.push_back(std::to_string(k * 45858 / 240));
    a.values.push_back(100 + k % 7);
    b.values.push_back(90 + k % 5);
  }
  html::ChartOptions o;
  o.zero_based = false;
  const std::string svg = html::line_chart(o, labels, {a, b});
  CHECK(svg.find("data-x=\"numbers\"") != std::string::npos);
  std::vector<std::string> ticks;
  for (std::size_t at = svg.find("x-tick\""); at != std::string::npos;
       at = svg.find("x-tick\"", at + 1)) {
    const std::size_t from = svg.find('>', at) + 1;
    ticks.push_back(svg.substr(from, svg.find('<', from) - from));
  }
  CHECK(ticks == std::vector<std::string>{"5000", "10000", "15000", "20000", "25000", "30000",
                                          "35000", "40000", "45000"});
  // Each line has a legend entry whose key is drawn with the line's own class.
  CHECK(svg.find("<span data-key=\"polyline.s-a\"><svg class=\"key\"") != std::string::npos);
  CHECK(svg.find("<line class=\"s-b\"") != std::string::npos);
  // Points named, not numbered (annotations): at every round step of the points, by name.
  const std::string named = html::line_chart(o, {"warm", "it-a", "it-b"}, {a});
  CHECK(named.find("data-x=\"indices\"") != std::string::npos);
  CHECK(named.find(">warm</text>") != std::string::npos);
}

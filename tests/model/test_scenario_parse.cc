// Scenario format v1: defaults, and one clear "<file>: <key>: <problem>" line for each bad input.
#include <filesystem>
#include <fstream>

#include "catch.h"
#include "model/scenario.h"
#include "model/suite.h"
#include "scenario_error.h"
#include "util/errors.h"

using namespace racelab;
using namespace racelab::model;

using test::error_of;

TEST_CASE("a minimal scenario takes the documented defaults", "[parse]") {
  Scenario s = parse_scenario("name = \"x\"\n", "s.toml");
  CHECK(s.devices == 1);
  CHECK(s.drafters_per_device == 2);
  CHECK(s.steps == 2);
  CHECK(s.attention == Attention::kFlexCompiled);
  CHECK(s.seq_len == std::vector<std::int64_t>{1024});
  CHECK(s.batch == 1);
  CHECK(s.heads == 8);
  CHECK(s.head_dim == 64);
  CHECK(s.chunk == 512);
  CHECK(s.warmup == WarmupMode::kNone);
  CHECK(s.warmup_backward);
  CHECK(s.warmup_length() == 1024);
  CHECK(s.recompile_limit == 8);
  CHECK(s.automatic_dynamic);
  CHECK(s.memory_gib == 141);
  CHECK(s.explore.kind == sched::StrategyKind::kPct);
  CHECK(s.iterations == 1000);
  CHECK(s.explore.depth == 3);
  CHECK(s.explore.max_preemptions == 2);
  CHECK(s.explore.seed == 1);
  CHECK(s.must.empty());
  CHECK(s.must_not.empty());
}

TEST_CASE("seq_len arrays cycle step by step", "[parse]") {
  Scenario s = parse_scenario(
      "name = \"x\"\n[pipeline]\nseq_len = [512, 1024, 2048]\n"
      "[warmup]\nseq_len = 256\n",
      "s.toml");
  CHECK(s.length_at(0) == 512);
  CHECK(s.length_at(2) == 2048);
  CHECK(s.length_at(3) == 512);
  CHECK(s.warmup_length() == 256);
  // The content hash identifies the scenario; any edit changes it.
  CHECK(parse_scenario("name = \"x\"\n", "a").hash != parse_scenario("name = \"x\" \n", "a").hash);
}

TEST_CASE("malformed scenarios get one line naming the file, the key and the problem", "[parse]") {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"description = \"no name\"\n", "s.toml: name: missing (required)"},
      {"name = 3\n", "s.toml: name: expected a string, got an integer"},
      {"name = \"Bad_Name\"\n", "s.toml: name: \"Bad_Name\" must match [a-z0-9-]+"},
      {"name = \"x\"\nfoo = 1\n", "s.toml: foo: unknown key"},
      {"name = \"x\"\n[pipeline]\ndevices = 0\n",
       "s.toml: pipeline.devices: expected an integer in 1..64, got 0"},
      {"name = \"x\"\n[pipeline]\ndevices = 65\n",
       "s.toml: pipeline.devices: expected an integer in 1..64, got 65"},
      {"name = \"x\"\n[pipeline]\ndrafters_per_device = \"two\"\n",
       "s.toml: pipeline.drafters_per_device: expected an integer in 1..64, got a string"},
      {"name = \"x\"\n[pipeline]\nattention = \"flash\"\n",
       "s.toml: pipeline.attention: unknown value \"flash\": expected flex_compiled | flex_eager | "
       "sdpa_chunked | sdpa_fused"},
      {"name = \"x\"\n[pipeline]\nseq_len = []\n",
       "s.toml: pipeline.seq_len: expected an integer or a non-empty array of integers, got an "
       "empty array"},
      {"name = \"x\"\n[pipeline]\nseq_len = [1024, -1]\n",
       "s.toml: pipeline.seq_len: expected an integer in 1..16777216, got -1"},
      {"name = \"x\"\n[pipeline]\nseq_len = 1.5\n",
       "s.toml: pipeline.seq_len: expected an integer in 1..16777216, got a float"},
      {"name = \"x\"\n[pipeline]\nsteps = 2\nwarmup = 1\n", "s.toml: pipeline.warmup: unknown key"},
      {"name = \"x\"\n[warmup]\nmode = \"eager\"\n",
       "s.toml: warmup.mode: unknown value \"eager\": expected none | sequential | lock_first_step "
       "| "
       "lock_first_forward | per_thread_lock | separate_process"},
      {"name = \"x\"\n[warmup]\nbackward = \"yes\"\n",
       "s.toml: warmup.backward: expected true or false, got a string"},
      {"name = \"x\"\n[torch]\nprofile = \"2.5\"\n",
       "s.toml: torch.profile: unknown profile \"2.5\": expected \"2.11\""},
      {"name = \"x\"\n[torch]\nrecompile_limit = 0\n",
       "s.toml: torch.recompile_limit: expected an integer in 1..256, got 0"},
      {"name = \"x\"\n[gpu]\nmemory_gib = -1\n",
       "s.toml: gpu.memory_gib: expected a number in (0, 1048576], got -1"},
      {"name = \"x\"\n[explore]\nstrategy = \"bfs\"\n",
       "s.toml: explore.strategy: unknown value \"bfs\": expected random | pct | dfs | dpor | pos "
       "| surw | states"},
      {"name = \"x\"\n[explore]\niterations = 0\n",
       "s.toml: explore.iterations: expected an integer in 1..1099511627776, got 0"},
      {"name = \"x\"\n[expect]\nmust = \"deadlock\"\n",
       "s.toml: expect.must: expected an array of finding kinds, got a string"},
      {"name = \"x\"\n[expect]\nmust = [\"hang\"]\n",
       "s.toml: expect.must: unknown finding kind \"hang\": expected one of deadlock, "
       "fx_trace_error, oom, exception, assertion, livelock, data_race, recompile_limit, "
       "duplicate_compile, compile_after_warmup"},
      {"name = \"x\"\n[expect]\nmust = [\"oom\"]\nmust_not = [\"oom\"]\n",
       "s.toml: expect.must_not: \"oom\" is also in expect.must"},
      {"name = \"x\"\npipeline = 3\n",
       "s.toml: pipeline: expected a table ([pipeline]), got an integer"},
      {"name = \"x\"\n[pipeline\n", "s.toml: line 2, column 10: "},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const std::string got = error_of(c.text);
    if (std::string(c.error).back() == ' ') {
      CHECK(got.rfind(c.error, 0) == 0);  // the parser's own description follows
    } else {
      CHECK(got == c.error);
    }
    CHECK(got.find('\n') == std::string::npos);
  }
}

TEST_CASE("suites refuse missing paths, empty directories and duplicate names", "[parse]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "racelab-test-suite";
  fs::remove_all(dir);
  fs::create_directories(dir / "empty");
  auto err = [](auto fn) {
    try {
      fn();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(err([&] { collect_scenario_files({(dir / "nope").string()}); }) ==
        (dir / "nope").string() + ": no such file or directory");
  CHECK(err([&] { collect_scenario_files({(dir / "empty").string()}); }) ==
        (dir / "empty").string() + ": no scenarios (*.toml) in this directory");
  std::ofstream(dir / "a.toml") << "name = \"same\"\n";
  std::ofstream(dir / "b.toml") << "name = \"same\"\n";
  CHECK(err([&] { load_suite(collect_scenario_files({dir.string()})); }) ==
        (dir / "b.toml").string() + ": name: \"same\" is already the name of " +
            (dir / "a.toml").string());
  CHECK(err([&] { load_scenario((dir / "empty").string()); }) ==
        (dir / "empty").string() + ": is a directory, expected a file");
  fs::remove_all(dir);
}

TEST_CASE("a [live] case: a real program under the same [expect]", "[scenario]") {
  const Scenario s = parse_scenario(
      "name = \"x\"\n[live]\nscript = \"train.py\"\nargs = [\"--warmup\", \"none\"]\n"
      "interpose = \"standin\"\ndicts = [\"__main__._cache\"]\nexecutions = 7\n"
      "requires_cuda = true\n[expect]\nmust = [\"deadlock\"]\nmust_not = [\"hang\", "
      "\"lost_control\"]\n",
      "s.toml");
  REQUIRE(s.live.has_value());
  CHECK(s.live->script == "train.py");
  CHECK(s.live->args == std::vector<std::string>{"--warmup", "none"});
  CHECK(s.live->dicts == std::vector<std::string>{"__main__._cache"});
  CHECK(s.live->executions == 7);
  CHECK(s.live->requires_cuda);
  CHECK(s.must_not == std::vector<std::string>{"hang", "lost_control"});
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_scenario(text, "s.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_of("name = \"x\"\n[live]\nargs = []\n") == "s.toml: live.script: missing (required)");
  CHECK(error_of("name = \"x\"\n[pipeline]\ndevices = 1\n[live]\nscript = \"a.py\"\n") ==
        "s.toml: pipeline: a scenario with [live] runs a real program; it has no [pipeline]");
  CHECK(error_of("name = \"x\"\n[live]\nscript = \"a.py\"\nstrategy = \"dfs\"\n") ==
        "s.toml: live.strategy: unknown value \"dfs\": expected random | pct");
  CHECK(error_of("name = \"x\"\n[live]\nscript = \"a.py\"\nwho = 1\n") ==
        "s.toml: live.who: unknown key");
  // Live kinds belong to live cases only.
  CHECK(error_of("name = \"x\"\n[expect]\nmust_not = [\"lost_control\"]\n")
            .find("unknown finding kind \"lost_control\"") != std::string::npos);
}

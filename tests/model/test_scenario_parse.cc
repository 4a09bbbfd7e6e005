// Scenario format v1: defaults, and one clear "<file>: <key>: <problem>" line for each bad input.
#include <filesystem>
#include <fstream>
#include <set>

#include "catch.h"
#include "model/profile.h"
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
      {"name = \"x\"\n[torch]\nprofile = \"9.9\"\n",
       "s.toml: torch.profile: unknown torch version \"9.9\": the profiles cover 2.10-2.13 "
       "(profile 2.11), 2.14-2.15 (profile 2.14)"},
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

TEST_CASE("torch profiles are data: every embedded file parses, each release in one profile",
          "[parse]") {
  const auto& all = torch_profiles();
  REQUIRE(all.size() >= 2);
  std::set<std::string> files;
  for (const TorchProfile& p : all) {
    INFO(p.file);
    CHECK(p.file == "torch-" + p.name + ".toml");
    CHECK(!p.description.empty());
    CHECK(find_torch_profile(p.name) == &p);
    files.insert(p.file);
  }
  CHECK(files.contains("torch-2.11.toml"));
  CHECK(files.contains("torch-2.14.toml"));
  // A release, a series, a local version: the patch and the local part are dropped.
  CHECK(torch_profile("2.11").fx_tracing_process_wide);
  CHECK(torch_profile("2.10").name == "2.11");
  CHECK(torch_profile("2.13.0").name == "2.11");
  CHECK(torch_profile("2.11.0+cu130").name == "2.11");
  CHECK(torch_profile("2.14.1").name == "2.14");
  CHECK(torch_profile("2.15").name == "2.14");
  CHECK(!torch_profile("2.14").fx_tracing_process_wide);  // F10: thread-local from 2.14.0
  CHECK(torch_profile("2.14").dynamic_backward_ahead_of_time);
  CHECK(torch_profile("2.14").eager_flex_traces);
  CHECK(find_torch_profile("9.9") == nullptr);
  CHECK(find_torch_profile("2") == nullptr);
  CHECK(find_torch_profile("") == nullptr);
  CHECK(parse_scenario("name = \"x\"\n", "s.toml").profile == kDefaultTorch);
  CHECK(parse_scenario("name = \"x\"\n[torch]\nprofile = \"2.15.0\"\n", "s.toml").profile ==
        "2.15.0");
}

TEST_CASE("a malformed profile file is one line naming the file and the key", "[parse]") {
  const std::string good = std::string(
      "name = \"3.0\"\nversions = [\"3.0\"]\ndescription = \"d\"\n[facts]\n"
      "cudagraph_tls_assert = false\nfx_tracing_process_wide = false\n"
      "dynamic_backward_ahead_of_time = true\neager_flex_traces = true\n[durations]\n"
      "compile_forward = 1\ncompile_backward = 1\ntrace_grad = 0.1\nforward = 0.1\n"
      "backward = 0.1\neager_forward = 0.1\nwarm_disk_factor = 0.5\n");
  const TorchProfile p = parse_torch_profile(good, "torch-3.0.toml");
  CHECK(p.name == "3.0");
  CHECK(!p.fx_tracing_process_wide);
  CHECK(p.compile_forward == 1.0);
  auto error = [](const std::string& text) {
    try {
      parse_torch_profile(text, "p.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto without = [&](const std::string& line) {
    std::string t = good;
    t.erase(t.find(line), line.size());
    return t;
  };
  CHECK(error(without("eager_flex_traces = true\n")) ==
        "p.toml: facts.eager_flex_traces: missing (every key of a profile is required)");
  CHECK(error(good + "[extra]\n") == "p.toml: extra: unknown key");
  CHECK(error(std::string(good).replace(good.find("forward = 0.1"), 13, "forward = \"x\"")) ==
        "p.toml: durations.forward: expected a number");
  CHECK(error(std::string(good).replace(0, 12, "name = \"v3\"\n")) ==
        "p.toml: name: expected a release series such as \"2.14\"");
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
  // Every strategy with a live search is a live case's (dpor and dfs too); the list is the
  // strategy table's, so the test names only what must be in it.
  const std::string strategy =
      error_of("name = \"x\"\n[live]\nscript = \"a.py\"\nstrategy = \"bogus\"\n");
  CHECK(strategy.rfind("s.toml: live.strategy: unknown value \"bogus\": expected random | pct",
                       0) == 0);
  CHECK(strategy.find(" | dpor") != std::string::npos);
  CHECK(error_of("name = \"x\"\n[live]\nscript = \"a.py\"\nstrategy = \"dpor\"\n").empty());
  // The strategy is typed where the file is read: random unless given, else the named kind.
  CHECK(s.live->strategy == racelab::sched::StrategyKind::kRandom);
  CHECK(parse_scenario("name = \"x\"\n[live]\nscript = \"a.py\"\nstrategy = \"dfs\"\n", "s.toml")
            .live->strategy == racelab::sched::StrategyKind::kDfs);
  // [live] alloc: typed where it is read, absent when not given.
  CHECK_FALSE(s.live->alloc.has_value());
  const Scenario memory =
      parse_scenario("name = \"x\"\n[live]\nscript = \"a.py\"\nalloc = \"unstable\"\n", "s.toml");
  CHECK(memory.live->alloc == racelab::results::MemoryExpect::kUnstable);
  CHECK(error_of("name = \"x\"\n[live]\nscript = \"a.py\"\nalloc = \"stabel\"\n") ==
        "s.toml: live.alloc: unknown value \"stabel\": expected stable | unstable");
  CHECK(error_of("name = \"x\"\n[live]\nscript = \"a.py\"\nwho = 1\n") ==
        "s.toml: live.who: unknown key");
  // Live kinds belong to live cases only.
  CHECK(error_of("name = \"x\"\n[expect]\nmust_not = [\"lost_control\"]\n")
            .find("unknown finding kind \"lost_control\"") != std::string::npos);
}

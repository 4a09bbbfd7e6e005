// Schedule files: the format round-trips, every schedule racelab has written reads back to the
// same bytes, and every malformed file is one clear InputError.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "catch.h"
#include "racelab/version.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "util/errors.h"
#include "util/files.h"

using namespace racelab;
using namespace racelab::sched;
using report::parse_schedule;
using report::schedule_to_json;

namespace {

Schedule sample() {
  Schedule s;
  s.racelab_version = "0.1.0";
  s.subject_name = "lazy-2-drafters";
  s.subject_hash = "0123456789abcdef";
  s.subject_path = "scenarios/deadlock/lazy-2-drafters.toml";
  s.strategy_name = "pct";
  s.strategy_description = "pct(depth=3, seed=1)";
  s.seed = 1;
  s.execution = 17;
  s.parameters = {.depth = 3, .max_preemptions = 2, .iterations = 2000, .shrunk = true};
  s.finding_kind = "deadlock";
  s.finding_message = "deadlock: ...";
  s.preemptions = 1;
  s.steps = {{"main", "start"}, {"drafter 0.0", "lock compile_lock"}};
  return s;
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_schedule(text, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string source_dir() {
  const char* dir = std::getenv("RACELAB_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

}  // namespace

TEST_CASE("a schedule round-trips through its JSON form", "[schedule]") {
  Schedule s = sample();
  std::string text = schedule_to_json(s);
  Schedule back = parse_schedule(text, "s.json");
  CHECK(back.subject_name == s.subject_name);
  CHECK(back.subject_hash == s.subject_hash);
  CHECK(back.subject_path == s.subject_path);
  CHECK(back.seed == 1);
  CHECK(back.execution == 17);
  CHECK(back.parameters == s.parameters);
  CHECK(back.live_configuration.empty());
  CHECK(back.finding_kind == "deadlock");
  REQUIRE(back.steps.size() == 2);
  CHECK(back.steps[1].thread == "drafter 0.0");
  CHECK(back.steps[1].op == "lock compile_lock");
  CHECK(schedule_to_json(back) == text);
  // One step per line; a model schedule's parameters in their keys' order.
  CHECK(text.find("    [\"drafter 0.0\", \"lock compile_lock\"]") != std::string::npos);
  CHECK(text.find(R"("parameters": {
      "depth": 3,
      "iterations": 2000,
      "max_preemptions": 2,
      "shrunk": true
    })") != std::string::npos);
}

TEST_CASE("a live schedule's parameters are its job's configuration, written in key order",
          "[schedule]") {
  Schedule s = sample();
  s.subject_name = kLiveTorchSubject;
  s.subject_path.clear();
  s.live_configuration.set("drafters", std::int64_t{2});
  s.live_configuration.set("device", std::string("cpu"));
  s.live_configuration.set("seq_lens", std::vector<std::int64_t>{8, 16});
  s.live_configuration.set("warmup_backward", true);
  const std::string text = schedule_to_json(s);
  CHECK(text.find(R"("parameters": {
      "device": "cpu",
      "drafters": 2,
      "seq_lens": [
        8,
        16
      ],
      "warmup_backward": true
    })") != std::string::npos);
  const Schedule back = parse_schedule(text, "s.json");
  // Typed, for the live subject to read: the same entries (in the file's order, keys sorted).
  CHECK(report::subject_config_json(back.live_configuration).dump() ==
        R"({"device":"cpu","drafters":2,"seq_lens":[8,16],"warmup_backward":true})");
  CHECK(back.live_configuration.integers("seq_lens") == std::vector<std::int64_t>{8, 16});
  CHECK(back.live_configuration.boolean("warmup_backward") == true);
  CHECK(back.parameters == SearchParameters{});
  CHECK(schedule_to_json(back) == text);
  // A model schedule relabelled live keeps its parameters as a configuration (which the live
  // subject then refuses: tests/cli "script parameters").
  std::string relabelled = schedule_to_json(sample());
  relabelled.replace(relabelled.find("lazy-2-drafters"), 15, "live-python");
  CHECK(
      report::subject_config_json(parse_schedule(relabelled, "s.json").live_configuration).dump() ==
      R"({"depth":3,"iterations":2000,"max_preemptions":2,"shrunk":true})");
  // An empty list reads as either kind; a value of no kind a job holds is refused by its key.
  std::string lists = schedule_to_json(s);
  lists.replace(lists.find("\"seq_lens\": ["), 13, "\"tags\": [], \"seq_lens\": [");
  const SubjectConfig typed = parse_schedule(lists, "s.json").live_configuration;
  CHECK(typed.texts("tags") == std::vector<std::string>{});
  CHECK(typed.integers("tags") == std::vector<std::int64_t>{});
  CHECK_THROWS_WITH(typed.text("drafters"), "drafters: not a string");
  std::string bad = schedule_to_json(s);
  bad.replace(bad.find("\"drafters\": 2"), 13, "\"drafters\": 2.5");
  CHECK_THROWS_WITH(parse_schedule(bad, "s.json"),
                    "s.json: strategy.parameters.drafters: a live job's setting is true or false, "
                    "an integer, a string, or a list of integers or of strings; got 2.5");
}

TEST_CASE("a schedule of an unknown live subject is refused in one line", "[schedule]") {
  std::string text = schedule_to_json(sample());
  text.replace(text.find("lazy-2-drafters"), 15, "live-rust");
  CHECK(error_of(text) ==
        "s.json: subject.name: unknown live subject \"live-rust\"; racelab's are live-torch, "
        "live-python");
  CHECK_FALSE(is_live_subject("live-rust"));
  CHECK(is_live_subject(kLiveTorchSubject));
  CHECK(is_live_subject(kLivePythonSubject));
}

// The written bytes are a format: every schedule racelab wrote that the tests keep (the golden
// files of tests/data/schedules, one per shape of the format, and the fuzz corpus) reads and writes
// back byte for byte, model and live alike. docs/results keeps runs' evidence, not fixtures.
TEST_CASE("every stored schedule reads back to the same bytes", "[schedule]") {
  namespace fs = std::filesystem;
  std::map<std::string, int> golden;  // subject kind -> files under tests/data/schedules
  int read = 0;
  const fs::path root = source_dir() + "/tests";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    const std::string text = read_file(entry.path().string());
    if (text.find("\"format\": \"racelab-schedule\"") == std::string::npos) continue;
    INFO(entry.path().string());
    const Schedule s = parse_schedule(text, entry.path().string());
    CHECK(schedule_to_json(s) == text);
    ++read;
    if (entry.path().parent_path() == root / "data" / "schedules")
      ++golden[is_live_subject(s.subject_name) ? s.subject_name : "model"];
  }
  CHECK(read > 6);
  CHECK(golden["model"] >= 2);
  CHECK(golden[std::string(kLiveTorchSubject)] >= 1);
  CHECK(golden[std::string(kLivePythonSubject)] >= 3);
}

TEST_CASE("make_schedule: a source and an execution become one schedule header", "[schedule]") {
  const ScheduleSource source{.subject_name = kLivePythonSubject,
                              .subject_hash = "0123456789abcdef",
                              .strategy_name = "random",
                              .strategy_description = "random(seed=4)",
                              .seed = 4,
                              .live_configuration = {.entries = {{"drafters", std::int64_t{2}}}}};
  Finding f;
  f.kind = "deadlock";
  f.message = "deadlock: cycle";
  Schedule s = make_schedule(source, 9, &f, 2, {{"main", "start"}});
  CHECK(s.racelab_version == kVersion);
  CHECK(s.subject_name == kLivePythonSubject);
  CHECK(s.subject_hash == "0123456789abcdef");
  CHECK(s.subject_path.empty());
  CHECK(s.strategy_name == "random");
  CHECK(s.strategy_description == "random(seed=4)");
  CHECK(s.seed == 4);
  CHECK(s.execution == 9);
  CHECK(s.live_configuration.integer("drafters") == 2);
  CHECK(s.finding_kind == "deadlock");
  CHECK(s.finding_message == "deadlock: cycle");
  CHECK(s.preemptions == 2);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].op == "start");
  // No finding: an empty kind and message (an execution recorded without one).
  s = make_schedule(source, 0, nullptr, 0, {});
  CHECK(s.finding_kind.empty());
  CHECK(s.finding_message.empty());
  CHECK(s.steps.empty());
}

TEST_CASE("malformed schedules are refused with the key and the problem", "[schedule]") {
  std::string good = schedule_to_json(sample());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return t;
  };
  CHECK(error_of("{").find("s.json: not valid JSON at byte") == 0);
  CHECK(error_of("[]") == "s.json: (document): expected a JSON object");
  CHECK(error_of(with("\"version\": 1", "\"version\": 2")) ==
        "s.json: version: unsupported schedule version 2; this racelab reads version 1");
  CHECK(error_of(with("\"racelab-schedule\"", "\"other\"")) ==
        "s.json: format: expected \"racelab-schedule\"");
  CHECK(error_of(with("\"seed\": 1", "\"seed\": -1")) ==
        "s.json: strategy.seed: expected a non-negative integer");
  CHECK(error_of(with("\"hash\"", "\"hashx\"")) == "s.json: subject.hash: missing");
  CHECK(error_of(with("[\"main\", \"start\"]", "[\"main\"]")) ==
        "s.json: steps[0]: expected [\"thread\", \"operation\"]");
  CHECK(error_of(with("\"preemptions\": 1", "\"preemptions\": \"1\"")) ==
        "s.json: preemptions: expected a non-negative integer");
  CHECK(error_of(with("\"depth\": 3", "\"depth\": 3.5")) ==
        "s.json: strategy.parameters.depth: expected an integer");
  CHECK(error_of(with("\"shrunk\": true", "\"shrunk\": 1")) ==
        "s.json: strategy.parameters.shrunk: expected true or false");
  CHECK(error_of(with("\"iterations\"", "\"iterationsx\"")) ==
        "s.json: strategy.parameters.iterations: missing");
}

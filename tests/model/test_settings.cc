// One vocabulary of pipeline settings (model/settings.h): the scenario parser reads exactly the
// table's names, in the enums' order; the live workload's names are the table's; every model key
// of docs/scenarios.md has its row. tests/live/check_settings.py checks the Python copy
// (tools/pipelines/settings.py) against the parser and `racelab live torch --help`.
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>

#include "catch.h"
#include "model/scenario.h"
#include "model/settings.h"
#include "scenario_error.h"
#include "util/errors.h"
#include "util/files.h"

using namespace racelab;
using namespace racelab::model;

using test::error_of;

TEST_CASE("the scenario parser reads settings.h's attention and warmup names", "[settings]") {
  for (std::size_t i = 0; i < settings::kAttentions.size(); ++i) {
    const std::string name(settings::kAttentions[i]);
    CAPTURE(name);
    CHECK(attention_name(static_cast<Attention>(i)) == name);
    const Scenario s =
        parse_scenario("name = \"x\"\n[pipeline]\nattention = \"" + name + "\"\n", "s.toml");
    CHECK(s.attention == static_cast<Attention>(i));
  }
  for (std::size_t i = 0; i < settings::kWarmupModes.size(); ++i) {
    const std::string name(settings::kWarmupModes[i]);
    CAPTURE(name);
    CHECK(warmup_name(static_cast<WarmupMode>(i)) == name);
    const Scenario s =
        parse_scenario("name = \"x\"\n[warmup]\nmode = \"" + name + "\"\n", "s.toml");
    CHECK(s.warmup == static_cast<WarmupMode>(i));
  }
  CHECK(error_of("name = \"x\"\n[warmup]\nmode = \"sequential_forward\"\n") ==
        "s.toml: warmup.mode: unknown value \"sequential_forward\": expected none | sequential | "
        "lock_first_step | lock_first_forward | per_thread_lock | separate_process");
}

TEST_CASE("the live modes are the model's but its only one; the workload's attention is apart",
          "[settings]") {
  std::vector<std::string_view> live;
  for (std::string_view m : settings::kWarmupModes)
    if (m != settings::kModelOnlyWarmup) live.push_back(m);
  CHECK(live == std::vector<std::string_view>(settings::kLiveWarmupModes.begin(),
                                              settings::kLiveWarmupModes.end()));
  // Another setting under other names: no name may be read as the other's.
  for (std::string_view w : settings::kWorkloadAttentions) {
    CAPTURE(w);
    CHECK(std::find(settings::kAttentions.begin(), settings::kAttentions.end(), w) ==
          settings::kAttentions.end());
  }
}

TEST_CASE("every model key of docs/scenarios.md has a row in kLiveTorchOptions", "[settings]") {
  const char* root = std::getenv("RACELAB_SOURCE_DIR");
  REQUIRE(root != nullptr);
  const std::string doc = read_file(std::string(root) + "/docs/scenarios.md");
  // The format's example: the first ```toml block.
  const std::size_t start = doc.find("```toml\n");
  REQUIRE(start != std::string::npos);
  const std::size_t end = doc.find("```", start + 8);
  const toml::table example = toml::parse(doc.substr(start + 8, end - start - 8));
  std::set<std::string> documented, tabled;
  for (const char* table : {"pipeline", "warmup", "torch", "gpu"}) {
    const toml::table* t = example[table].as_table();
    REQUIRE(t != nullptr);
    for (const auto& [key, value] : *t)
      documented.insert(std::string(table) + "." + std::string(key.str()));
  }
  for (const auto& o : settings::kLiveTorchOptions) {
    CAPTURE(o.key);
    CHECK(tabled.insert(std::string(o.key)).second);  // once
    // A key the parser knows: a value of any wrong type is refused as that, not as unknown.
    const std::size_t dot = o.key.find('.');
    const std::string text = "name = \"x\"\n[" + std::string(o.key.substr(0, dot)) + "]\n" +
                             std::string(o.key.substr(dot + 1)) + " = { bad = 1 }\n";
    CHECK(error_of(text).find("unknown key") == std::string::npos);
    if (!o.option.empty()) CHECK(o.option.substr(0, 2) == "--");
    // live torch's options are the Python pipelines' spellings; the older ones are aliases only.
    CHECK(o.option != "--seq-lens");
    CHECK(o.option != "--hidden");
  }
  CHECK(documented == tabled);
}

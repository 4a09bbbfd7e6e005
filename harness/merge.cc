// racelab merge DIR...: the --out directories of the shards of one exploration or one suite,
// combined into the report.json, schedules, summary.json, JUnit XML and report.html that one
// unsharded run would have written (timings apart). docs/scale.md.
#include "report/merge.h"

#include <fmt/format.h>

#include "command.h"

namespace racelab::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out = "racelab-out/merged";
  std::string junit;
};

int merge_command(const MergeArgs& a) {
  const int code = report::merge_shards(
      a.dirs, a.out, a.junit,
      {.on_run =
           [](const model::ScenarioRun& run) {
             fmt::print("{} {:<34} {} finding kind(s); {}\n", verdict_word(run), run.scenario.name,
                        run.result.found.size(), run.coverage_brief());
             if (run.verdict() != model::Verdict::kPass)
               fmt::print("     {}\n", run.verdict_reason());
           },
       .on_live =
           [](const nlohmann::json& e) {
             fmt::print("{} {:<34} (live, from shard 0) {}\n", e.value("verdict", "?"),
                        e.value("scenario", "?"), e.value("verdict_reason", ""));
           }});
  fmt::print("merged {} shard(s) into {}\n", a.dirs.size(), a.out);
  return code;
}

}  // namespace

void add_merge(CLI::App& app, Runner& run) {
  auto args = std::make_shared<MergeArgs>();
  auto* cmd =
      app.add_subcommand("merge", "Combine the --out directories of --shard runs into one result");
  cmd->add_option("dirs", args->dirs, "every shard's --out directory (explore or suite)")
      ->required();
  cmd->add_option("--out", args->out,
                  "where to write the merged result (default: racelab-out/merged)");
  cmd->add_option("--junit", args->junit, "also write JUnit XML here");
  cmd->callback([&run, args] { run = [args] { return merge_command(*args); }; });
}

}  // namespace racelab::cli

// racelab merge DIR...: the --out directories of the shards of one exploration or one suite,
// combined into the report.json, schedules, summary.json, JUnit XML and report.html that one
// unsharded run would have written (timings apart). docs/scale.md.
#include "run/merge.h"

#include <fmt/format.h>

#include <filesystem>

#include "command.h"
#include "suite_print.h"

namespace racelab::cli {

namespace {

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out = "racelab-out/merged";
  std::string junit;
};

int merge_command(const MergeArgs& a) {
  const run::MergeResult r = run::merge_shards(
      a.dirs, a.out, a.junit, {.on_run = print_suite_scenario, .on_live = print_suite_live_case});
  // A suite's merge prints what the unsharded suite prints; an exploration's what it wrote.
  if (r.suite) {
    print_suite_end(r.totals, a.out, a.junit);
  } else {
    fmt::print("merged {} shard(s): wrote {}\n", a.dirs.size(),
               (std::filesystem::path(a.out) / "report.json").lexically_normal().string() + ", " +
                   (std::filesystem::path(a.out) / "report.html").lexically_normal().string() +
                   (a.junit.empty() ? "" : ", " + a.junit));
  }
  return r.exit_code;
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

// What every command shares (command.h): progress lines, colours, interrupts, option checks in
// racelab's words, partition options and parse errors. Not a subcommand.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "command.h"
#include "report/cli.h"
#include "util/errors.h"
#include "util/spawn.h"

namespace racelab::cli {

void add_partition_options(CLI::App* cmd, PartitionArgs& a) {
  cmd->add_option(
         "--jobs,-j", a.jobs,
         "worker threads, each running whole executions (0: one per core); results are the "
         "same for any number (dpor: any number above one; one job keeps its state cache)")
      ->check(integer_check(0, 4096));
  cmd->add_option("--shard", a.shard,
                  "run only shard K of N (0-based, e.g. 2/8); combine the shards' --out "
                  "directories with racelab merge");
}

void add_live_python_options(CLI::App* cmd, results::LivePython& python, const std::string& what) {
  cmd->add_option("--python", python.env,
                  "ENV: run " + what +
                      " in this virtual environment (its directory, or its bin/python), as "
                      "live python --python; default $VIRTUAL_ENV where one is activated")
      // A child may run elsewhere than the directory the user named ENV from.
      ->transform([](std::string env) { return std::filesystem::absolute(env).string(); });
  cmd->add_flag("--refuse-other-torch", python.refuse_other_torch,
                "where the imported torch or Python is outside the versions the interposition "
                "table was verified on, refuse (racelab's one line) rather than warn (for CI)");
}

sched::Partition partition_from(const PartitionArgs& a) {
  sched::Partition p;
  p.jobs = a.jobs == 0 ? std::max(1u, std::thread::hardware_concurrency()) : a.jobs;
  if (!a.shard.empty()) {
    unsigned long long k = 0, n = 0;
    char slash = 0;
    int used = 0;
    if (std::sscanf(a.shard.c_str(), "%llu%c%llu%n", &k, &slash, &n, &used) != 3 || slash != '/' ||
        used != static_cast<int>(a.shard.size()) || n == 0 || k >= n) {
      throw InputError("--shard: expected K/N with 0 <= K < N (e.g. 0/4), got '" + a.shard + "'");
    }
    p.shard = k;
    p.shards = n;
  }
  return p;
}

std::string split_note(const sched::StrategyParams& s, const sched::Partition& p,
                       const PartitionArgs& a, const std::string& scope) {
  if (!p.split()) return "";
  const std::string cost = sched::split_cost(s);
  if (cost.empty()) return "";
  const std::string how = p.shards > 1  ? fmt::format("--shard {}", a.shard)
                          : a.jobs == 0 ? fmt::format("--jobs 0 ({} workers)", p.jobs)
                                        : fmt::format("--jobs {}", a.jobs);
  return fmt::format("note: {} splits {}, {}", how, scope, cost);
}

std::atomic<bool>& interrupted() {
  static std::atomic<bool> flag{false};
  return flag;
}

void on_interrupt_signal(int) {
  interrupted().store(true);
  interrupt_children();
}

void print_stopped_early(bool interrupted, bool time_limit) {
  if (interrupted) fmt::print("interrupted: results so far written\n");
  if (time_limit) fmt::print("time limit reached: results so far written\n");
}

std::vector<std::string>& program_args() {
  static std::vector<std::string> args;
  return args;
}

namespace {

bool g_drawn = false;

std::string bar(double fraction, int width = 24) {
  fraction = std::max(0.0, std::min(1.0, fraction));
  const int full = static_cast<int>(fraction * width + 0.5);
  return "[" + std::string(static_cast<std::size_t>(full), '#') +
         std::string(static_cast<std::size_t>(width - full), '.') + "]";
}

}  // namespace

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

std::string paint(const std::string& text, Colour c) {
  static const bool enabled = ::isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr;
  if (!enabled) return text;
  const char* code = c == Colour::kGreen    ? "32"
                     : c == Colour::kRed    ? "31"
                     : c == Colour::kYellow ? "33"
                                            : "2";
  return fmt::format("\033[{}m{}\033[0m", code, text);
}

std::function<void(const sched::ExploreProgress&)> progress_printer(const std::string& what,
                                                                    bool open_ended) {
  if (!stderr_is_terminal()) return nullptr;
  return [what, open_ended](const sched::ExploreProgress& p) {
    const double rate = p.seconds > 0 ? static_cast<double>(p.executions) / p.seconds : 0.0;
    if (open_ended) {  // a proving search: its size is unknown until it ends
      std::fprintf(stderr, "\r\033[K%s %llu executions (up to %llu), %.0f/s, %zu finding kind(s)",
                   what.c_str(), static_cast<unsigned long long>(p.executions),
                   static_cast<unsigned long long>(p.iterations), rate, p.kinds_found);
      g_drawn = true;
      return;
    }
    const double left =
        rate > 0 ? static_cast<double>(p.iterations - std::min(p.iterations, p.executions)) / rate
                 : 0.0;
    const double done =
        p.iterations ? static_cast<double>(p.executions) / static_cast<double>(p.iterations) : 0.0;
    std::fprintf(
        stderr,
        "\r\033[K%s %s %3.0f%% %llu/%llu executions, %.0f/s, %zu finding kind(s), ~%.0f s left",
        what.c_str(), bar(done).c_str(), done * 100, static_cast<unsigned long long>(p.executions),
        static_cast<unsigned long long>(p.iterations), rate, p.kinds_found, left);
    g_drawn = true;
  };
}

std::string verdict_word(const results::ScenarioRun& run) {
  const results::Outcome v = run.verdict();
  return paint(results::outcome_word(v), v == results::Outcome::kPass   ? Colour::kGreen
                                         : v == results::Outcome::kFail ? Colour::kRed
                                                                        : Colour::kYellow);
}

CLI::Validator integer_check(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator([lo, hi](std::string& text) { return report::check_integer(text, lo, hi); },
                        hi == INT64_MAX ? fmt::format(">={}", lo) : fmt::format("{}..{}", lo, hi),
                        "");
}

CLI::Validator seconds_check() {
  return CLI::Validator([](std::string& text) { return report::check_number(text, 0); }, ">=0", "");
}

CLI::Validator one_of(std::vector<std::string> words) {
  return CLI::Validator(
      [words](std::string& text) -> std::string {
        if (std::find(words.begin(), words.end(), text) != words.end()) return "";
        const std::string near = report::closest(text, words);
        return fmt::format("expected {}, got '{}'{}", report::word_list(words, "or"), text,
                           near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
      },
      "", "");
}

std::function<void(std::size_t, std::size_t)> count_progress(const std::string& what,
                                                             const std::string& unit) {
  if (!stderr_is_terminal()) return nullptr;
  return [what, unit](std::size_t done, std::size_t total) {
    const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    std::fprintf(stderr, "\r\033[K%s %s %3.0f%% %zu/%zu %s", what.c_str(), bar(f).c_str(), f * 100,
                 done, total, unit.c_str());
    g_drawn = true;
    if (done >= total) {
      std::fprintf(stderr, "\r\033[K");
      g_drawn = false;
    }
    std::fflush(stderr);
  };
}

void clear_progress() {
  if (g_drawn) std::fprintf(stderr, "\r\033[K");
  g_drawn = false;
}

namespace {

std::vector<std::string> command_names(const CLI::App* app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; }))
    out.push_back(sub->get_name());
  return out;
}

std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : app->get_options()) {
    for (const auto& l : opt->get_lnames()) out.push_back("--" + l);
    for (const auto& s : opt->get_snames()) out.push_back("-" + s);
  }
  return out;
}

const CLI::Option* find_option(const CLI::App* app, const std::string& name) {
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* opt : a->get_options()) {
      if (opt->check_name(name)) return opt;
    }
  }
  return nullptr;
}

}  // namespace

std::string parse_error_text(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  // Walk the words as CLI11 would: subcommands down the tree, options and their values, so that
  // an unknown command or option is named with the closest known one.
  CLI::App* cur = &app;
  std::string path = "racelab";
  bool positional_seen = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9')) {
      const std::string name = arg.substr(0, arg.find('='));
      if (name == "-h" || name == "--help" || name == "--help-all") continue;
      const CLI::Option* opt = find_option(cur, name);
      if (opt == nullptr && name.rfind("--", 0) != 0 && name.size() > 2) {
        opt = find_option(cur, name.substr(0, 2));  // -j4: a short option with its value
        if (opt != nullptr) continue;
      }
      if (opt == nullptr) {
        const std::string near = report::closest(name, option_names(cur));
        return fmt::format("unknown option {}{}{} (see {} --help)", name,
                           path == "racelab" ? "" : " for " + path,
                           near.empty() ? "" : fmt::format("; did you mean {}?", near), path);
      }
      if (opt->get_type_size() != 0 && arg.find('=') == std::string::npos) ++i;  // its value
      continue;
    }
    const std::vector<std::string> subs = command_names(cur);
    if (!subs.empty() && !positional_seen) {
      CLI::App* sub = nullptr;
      for (CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; })) {
        if (s->check_name(arg)) sub = s;
      }
      if (sub == nullptr) {
        const std::string near = report::closest(arg, subs);
        return fmt::format("unknown command \"{}\"{}{}; commands: {} (see {} --help)", arg,
                           path == "racelab" ? "" : " for " + path,
                           near.empty() ? "" : fmt::format(" (did you mean {}?)", near),
                           fmt::join(subs, ", "), path);
      }
      cur = sub;
      path += " " + arg;
      continue;
    }
    positional_seen = true;
  }
  const std::vector<std::string> subs = command_names(cur);
  if (!subs.empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    return fmt::format("missing command{}; commands: {} (see {} --help)",
                       path == "racelab" ? "" : " for " + path, fmt::join(subs, ", "), path);
  }
  return fmt::format("{} (see {} --help)", e.what(), path);
}

}  // namespace racelab::cli

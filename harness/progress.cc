#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "command.h"
#include "util/errors.h"

namespace racelab::cli {

void add_partition_options(CLI::App* cmd, PartitionArgs& a) {
  cmd->add_option(
      "--jobs,-j", a.jobs,
      "worker threads, each running whole executions (0: one per core); results are the "
      "same for any number");
  cmd->add_option("--shard", a.shard,
                  "run only shard K of N (0-based, e.g. 2/8); combine the shards' --out "
                  "directories with racelab merge");
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

std::atomic<bool>& interrupted() {
  static std::atomic<bool> flag{false};
  return flag;
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

std::function<void(const sched::ExploreProgress&)> progress_printer(const std::string& what) {
  if (!stderr_is_terminal()) return nullptr;
  return [what](const sched::ExploreProgress& p) {
    const double rate = p.seconds > 0 ? static_cast<double>(p.executions) / p.seconds : 0.0;
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

}  // namespace racelab::cli

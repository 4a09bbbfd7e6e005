#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "command.h"

namespace racelab::cli {

std::atomic<bool>& interrupted() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
bool g_drawn = false;
}

std::function<void(const sched::ExploreProgress&)> progress_printer(const std::string& what) {
  if (::isatty(STDERR_FILENO) == 0) return nullptr;
  return [what](const sched::ExploreProgress& p) {
    const double rate = p.seconds > 0 ? static_cast<double>(p.executions) / p.seconds : 0.0;
    const double left =
        rate > 0 ? static_cast<double>(p.iterations - std::min(p.iterations, p.executions)) / rate
                 : 0.0;
    std::fprintf(stderr,
                 "\r\033[K%s: %llu/%llu executions, %.0f/s, %zu finding kind(s), ~%.0f s left",
                 what.c_str(), static_cast<unsigned long long>(p.executions),
                 static_cast<unsigned long long>(p.iterations), rate, p.kinds_found, left);
    g_drawn = true;
  };
}

void clear_progress() {
  if (g_drawn) std::fprintf(stderr, "\r\033[K");
  g_drawn = false;
}

}  // namespace racelab::cli

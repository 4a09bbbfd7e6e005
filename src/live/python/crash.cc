// The crash report of the Python bridge (bridge.h, arm_crash_report): on a fatal signal (a C
// extension crashing, abort()), report.json with a `crash` finding and, through faulthandler,
// stacks.txt with every thread's Python stack. Everything the signal handler writes is prepared
// beforehand; the handler only calls async-signal-safe functions (open, write, rename, _exit).
#include <fcntl.h>
#include <fmt/format.h>
#include <pybind11/embed.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>

#include "live/python/bridge.h"
#include "live/python/interpreter.h"
#include "util/document.h"
#include "util/files.h"

namespace py = pybind11;

namespace racelab::live::python {

namespace {

std::atomic<std::uint64_t> g_crash_execution{0};
char g_crash_tmp[4096];
char g_crash_path[4096];
char g_crash_head[1024];  // the report up to the execution number
char g_crash_stacks[4096];

void write_all(int fd, const char* text) {
  std::size_t n = std::strlen(text);
  while (n > 0) {
    const ssize_t w = ::write(fd, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV   ? "SIGSEGV"
                     : sig == SIGABRT ? "SIGABRT"
                     : sig == SIGBUS  ? "SIGBUS"
                     : sig == SIGFPE  ? "SIGFPE"
                                      : "SIGILL";
  char number[32];
  std::uint64_t e = g_crash_execution.load();
  int i = 30;
  number[31] = '\0';
  do {
    number[i--] = static_cast<char>('0' + e % 10);
    e /= 10;
  } while (e > 0 && i > 0);
  const char* exec = number + i + 1;
  const int fd = ::open(g_crash_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    write_all(fd, g_crash_head);
    write_all(fd, exec);
    write_all(fd, ", \"findings\": [{\"kind\": \"crash\", \"message\": \"the process received ");
    write_all(fd, name);
    write_all(fd, " in execution ");
    write_all(fd, exec);
    write_all(fd,
              " (a C extension crashed or aborted); every thread's Python stack at the crash "
              "is in stacks.txt\", \"execution\": ");
    write_all(fd, exec);
    write_all(fd, "}], \"stacks\": \"");
    write_all(fd, g_crash_stacks);
    write_all(fd, "\"}\n");
    ::close(fd);
    ::rename(g_crash_tmp, g_crash_path);
  }
  write_all(2, "crash (execution ");
  write_all(2, exec);
  write_all(2, "): the process received ");
  write_all(2, name);
  write_all(2, "; report: ");
  write_all(2, g_crash_path);
  write_all(2, "\n");
  ::_exit(1);
}

}  // namespace

void crash_report_execution(std::uint64_t index) { g_crash_execution.store(index); }

void arm_crash_report(const std::string& dir) {
  namespace fs = std::filesystem;
  ensure_directory(dir);
  const std::string report = (fs::path(dir) / "report.json").string();
  const std::string stacks = (fs::path(dir) / "stacks.txt").string();
  const std::string tmp = report + ".crash-tmp";
  const std::string head = fmt::format(
      "{{\"format\": \"{}\", \"version\": {}, \"subject\": \"live-python\", \"crashed\": "
      "true, \"execution\": ",
      kLiveReportFormat, kLiveReportVersion);
  if (report.size() >= sizeof g_crash_path || tmp.size() >= sizeof g_crash_tmp ||
      stacks.size() >= sizeof g_crash_stacks || head.size() >= sizeof g_crash_head)
    return;  // a path too long to prepare: crashes then go unreported, as before
  std::strcpy(g_crash_path, report.c_str());
  std::strcpy(g_crash_tmp, tmp.c_str());
  std::strcpy(g_crash_stacks, stacks.c_str());
  std::strcpy(g_crash_head, head.c_str());
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_fatal_signal);
  // faulthandler saves these handlers, dumps the Python stacks on a crash, then restores and
  // re-raises: ours runs second and writes the report.
  py::gil_scoped_acquire gil;
  bridge_module().attr("arm_crash_stacks")(stacks);
}

}  // namespace racelab::live::python

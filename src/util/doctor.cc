#include "util/doctor.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "util/files.h"
#include "util/text.h"

namespace racelab {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return trim(line.substr(line.find(':') + 2));
  }
  return "unknown CPU";
}

std::string temp_dir() {
  std::string dir =
      (std::filesystem::temp_directory_path() / fmt::format("racelab-doctor-{}", ::getpid()))
          .string();
  std::filesystem::create_directories(dir);
  return dir;
}

// The line of rr's output that explains a failure, without its "[FATAL ...]" prefix.
std::string rr_reason(const std::string& text) {
  std::string best;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? text.size() : end + 1;
    if (line.find("FATAL") != std::string::npos || line.find("rror") != std::string::npos ||
        line.find("microarchitecture") != std::string::npos) {
      auto close = line.find("] ");
      best = trim(close != std::string::npos ? line.substr(close + 2) : line);
      if (line.find("microarchitecture") != std::string::npos) break;
    }
  }
  return best.empty() ? first_line(text) : best;
}

}  // namespace

CommandOutput run_command(const std::string& command, int timeout_s) {
  CommandOutput out;
  const std::string full = fmt::format("timeout {} sh -c '{}' 2>&1", timeout_s, command);
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.text.append(buf.data(), n);
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

DoctorItem check_rr() {
  DoctorItem item{"rr"};
  CommandOutput version = run_command("rr --version");
  if (version.status != 0) {
    item.value = "not installed (Debian package rr); use racelab's schedule replay instead";
    return item;
  }
  const std::string ver = trim(first_line(version.text));
  std::string paranoid = "unknown";
  try {
    paranoid = trim(read_file("/proc/sys/kernel/perf_event_paranoid"));
  } catch (...) {
  }
  const std::string dir = temp_dir();
  CommandOutput trial = run_command(fmt::format("_RR_TRACE_DIR={}/trace rr record true", dir), 30);
  std::filesystem::remove_all(dir);
  if (trial.status == 0) {
    item.ok = true;
    item.value = fmt::format("{}: works (trial `rr record true` succeeded; perf_event_paranoid={})",
                             ver, paranoid);
  } else {
    item.value = fmt::format(
        "{} is installed but cannot record here: {} (perf_event_paranoid={}); "
        "use racelab's schedule replay instead",
        ver, rr_reason(trial.text), paranoid);
  }
  return item;
}

std::vector<DoctorItem> run_doctor() {
  std::vector<DoctorItem> items;
  items.push_back(
      {"cpus", true, fmt::format("{} ({})", std::thread::hardware_concurrency(), cpu_model())});
#if defined(__clang__)
  const std::string built = fmt::format("clang {}", __clang_version__);
#elif defined(__GNUC__)
  const std::string built = fmt::format("g++ {}", __VERSION__);
#else
  const std::string built = "unknown compiler";
#endif
  CommandOutput cxx = run_command("c++ --version");
  items.push_back({"compiler", cxx.status == 0,
                   fmt::format("racelab built with {}; c++ on PATH: {}", built,
                               cxx.status == 0 ? trim(first_line(cxx.text)) : "not found")});
  {
    const std::string dir = temp_dir();
    CommandOutput tsan = run_command(
        fmt::format("printf \"#include <thread>\\nint x; int main(){{std::thread t([]{{x=1;}}); "
                    "t.join(); return x-1;}}\\n\" "
                    "> {0}/t.cc && c++ -fsanitize=thread -std=c++20 {0}/t.cc -o {0}/t && {0}/t",
                    dir),
        60);
    std::filesystem::remove_all(dir);
    items.push_back({"tsan", tsan.status == 0,
                     tsan.status == 0 ? "available (compiled and ran a -fsanitize=thread program)"
                                      : "not usable: " + trim(first_line(tsan.text))});
  }
  items.push_back(check_rr());
  {
    CommandOutput smi = run_command("nvidia-smi -L");
    const bool ok = smi.status == 0 && smi.text.find("GPU") != std::string::npos;
    std::string value =
        ok ? trim(smi.text) : "none (nvidia-smi not found or lists no GPU); gpu tests are skipped";
    for (auto& c : value) {
      if (c == '\n') c = ';';
    }
    items.push_back({"cuda", ok, value});
  }
  {
    CommandOutput torch = run_command(
        "python3 -c \"import torch; print(torch.__version__, torch.utils.cmake_prefix_path)\"");
    if (torch.status == 0) {
      items.push_back({"libtorch", true, "PyTorch " + trim(torch.text)});
    } else if (std::filesystem::exists("/usr/include/torch/csrc/api/include/torch/torch.h") ||
               std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libtorch.so")) {
      items.push_back({"libtorch", true, "Debian libtorch (CPU build)"});
    } else {
      items.push_back(
          {"libtorch", false,
           "not found (no `import torch`, no Debian libtorch-dev); live subjects unavailable"});
    }
  }
  {
    CommandOutput py = run_command("python3 --version");
    items.push_back({"python3", py.status == 0,
                     py.status == 0 ? trim(py.text) + " on PATH (racelab's scripts and tests)"
                                    : "python3 not found on PATH"});
  }
  return items;
}

}  // namespace racelab

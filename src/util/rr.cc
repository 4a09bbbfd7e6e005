#include "util/rr.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "util/doctor.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab {

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

RrRecording record_under_rr(const std::vector<std::string>& argv, const std::string& drop,
                            const std::string& device, const std::string& out,
                            const std::function<void(const std::string&)>& announce) {
  if (device == "cuda")
    throw InputError(
        "--rr: rr cannot record a CUDA run (the NVIDIA driver's ioctls and device memory mappings "
        "are outside what rr records); replay the schedule instead: racelab live torch --replay "
        "SCHEDULE");
  const DoctorItem rr = check_rr();
  if (!rr.ok)
    throw InputError(
        fmt::format("--rr: {} (racelab live torch --replay SCHEDULE replays a run "
                    "without rr)",
                    rr.value));
  std::vector<std::string> args = {"rr", "record", "--chaos", "/proc/self/exe"};
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) args.back() = self.string();
  for (std::size_t i = 1; i < argv.size(); ++i)
    if (argv[i] != drop) args.push_back(argv[i]);
  RrRecording got;
  ensure_directory(out);
  got.trace_dir = (std::filesystem::path(out) / "rr").string();
  ensure_directory(got.trace_dir);
  got.command = "_RR_TRACE_DIR=" + shell_quote(got.trace_dir);
  for (const auto& s : args) got.command += " " + shell_quote(s);
  if (announce) announce(got.command);
  const int status = std::system(got.command.c_str());
  got.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitInternal;
  return got;
}

}  // namespace racelab

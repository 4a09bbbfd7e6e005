#include "live/handover.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "util/errors.h"
#include "util/files.h"

namespace racelab::live {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "racelab-live-handover";
constexpr int kVersion = 1;
constexpr const char* kOption = "--continue-from";

}  // namespace

std::filesystem::path handover_path(const std::string& out) {
  return std::filesystem::path(out) / "handover.json";
}

void write_handover(const std::filesystem::path& path, const Handover& h) {
  Json found = Json::array();
  for (const Found& f : h.found)
    found.push_back({{"kind", f.kind},
                     {"execution", f.execution},
                     {"decisions", f.decisions},
                     {"schedule", f.schedule},
                     {"findings", f.findings}});
  Json classes = Json::array();
  for (const auto& [fingerprint, count] : h.tally.coverage.counts())
    classes.push_back({fingerprint, count});
  const Json j = {{"format", kFormat},
                  {"version", kVersion},
                  {"hash", h.hash},
                  {"processes", h.processes},
                  {"executions", h.tally.executions},
                  {"steps", h.tally.steps},
                  {"classes", classes},
                  {"saturated", h.tally.coverage.saturated()},
                  {"seconds", h.seconds},
                  {"wall_seconds", h.wall_seconds},
                  {"kinds", h.kinds},
                  {"settled", h.settled},
                  {"found", found},
                  {"strategy", Json::parse(h.strategy)}};
  write_file_atomic(path, j.dump(1) + "\n");
}

Handover read_handover(const std::string& path) {
  const std::string text = read_file(path);
  try {
    const Json j = Json::parse(text);
    if (j.at("format") != kFormat || j.at("version") != kVersion)
      throw InputError(fmt::format("{}: not a racelab live handover (format {} version {})", path,
                                   kFormat, kVersion));
    Handover h;
    h.hash = j.at("hash").get<std::string>();
    h.processes = j.at("processes").get<std::uint64_t>();
    h.tally.executions = j.at("executions").get<std::uint64_t>();
    h.tally.steps = j.at("steps").get<std::uint64_t>();
    // Coverage counts executions as it adds them: its classes' counts add up to them.
    for (const Json& c : j.at("classes"))
      h.tally.coverage.add(c.at(0).get<std::uint64_t>(), c.at(1).get<std::uint64_t>());
    if (j.at("saturated").get<bool>()) h.tally.coverage.mark_saturated();
    h.seconds = j.at("seconds").get<double>();
    h.wall_seconds = j.at("wall_seconds").get<double>();
    h.kinds = j.at("kinds").get<std::map<std::string, std::uint64_t>>();
    h.settled = j.at("settled").get<std::uint64_t>();
    for (const Json& f : j.at("found"))
      h.found.push_back({f.at("kind").get<std::string>(), f.at("execution").get<std::uint64_t>(),
                         f.at("decisions").get<std::uint64_t>(),
                         f.at("schedule").get<std::string>(), f.at("findings")});
    h.strategy = j.at("strategy").dump();
    return h;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a racelab live handover: {}", path, e.what()));
  }
}

std::vector<std::string> continuation_argv(std::vector<std::string> argv,
                                           const std::string& handover) {
  for (std::size_t i = 0; i < argv.size();) {
    if (argv[i] == "--") break;  // the script's own arguments follow
    if (argv[i] == kOption && i + 1 < argv.size()) {
      argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(i),
                 argv.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (argv[i].rfind(std::string(kOption) + "=", 0) == 0) {
      argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == "live" && (argv[i + 1] == "python" || argv[i + 1] == "torch")) {
      argv.insert(argv.begin() + static_cast<std::ptrdiff_t>(i) + 2, {kOption, handover});
      return argv;
    }
  }
  throw InputError("--all-findings: the command line names no 'live python' or 'live torch'");
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t at = 0; at < raw.size();) {
    const std::size_t end = raw.find('\0', at);
    args.push_back(raw.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

std::string continue_in_fresh_process(const std::string& handover) {
  std::vector<std::string> args = own_command_line();
  if (args.empty()) return "cannot read /proc/self/cmdline";
  args = continuation_argv(std::move(args), handover);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  return std::strerror(errno);
}

}  // namespace racelab::live

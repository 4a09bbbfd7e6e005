#include "model/suite.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "model/pipeline.h"
#include "model/profile.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::model {

namespace fs = std::filesystem;

std::vector<std::string> collect_scenario_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw InputError(p + ": no such file or directory");
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file() && it->path().extension() == ".toml") {
          found.push_back(it->path().string());
        }
      }
      if (ec) throw InputError(p + ": cannot list directory: " + ec.message());
      if (found.empty()) throw InputError(p + ": no scenarios (*.toml) in this directory");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<Scenario> load_suite(const std::vector<std::string>& files) {
  std::vector<Scenario> out;
  std::map<std::string, std::string> names;
  for (const auto& f : files) {
    Scenario s = load_scenario(f);
    auto [it, fresh] = names.emplace(s.name, f);
    if (!fresh) {
      throw InputError(
          fmt::format("{}: name: \"{}\" is already the name of {}", f, s.name, it->second));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace racelab::model

namespace racelab::model {

Scenario scenario_for_schedule(const sched::Schedule& schedule, const std::string& schedule_path,
                               const std::string& override_path, bool allow_other,
                               const std::string& torch) {
  // A recorded path is found from any directory (util/files.h, recorded_path).
  const std::string path =
      override_path.empty() ? recorded_path(schedule.subject_path, schedule_path) : override_path;
  if (path.empty()) {
    throw InputError(schedule_path + ": subject.path: empty; pass --scenario FILE");
  }
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw InputError(
        fmt::format("{}: recorded against {}, which does not exist here; pass "
                    "--scenario FILE",
                    schedule_path, path));
  }
  if (fs::is_directory(path, ec)) {
    throw InputError(override_path.empty()
                         ? fmt::format("{}: recorded against {}, which is a directory here, not a "
                                       "scenario; pass --scenario FILE",
                                       schedule_path, path)
                         : fmt::format("{}: is a directory, not a scenario (TOML); --scenario "
                                       "takes a scenario file",
                                       path));
  }
  Scenario s = load_scenario(path);
  if (!torch.empty()) {
    apply_torch(s, torch);
  } else if (s.hash != schedule.subject_hash && !s.live) {
    // Recorded by `explore --torch V`: the same file under another profile.
    for (const TorchProfile& p : torch_profiles()) {
      if (torch_hash(s.content, p.name) == schedule.subject_hash) {
        apply_torch(s, p.name);
        break;
      }
    }
  }
  if (s.hash != schedule.subject_hash && !allow_other) {
    throw InputError(fmt::format(
        "{}: recorded against scenario \"{}\" with content hash {}, but {} now has hash {}: the "
        "scenario changed since recording; to try this interleaving against the changed scenario "
        "(does a fix remove it?) run `racelab replay {} --scenario {}`, or record a new schedule "
        "with `racelab explore {}`",
        schedule_path, schedule.subject_name, schedule.subject_hash, path, s.hash, schedule_path,
        path, path));
  }
  return s;
}

}  // namespace racelab::model

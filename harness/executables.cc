#include "executables.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "live/python/bridge.h"
#include "live/torch/workload.h"
#include "util/errors.h"
#include "util/spawn.h"

namespace racelab::cli {

namespace {

struct Sibling {
  const char* file;  // its name beside racelab (harness/CMakeLists.txt's OUTPUT_NAME)
  const char* what;  // the component, in the stand-ins' words
  bool built;        // this build made it (harness/CMakeLists.txt defines RACELAB_BUILT_*)
  bool here;         // this process has the component linked in
};

Sibling sibling_for(LiveComponent component) {
  switch (component) {
    case LiveComponent::kPython:
      return {"racelab-python", "the Python bridge", RACELAB_BUILT_PYTHON != 0,
              live::python::built_with_python()};
    case LiveComponent::kTorch:
      return {"racelab-torch", "LibTorch", RACELAB_BUILT_TORCH != 0,
              live::torch_workload::built_with_torch()};
  }
  return {"", "", false, false};
}

}  // namespace

void run_with(LiveComponent component) {
  const Sibling s = sibling_for(component);
  if (s.here || !s.built) return;
  const std::filesystem::path self = self_executable();
  const std::filesystem::path path = self.parent_path() / s.file;
  if (self.filename() == s.file)  // a stale or foreign copy: never exec itself in a loop
    throw InputError(fmt::format("{} was built without {}: rebuild it", self.string(), s.what));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(fmt::format(
        "this command runs in {} ({}), which is missing beside {}: build the target racelab (it "
        "builds {} too)",
        s.file, s.what, self.string(), s.file));
  std::vector<std::string> args = program_args();
  if (args.empty()) args.push_back(path.string());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execv(path.c_str(), argv.data());  // returns only where it failed
  throw InputError(fmt::format("cannot run {}: {}", path.string(), std::strerror(errno)));
}

}  // namespace racelab::cli

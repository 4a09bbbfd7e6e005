// racelab doctor: what this machine offers and why not where it does not. Always exits 0, but for
// a --python that names no virtual environment (exit 2).
#include "util/doctor.h"

#include <fmt/format.h>

#include <memory>

#include "command.h"
#include "executables.h"
#include "live.h"
#include "live/python/bridge.h"
#include "racelab/version.h"
#include "util/errors.h"

namespace racelab::cli {

namespace {

struct DoctorArgs {
  std::string python;                    // the environment a live python run would use
  std::string interpose = "torch-2.11";  // the table it would apply
};

}  // namespace

void add_doctor(CLI::App& app, Runner& run) {
  auto a = std::make_shared<DoctorArgs>();
  auto* cmd = app.add_subcommand(
      "doctor",
      "Report CPUs, compiler, ThreadSanitizer, rr, CUDA devices, LibTorch, and the Python, torch "
      "and interposition table a live python run would use");
  cmd->add_option("--python", a->python,
                  "ENV: the virtual environment to describe (as racelab live python --python; "
                  "default $VIRTUAL_ENV)");
  cmd->add_option("--interpose", a->interpose,
                  "the interposition table to check against that torch (as racelab live python)")
      ->capture_default_str();
  cmd->callback([&run, a] {
    run = [a] {
      run_with(LiveComponent::kPython);  // it asks the embedded interpreter: racelab-python
      fmt::print("racelab {}\n", kVersion);
      for (const DoctorItem& item : run_doctor()) {
        fmt::print("{:<9} {:<4} {}\n", item.name, item.ok ? "ok" : "no", item.value);
      }
      std::fflush(stdout);
      // The embedded interpreter's view: what racelab live python would run the script with.
      live::python::Job job;
      job.interpose = a->interpose;
      job.python = livecmd::python_environment(a->python);
      for (const auto& [name, ok, value] : live::python::describe_environment(job))
        fmt::print("{:<9} {:<4} {}\n", name, ok ? "ok" : "no", value);
      return kExitOk;
    };
  });
}

}  // namespace racelab::cli

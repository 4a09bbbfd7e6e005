// racelab doctor: what this machine offers and why not where it does not. Always exits 0.
#include "util/doctor.h"

#include <fmt/format.h>

#include "command.h"
#include "racelab/version.h"
#include "util/errors.h"

namespace racelab::cli {

void add_doctor(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand(
      "doctor", "Report CPUs, compiler, ThreadSanitizer, rr, CUDA devices, LibTorch and Python");
  cmd->callback([&run] {
    run = [] {
      fmt::print("racelab {}\n", kVersion);
      for (const DoctorItem& item : run_doctor()) {
        fmt::print("{:<9} {:<4} {}\n", item.name, item.ok ? "ok" : "no", item.value);
      }
      return kExitOk;
    };
  });
}

}  // namespace racelab::cli

// racelab: deterministic simulation and race reproduction for multi-threaded GPU training
// pipelines. Exit codes (docs/cli.md): 0 ran and matched expectations, 1 found a failure, 2 bad
// input or usage, 3 internal error.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>

#include "command.h"
#include "racelab/version.h"
#include "util/errors.h"

int main(int argc, char** argv) {
  using namespace racelab;
  CLI::App app{
      "racelab: find, replay and prove the absence of interleavings that hang "
      "multi-threaded GPU training pipelines",
      "racelab"};
  app.set_version_flag("--version", std::string("racelab ") + kVersion);
  app.require_subcommand(1);
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "more log output (repeat for debug)");
  app.add_flag("-q,--quiet", quiet, "only warnings and errors");
  cli::Runner run;
  cli::add_doctor(app, run);
  cli::add_explore(app, run);
  cli::add_replay(app, run);
  cli::add_shrink(app, run);
  cli::add_suite(app, run);
  cli::add_alloc(app, run);
  cli::add_merge(app, run);
  cli::add_live(app, run);
  cli::add_check(app, run);

  cli::program_args().assign(argv, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "racelab: error: %s\n", cli::parse_error_text(app, e, argc, argv).c_str());
    return kExitBadInput;
  }

  auto logger = spdlog::stderr_color_mt("racelab");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("racelab: %^%l%$: %v");
  spdlog::set_level(quiet          ? spdlog::level::warn
                    : verbose >= 2 ? spdlog::level::debug
                    : verbose == 1 ? spdlog::level::info
                                   : spdlog::level::warn);
  std::signal(SIGINT, cli::on_interrupt_signal);
  try {
    return run();
  } catch (const InputError& e) {
    cli::clear_progress();
    std::fprintf(stderr, "racelab: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    cli::clear_progress();
    std::fprintf(stderr, "racelab: internal error: %s\n", e.what());
    return kExitInternal;
  } catch (...) {
    cli::clear_progress();
    std::fprintf(stderr, "racelab: internal error: unknown exception\n");
    return kExitInternal;
  }
}

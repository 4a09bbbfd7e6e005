// racelab live torch | alloc: the LibTorch drafter workload under the scheduler (src/live/torch),
// its --rr recording, and the CUDA allocator capture of its step. (Its overhead measurement is
// the benchmark bench/live_overhead.cc.)
//
//   racelab live torch --drafters N --warmup MODE [--device cpu|cuda] ...  runs the workload under
//     the scheduler, execution after execution, until a failure (deadlock, hang, exception) or the
//     budget; writes report.json, trace.txt and the failing schedule.
//   racelab live torch --replay SCHEDULE  runs the recorded schedule again.
//   racelab live alloc --attention fused|chunked|dense ...  records the CUDA caching allocator's
//     history of the drafter step and reports on it (src/alloc, alloc::report_capture; printed
//     as alloc report prints).
//
// A hang cannot be unwound (threads are stuck inside LibTorch), so after writing its results the
// command ends the process at once.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "alloc.h"
#include "alloc/outputs.h"
#include "command.h"
#include "executables.h"
#include "live.h"
#include "model/settings.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/rr.h"

namespace racelab::cli::livecmd {

namespace {

// --rr: runs this same command (without --rr) under `rr record --chaos` (util/rr.h) and prints
// the rr replay command.
int run_under_rr(const LiveArgs& a) {
  std::string device = a.cfg.device;
  if (!a.replay.empty())
    device = tw::recorded_device(report::read_schedule(a.replay).live_configuration);
  const RrRecording rec =
      record_under_rr(program_args(), "--rr", device, a.out, [](const std::string& command) {
        fmt::print("recording under rr: {}\n", command);
        std::fflush(stdout);
      });
  fmt::print("rr trace: {}/latest-trace\n  rr replay {}/latest-trace\n", rec.trace_dir,
             rec.trace_dir);
  return rec.exit_code;
}

}  // namespace

int run_torch(LiveArgs a) {
  // Recorded as racelab was started (rr follows the exec below), so the command it prints is the
  // same whichever executable runs the workload.
  if (a.rr) return run_under_rr(a);
  run_with(LiveComponent::kTorch);  // the LibTorch workload: racelab-torch
  if (a.overhead_steps > 0)
    throw InputError(
        "--overhead moved to the benchmark racelab_live_overhead (bench/live_overhead.cc, built "
        "with -DRACELAB_BENCH=ON): racelab_live_overhead --steps N [--device cuda] ...");
  check_common(a);
  a.cfg.warmup_backward = !a.no_warmup_backward;  // a replay's: recorded
  live::Job job = tw::make_job(a.cfg, a.shape, a.replay, recorded_schedule(a.replay),
                               [&] { return search_strategy(a); });
  return print_run(search_options(a), job);
}

int run_alloc(AllocArgs a) {
  run_with(LiveComponent::kTorch);
  if (!a.seq_lens.empty()) a.cfg.seq_lens = tw::parse_lengths(a.seq_lens, "--seq-lens");
  if (a.cfg.iterations < 1) throw InputError("--iterations must be at least 1");
  const auto& names = model::settings::kWorkloadAttentions;
  if (std::find(names.begin(), names.end(), a.cfg.attention) == names.end())
    throw InputError(fmt::format("--attention must be one of {}, got '{}'", fmt::join(names, ", "),
                                 a.cfg.attention));
  a.cfg.out = a.out;
  ensure_directory(a.out);
  const tw::AllocOutcome got = tw::capture_alloc(a.cfg);
  fmt::print("{}\n", got.summary);
  fmt::print("trace: {}\nstats: {}\n", got.pickle_path, got.stats_path);
  std::fflush(stdout);
  const alloc::TraceReports reports =
      alloc::report_capture(got.pickle_path, a.out, alloccmd::replay_progress());
  alloccmd::print_reports(reports, false);
  alloccmd::print_written(reports.written);
  return kExitOk;
}

}  // namespace racelab::cli::livecmd

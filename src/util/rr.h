#pragma once
// Recording racelab itself under rr (racelab live torch --rr): the same command line, without
// --rr, re-run under `rr record --chaos`, its trace under OUT/rr. Where rr cannot record here
// (racelab doctor's check_rr: no rr, perf events off, a CPU rr does not support) or the run uses
// CUDA (rr records neither the NVIDIA driver's ioctls nor device memory mappings), InputError
// with the reason and the schedule-replay alternative, before anything runs.
#include <functional>
#include <string>
#include <vector>

namespace racelab {

struct RrRecording {
  std::string command;    // the shell command run, for the terminal
  std::string trace_dir;  // OUT/rr; `rr replay TRACE_DIR/latest-trace` replays it
  int exit_code = 0;      // the recorded racelab's exit code
};

// `argv`: this process's command line, argv[0] included; every `drop` in it is left out.
// `device`: the run's device ("cpu", "cuda"). `announce(command)` is called before it runs.
RrRecording record_under_rr(const std::vector<std::string>& argv, const std::string& drop,
                            const std::string& device, const std::string& out,
                            const std::function<void(const std::string&)>& announce);

}  // namespace racelab

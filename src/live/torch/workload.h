#pragma once
// The LibTorch drafter workload: a DFlash-style drafter step (q/k/v projections, attention, output
// projection, loss, backward) with the pipeline's compile structure (docs/facts.md F1-F5), run as a
// live subject on real threads.
//
//   per process (per execution here): a cache from (device, sequence length) to a compiled
//   attention kernel, and one recursive compile_lock (F1);
//   forward: guard check and cache snapshot *before* the lock (F5), then, on a miss, under
//   compile_lock: trace through autograd (torch::autograd::grad on the device, F4) and compile;
//   backward: a custom autograd function whose backward compiles its kernel lazily under the same
//   lock (F2); on CUDA the autograd engine runs it on the device's worker thread (F3).
//
// The compile is real work: on CUDA, NVRTC compiles the kernel source for the device's
// architecture and the kernels it produces compute the causal bias and the backward's row term;
// on CPU, TorchScript compiles the same two functions from source. Only this header is free of
// LibTorch, so the command line builds without it.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/live.h"
#include "live/search.h"
#include "sched/schedule.h"
#include "sched/strategy.h"

namespace racelab::live::torch_workload {

struct Config {
  int drafters = 2;
  std::string device = "cpu";  // cpu | cuda
  int gpus = 1;                // cuda: drafter i runs on cuda:(i % gpus)
  // The settings' names are model/settings.h's (the scenario format's, docs/scenarios.md).
  std::string attention = "dense";  // dense | chunked | fused: the workload's own (no model
                                    // counterpart: every variant compiles as flex_compiled does)
  std::string warmup = "none";      // [warmup] mode: none | sequential | lock_first_step
                                    // | lock_first_forward | per_thread_lock
  bool warmup_backward = true;      // [warmup] backward (sequential: also run backward)
  int warmup_seq_len = 0;           // [warmup] seq_len; 0 means the first training length
  std::vector<int> seq_lens{128};   // one training step per length, per drafter
  int hidden = 256;
  int heads = 4;
  int chunk = 64;  // chunked attention: queries per chunk
};

// Throws InputError with one line for anything out of range or unsupported by this build.
void validate(const Config& c);
// "128,256" -> {128, 256}; InputError naming `flag` for an item that is not a number.
std::vector<int> parse_lengths(const std::string& text, const std::string& flag);
// racelab live torch's shape options, in the Python pipelines' spellings (model/settings.h):
// --seq-len L and --steps N (N steps at length L), --head-dim D (hidden = heads x D); and the
// older spellings, still accepted: --seq-lens L1,L2,... (one step per length) and --hidden H.
// Unset: "" and 0. The defaults are the workload's own (one step at 128, hidden 256), not the
// pipelines' (2 steps at 1024, head_dim 64).
struct ShapeOptions {
  std::string seq_len;   // --seq-len L
  int steps = 0;         // --steps N
  std::string seq_lens;  // --seq-lens L1,L2,...
  int head_dim = 0;      // --head-dim D
  int hidden = 0;        // --hidden H
};
// Sets c.seq_lens and c.hidden from `o` (c.heads already set); InputError for a spelling given
// with its alias, or a value out of range.
void apply_shape(Config& c, const ShapeOptions& o);
// The configuration as its schedules and report record it (JobInfo::parameters), in this order:
// drafters, device, gpus, attention, warmup, warmup_backward, warmup_seq_len, seq_lens, hidden,
// heads, chunk; and back (InputError "workload parameters: <key>: ..." for a missing or mistyped
// entry).
sched::SubjectConfig to_config(const Config& c);
Config from_config(const sched::SubjectConfig& s);
// The content hash's input (Drafters::content_hash): the same entries as compact JSON text. Its
// bytes are every recorded schedule's hash: they must not change.
std::string config_json(const Config& c);
// The device a schedule's recorded configuration (sched::Schedule::live_configuration) names: ""
// where it names none (a Python script's configuration, a model schedule's empty one).
std::string recorded_device(const sched::SubjectConfig& live_configuration);

// "LibTorch 2.11.0 (CUDA 13.0, NVRTC)" / "LibTorch 1.13.1 (CPU)" / "" without LibTorch.
std::string build_description();
bool built_with_torch();
bool cuda_available();  // a CUDA build with a device present

// The live subject; throws InputError when this build has no LibTorch.
std::unique_ptr<Subject> make_drafters(const Config& c);

// racelab live torch's run (live/search.h). Replaying (`replay` a schedule's path, `recorded` that
// schedule as read): the workload with the recorded configuration, its steps the strategy; an
// InputError naming the schedule where this build cannot run it. Searching (`replay` ""): `cfg`
// with `shape` applied (apply_shape), under `search()`'s strategy.
Job make_job(Config cfg, const ShapeOptions& shape, const std::string& replay,
             std::optional<sched::Schedule> recorded,
             const std::function<std::unique_ptr<sched::Strategy>()>& search);

// Overhead measurement: one drafter runs `steps` training steps at the first of c.seq_lens after a
// sequential forward+backward warmup (so no compile happens in the timed steps), under the
// scheduler (o.control) or as plain code; returns each step's wall time in seconds (on CUDA the
// device is synchronised at the end of each step).
std::vector<double> time_steps(const Config& c, int steps, const Options& o);

// Allocator capture (CUDA builds): the fixtures' drafter step under the CUDA caching allocator's
// history recorder. Writes <out>/snap_<name>.pickle and <out>/stats_<name>.json.
struct AllocConfig {
  std::string attention = "fused";  // fused | chunked | dense
  int iterations = 150;
  std::vector<int> seq_lens;  // empty: random lengths 512..4096 in steps of 64 (the fixtures)
  std::uint64_t seed = 1;
  int hidden = 2048;
  int heads = 16;
  int chunk = 512;
  std::string out;
  std::string name;  // default: live_<attention>_<seed>
};
struct AllocOutcome {
  std::string pickle_path;
  std::string stats_path;
  std::string summary;  // one line
};
AllocOutcome capture_alloc(const AllocConfig& c);

}  // namespace racelab::live::torch_workload

#pragma once
// One vocabulary for the pipeline settings. The names of the model's scenario format
// (docs/scenarios.md; parsed by model/scenario.cc) are the reference; the LibTorch workload of
// `racelab live torch` (live/torch/config.cc, its options in harness/live.cc) takes the same names
// for the same settings, and says where it has a setting of its own.
//
// The other copy is Python's: tools/pipelines/settings.py, which the Python pipelines
// (tools/pipelines/*.py, tests/live/pipelines/train_queue.py) and tools/conformance.py import.
// Tests that fail when the copies drift: tests/model/test_settings.cc (this table against the
// scenario parser), tests/live/check_settings.py (settings.py against the scenario parser's
// errors and `racelab live torch --help`, which prints kLiveTorchOptions).
#include <array>
#include <cstddef>
#include <string_view>

namespace racelab::model::settings {

// [pipeline] attention: how the pipeline calls attention (docs/model.md, M2), in the order of
// model::Attention.
inline constexpr std::array<std::string_view, 4> kAttentions = {"flex_compiled", "flex_eager",
                                                                "sdpa_chunked", "sdpa_fused"};

// [warmup] mode, in the order of model::WarmupMode.
inline constexpr std::array<std::string_view, 6> kWarmupModes = {"none",
                                                                 "sequential",
                                                                 "lock_first_step",
                                                                 "lock_first_forward",
                                                                 "per_thread_lock",
                                                                 "separate_process"};

// The modes by meaning, for code that tests a setting's value (the LibTorch workload keeps the
// names as strings).
namespace warmup {
inline constexpr std::string_view kNone = kWarmupModes[0];
inline constexpr std::string_view kSequential = kWarmupModes[1];
inline constexpr std::string_view kLockFirstStep = kWarmupModes[2];
inline constexpr std::string_view kLockFirstForward = kWarmupModes[3];
inline constexpr std::string_view kPerThreadLock = kWarmupModes[4];
}  // namespace warmup

// The warmup mode only the model has: the live pipelines have no on-disk compile cache for
// another process to warm. Every other mode is a live mode, under the same name.
inline constexpr std::string_view kModelOnlyWarmup = "separate_process";
inline constexpr auto kLiveWarmupModes = [] {
  std::array<std::string_view, kWarmupModes.size() - 1> out{};
  std::size_t n = 0;
  for (std::string_view m : kWarmupModes)
    if (m != kModelOnlyWarmup) out[n++] = m;
  return out;
}();

// `racelab live torch --attention`: a setting of the workload with no model counterpart, so it
// keeps its own names. Every variant compiles its kernels lazily under compile_lock, the compile
// structure of the model's flex_compiled (docs/live.md); the variant is only the math around the
// compiled causal bias: dense (full scores), chunked (query blocks of --chunk), fused
// (scaled_dot_product_attention). The model's sdpa_chunked and sdpa_fused never compile, so they
// are not these. (`racelab live alloc --attention fused|chunked|dense` is not this setting either:
// it compiles nothing, its fused and chunked are the memory behaviour of the model's sdpa_fused and
// sdpa_chunked, and its names also name its output files.)
inline constexpr std::array<std::string_view, 3> kWorkloadAttentions = {"dense", "chunked",
                                                                        "fused"};
namespace workload_attention {
inline constexpr std::string_view kDense = kWorkloadAttentions[0];
inline constexpr std::string_view kChunked = kWorkloadAttentions[1];
inline constexpr std::string_view kFused = kWorkloadAttentions[2];
}  // namespace workload_attention

// Each key of the pipeline model's tables ([pipeline], [warmup], [torch], [gpu]: every key of
// docs/scenarios.md's example) and the option of `racelab live torch` for the same setting (""
// where the workload has none), with why it is spelled otherwise where it is. `racelab live torch
// --help` prints this table; tools/pipelines/settings.py has the same keys with the Python
// pipelines' options beside these.
struct LiveTorchOption {
  std::string_view key;     // "table.key" of the scenario format
  std::string_view option;  // racelab live torch's option, "" for none
  std::string_view note;    // where the option is not the key's own spelling, or is missing
};
inline constexpr std::array<LiveTorchOption, 16> kLiveTorchOptions = {{
    {"pipeline.devices", "--gpus", "named for GPUs: --device cpu|cuda is the kind of device"},
    {"pipeline.drafters_per_device", "--drafters", "the total: devices x drafters_per_device"},
    {"pipeline.steps", "--steps", "default 1 (--seq-lens L1,L2,...: one step per length)"},
    {"pipeline.attention", "", "always flex_compiled's compile structure (not --attention)"},
    {"pipeline.seq_len", "--seq-len", "one length, default 128"},
    {"pipeline.batch", "", "1"},
    {"pipeline.heads", "--heads", ""},
    {"pipeline.head_dim", "--head-dim", "default 64 (--hidden: heads x head_dim)"},
    {"pipeline.chunk", "--chunk", "queries per chunk of --attention chunked"},
    {"warmup.mode", "--warmup", "all but separate_process"},
    {"warmup.backward", "--no-warmup-backward", "backward = false"},
    {"warmup.seq_len", "--warmup-seq-len", ""},
    {"torch.profile", "", "the LibTorch it runs"},
    {"torch.recompile_limit", "", "no limit"},
    {"torch.automatic_dynamic", "", "false: every length compiles static, its backward lazily"},
    {"gpu.memory_gib", "", "the device's own"},
}};

}  // namespace racelab::model::settings

#pragma once
// Torch behaviour profiles: the numbers and switches that differ between PyTorch releases. Only
// durations (virtual seconds, for timelines and warmup cost) live here besides the switches;
// verdicts never depend on durations.
#include <string>

namespace racelab::model {

struct TorchProfile {
  std::string name;
  // Virtual durations, seconds. Seen on the H200 (docs/facts.md): a lazy run with one drafter
  // takes ~18 s, most of it the forward and backward compiles; a compiled step ~7 ms.
  double compile_forward = 7.0;
  double compile_backward = 3.0;
  double trace_grad = 0.2;      // the autograd.grad the flex HOP runs while tracing (F4)
  double forward = 0.004;       // a compiled forward
  double backward = 0.003;      // a backward on the device worker
  double eager_forward = 0.02;  // the unfused fallback (F7)
  // separate_process (F8): the disk caches are warm, so in-process compiles are shorter.
  double warm_disk_factor = 0.25;
  // F9: CUDAGraph Trees' thread-local tree manager asserts in foreign threads. Off for 2.11.
  bool cudagraph_tls_assert = false;
  // F10: FX's "is tracing" flag is one module global in 2.11, so a thread inside make_fx makes
  // every other thread's compiled call raise (rule M2a). Made thread-local after 2.11: a profile
  // with this off has no entry-check failure (no thread calls its wrapper while itself tracing).
  bool fx_tracing_process_wide = true;
  // F11: a recompile with a dynamic dimension saves SymInts for backward and so compiles its
  // backward ahead of time, on the compiling thread, inside compile_lock (rule M2e).
  bool dynamic_backward_ahead_of_time = true;
  // F12: eager flex_attention with gradients (flex_eager, or a compiled call that fell back)
  // traces its own joint graph with make_fx on every call, outside compile_lock (rule M2f).
  bool eager_flex_traces = true;
};

inline TorchProfile profile_2_11() { return TorchProfile{"2.11"}; }

}  // namespace racelab::model

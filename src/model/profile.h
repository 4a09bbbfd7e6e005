#pragma once
// Torch behaviour profiles: the numbers and switches that differ between PyTorch releases. A
// profile is data, one TOML file per profile under data/profiles/ (embedded in racelab at build
// time; format in docs/scenarios.md, "Torch profiles"), each standing for the release series its
// `versions` list: a new torch release that behaves differently is a new file, not new code.
// Only durations (virtual seconds, for timelines and warmup cost) live here besides the switches;
// verdicts never depend on durations.
#include <string>
#include <vector>

namespace racelab::model {

struct TorchProfile {
  std::string name;
  std::vector<std::string> versions;  // the release series it stands for ("2.10", "2.11", ...)
  std::string description;
  std::string file;  // the data file it came from ("torch-2.11.toml"); empty for one built in code
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
  // F9: CUDAGraph Trees' thread-local tree manager asserts in foreign threads.
  bool cudagraph_tls_assert = false;
  // F10: FX's "is tracing" flag is one module global (2.10-2.13), so a thread inside make_fx
  // makes every other thread's compiled call raise (rule M2a). Thread-local from 2.14: a profile
  // with this off has no entry-check failure (no thread calls its wrapper while itself tracing).
  bool fx_tracing_process_wide = true;
  // F11: a recompile with a dynamic dimension saves SymInts for backward and so compiles its
  // backward ahead of time, on the compiling thread, inside compile_lock (rule M2e).
  bool dynamic_backward_ahead_of_time = true;
  // F12: eager flex_attention with gradients (flex_eager, or a compiled call that fell back)
  // traces its own joint graph with make_fx on every call, outside compile_lock (rule M2f).
  bool eager_flex_traces = true;
};

// The default: the profile a scenario without `[torch] profile` runs under.
inline constexpr const char* kDefaultTorch = "2.11";

// Every embedded profile, in the order of their files' names. Throws std::logic_error when an
// embedded file is malformed (a build-time mistake; tests/model checks every file).
const std::vector<TorchProfile>& torch_profiles();

// The profile for a torch version: a profile's name ("2.14"), or a release it stands for, given
// as a series or a release ("2.15", "2.15.0", "2.14.1+cu130": the patch and any local part are
// dropped). nullptr when none covers it.
const TorchProfile* find_torch_profile(const std::string& version);

// "2.10-2.13 (profile 2.11), 2.14-2.15 (profile 2.14)": what an unknown version's error lists.
std::string torch_profiles_summary();

// The profile for a version that must exist (the scenario parser checked it); throws InputError
// with the one-line message otherwise.
const TorchProfile& torch_profile(const std::string& version);

// Parses one profile file's text (tests; `file` names it in errors). Throws InputError.
TorchProfile parse_torch_profile(const std::string& text, const std::string& file);

inline TorchProfile profile_2_11() { return torch_profile("2.11"); }

}  // namespace racelab::model

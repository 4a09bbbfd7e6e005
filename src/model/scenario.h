#pragma once
// Scenario format v1 (docs/scenarios.md, rules in docs/model.md): one TOML file describing a
// drafter pipeline, its warmup, the torch behaviour profile, how to explore it and what to expect.
// Parsing is strict: unknown keys, wrong types and out-of-range values are InputErrors of the form
// "<file>: <key>: <problem>", so a typo never silently becomes a default.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/expectations.h"
#include "sched/strategies/strategies.h"

namespace racelab::model {

// The settings' names are model/settings.h's (in these enums' order), shared with the live
// workload; attention_name and warmup_name return them.
enum class Attention { kFlexCompiled, kFlexEager, kSdpaChunked, kSdpaFused };
enum class WarmupMode {
  kNone,
  kSequential,
  kLockFirstStep,
  kLockFirstForward,
  kPerThreadLock,
  kSeparateProcess
};

const char* attention_name(Attention a);
const char* warmup_name(WarmupMode m);

// The finding kinds a scenario may name in [expect]: the model's (M4) and the scheduler's.
const std::vector<std::string>& known_finding_kinds();

// A live case (`[live]`): a real Python program run by `racelab live python` under the same
// [expect], so that `racelab suite` keeps live race-regression jobs beside the model's. Paths are
// relative to the scenario file's directory.
struct LiveCase {
  std::string script;
  std::vector<std::string> args;
  std::string interpose = "none";
  std::vector<std::string> python_path;  // prepended to the script's sys.path (PYTHONPATH)
  std::vector<std::string> dicts, locks, points, blocking;  // table entries (docs/live.md)
  sched::StrategyKind strategy = sched::StrategyKind::kRandom;
  int max_preemptions = 2;  // dfs: its bound (a dfs case that does not exhaust is inconclusive)
  std::uint64_t seed = 1;
  std::uint64_t executions = 40;
  double hang_timeout = 10;
  bool requires_cuda = false;  // skipped, with the reason, where no CUDA device is present
  // An allocator-stability job beside the race search (none: no such job). One uncontrolled run
  // with the allocator capture, judged by alloc report (run/check.h) and results::judge.
  std::optional<results::MemoryExpect> alloc;
  std::int64_t alloc_settle = -1;  // iterations allowed to allocate; -1: the warm phase
  double alloc_time_limit = 600;   // seconds for that run, past which it is a hang
};

struct Scenario {
  std::string name;
  std::string description;
  std::string path;     // where it was read from
  std::string content;  // the file as read; its hash identifies the scenario in schedules
  std::string hash;

  // [pipeline]
  int devices = 1;
  int drafters_per_device = 2;
  int steps = 2;
  Attention attention = Attention::kFlexCompiled;
  std::vector<std::int64_t> seq_len{1024};  // step k uses seq_len[k % size]
  std::int64_t batch = 1;
  std::int64_t heads = 8;
  std::int64_t head_dim = 64;
  std::int64_t chunk = 512;

  // [warmup]
  WarmupMode warmup = WarmupMode::kNone;
  bool warmup_backward = true;
  std::int64_t warmup_seq_len = 0;  // 0: the first training length

  // [torch]
  // The torch version it runs against: a profile's name or a release it covers (model/profile.h,
  // data/profiles/). The parser refuses a version no profile covers.
  std::string profile = "2.11";
  // --torch VERSION (explore, replay, shrink): the version it was run under instead of the
  // file's; "" for the file's own. A scenario run under another version is another subject: its
  // hash is the file's content with the version appended.
  std::string torch_override;
  int recompile_limit = 8;
  bool automatic_dynamic = true;

  // [gpu]
  double memory_gib = 141;

  // [explore]
  sched::StrategyParams explore;
  std::uint64_t iterations = 1000;

  // [live]: a live case instead of the pipeline model ([pipeline], [warmup], [torch], [gpu] and
  // [explore] are then refused).
  std::optional<LiveCase> live;

  // [expect]
  std::vector<std::string> must;
  std::vector<std::string> must_not;

  std::int64_t length_at(int step) const {
    return seq_len[static_cast<std::size_t>(step) % seq_len.size()];
  }
  std::int64_t warmup_length() const {
    return warmup_seq_len > 0 ? warmup_seq_len : seq_len.front();
  }
};

Scenario parse_scenario(std::string_view text, const std::string& path);
Scenario load_scenario(const std::string& path);

// --torch VERSION: runs `s` under the profile for VERSION instead of its own (sets profile,
// torch_override and the hash: torch_hash of the content and the profile's name, so that two
// versions of one profile are one subject). Throws InputError, one line, for a version no
// profile covers, or for a live case.
void apply_torch(Scenario& s, const std::string& version);
std::string torch_hash(const std::string& content, const std::string& profile);

}  // namespace racelab::model

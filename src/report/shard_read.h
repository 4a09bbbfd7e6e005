#pragma once
// The files a shard's `explore --shard K/N` or `suite --shard K/N` wrote (report.json,
// summary.json), read back into types for racelab merge (run/merge.cc), which combines them: the
// file boundary between shard runs stays, the reading is here, and no use case picks keys out of
// the JSON itself. The writers are report.h's (explore_report_json, suite_summary).
//
// A file that is not JSON, of another format or of a newer version is refused at once
// (InputError, one line). A field is read at once too, but a field that is missing or of the
// wrong type is refused only where merge needs it (ShardValue::get), so that the lines and their
// order stay merge's own: a field a strategy does not use is not checked, and the first problem
// in merge's order of checks is the one it reports.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::report {

// A value read from a shard's file, or the line that reading it failed with, thrown by get():
// an InputError for the fields merge checks, nlohmann's own words (an internal error) for those
// our writer always writes.
template <class T>
class ShardValue {
 public:
  ShardValue() = default;
  explicit ShardValue(T value) : value_(std::move(value)) {}
  static ShardValue refused(std::string line, bool internal = false) {
    ShardValue v;
    v.error_ = std::move(line);
    v.internal_ = internal;
    return v;
  }
  bool ok() const { return value_.has_value(); }
  const std::string& error() const { return error_; }
  const T& get() const {
    if (value_) return *value_;
    if (internal_) throw std::runtime_error(error_);
    throw InputError(error_);
  }

 private:
  std::optional<T> value_;
  std::string error_;
  bool internal_ = false;
};

// One finding of a shard's report.json ("findings").
struct ShardFinding {
  ShardValue<std::uint64_t> execution;
  std::optional<ShardValue<std::uint64_t>> subtree;  // a dfs/dpor shard's; none where absent
  ShardValue<std::string> kind;
  ShardValue<std::uint64_t> preemptions;
  ShardValue<std::uint64_t> preemptions_before_shrink;
};

// One subtree a dfs/dpor shard ran ("dfs_split" "ran").
struct ShardSubtree {
  ShardValue<std::uint64_t> index;
  ShardValue<std::int64_t> executions;
  ShardValue<std::uint64_t> redundant;  // dpor's abandoned executions
  ShardValue<bool> complete;
  ShardValue<std::uint64_t> steps;
};

// The interleaving classes a shard counted ("interleavings"), fingerprints in the file's order
// (a fingerprint's hex and its count).
struct ShardInterleavings {
  ShardValue<bool> saturated;
  std::vector<ShardValue<std::pair<std::uint64_t, std::uint64_t>>> fingerprints;
};

// A value that must be the same in every shard of one exploration, as written; none where the
// report has no such key.
struct ShardIdentity {
  const char* key = "";
  std::optional<nlohmann::json> value;
  // Both have the key, with equal values (JSON's equality: 1 and 1.0 are equal).
  bool same_as(const ShardIdentity& other) const {
    return value && other.value && *value == *other.value;
  }
  std::string text() const { return value ? value->dump() : "(missing)"; }
};

// The report.json of one shard of one exploration.
struct ShardReport {
  std::string dir;
  // "scenario", "scenario_hash", "strategy_description", "seed", "iterations",
  // "strategy_params", in that order (merge compares them and says which differs).
  std::vector<ShardIdentity> identity;
  bool is_shard = false;  // has "partition"
  ShardValue<std::uint64_t> shards;
  ShardValue<std::uint64_t> shard;
  ShardValue<std::string> scenario_path;
  ShardValue<std::string> scenario_hash;
  std::optional<std::string> torch;  // `explore --torch V`'s V
  ShardValue<sched::StrategyKind> strategy;
  ShardValue<std::string> strategy_description;
  ShardValue<std::uint64_t> seed;
  ShardValue<int> depth;
  ShardValue<int> max_preemptions;
  ShardValue<std::uint64_t> iterations;
  // "dfs_split": how many subtrees the search was split into, and those this shard ran.
  ShardValue<std::uint64_t> subtrees;
  std::string subtrees_text;  // as written, for the line that says they differ
  ShardValue<std::vector<ShardSubtree>> ran;
  ShardValue<std::uint64_t> executions;
  ShardValue<std::uint64_t> steps;
  ShardValue<double> seconds;
  ShardValue<std::string> stopped_by;
  std::optional<sched::StopReason> stop;  // stopped_by's word, where it is one
  ShardValue<std::vector<ShardFinding>> findings;
  std::optional<ShardInterleavings> interleavings;  // none without fingerprints
  bool determinism = false;                         // the shard checked determinism
  ShardValue<double> warmup_seconds;
  ShardValue<double> makespan_seconds;
};

// `dir`/report.json. InputError: "DIR: no report.json (not an explore --out directory)", invalid
// JSON, another format or a newer version.
ShardReport read_shard_report(const std::string& dir);

// One entry of a shard's summary.json ("scenarios").
struct ShardSummaryEntry {
  ShardValue<bool> live;
  ShardValue<std::string> scenario;  // a model scenario's name
  nlohmann::json entry;              // a live case's entry, kept as judged on shard 0
};

// The summary.json of one shard of one suite.
struct ShardSummary {
  std::string dir;
  ShardValue<bool> shard_zero;  // "partition" "shard" is 0
  std::vector<ShardSummaryEntry> scenarios;
};

// `dir`/summary.json. InputError: invalid JSON, another format or a newer version.
ShardSummary read_shard_summary(const std::string& dir);

}  // namespace racelab::report

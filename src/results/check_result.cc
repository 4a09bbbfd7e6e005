// racelab check's results: each variant's verdict (results::judge) and the words about them
// (check_result.h).
#include "results/check_result.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::results {

std::vector<std::string> LivePython::flags(bool controlled) const {
  std::vector<std::string> v;
  if (!env.empty()) v.push_back("--python=" + env);
  if (controlled && refuse_other_torch) v.emplace_back("--refuse-other-torch");
  return v;
}

results::Verdict VariantResult::verdict() const {
  using State = RaceVerdict::State;
  results::SearchFacts f{.strategy = sched::live_prover().name,
                         .stop = races.proof.ran
                                     ? races.proof.stopped_by.value_or(sched::StopReason::kBudget)
                                     : sched::StopReason::kBudget,
                         .executions = races.proof.ran ? races.proof.executions : races.executions,
                         .cap = races.proof.ran ? races.proof.budget : races.budget,
                         .proves = races.proof.ran,
                         .failure_found = races.state == State::kFound,
                         .other_run_failed = native.failed > 0,
                         .nondeterministic = races.state == State::kInconclusive &&
                                             races.kind == sched::kinds::kNondeterministic};
  if (races.state == State::kError) f.error = races.reason;
  // Inconclusive races are the proof cut short (clean, not exhausted: the rule says so from the
  // facts above), the subject not deterministic, or else racelab's lost control (exit 3).
  const bool cut_short = races.proof.ran && !races.proof.exhausted && races.kind.empty();
  f.lost_control = races.state == State::kInconclusive && !f.nondeterministic && !cut_short;
  if (!interrupted_in.empty())
    f.interrupted = not_run.empty()
                        ? interrupted_in
                        : fmt::format("{}; not run: {}", interrupted_in, fmt::join(not_run, ", "));
  return results::judge({.no_failure = true,
                         .memory = results::MemoryExpect::kStable,
                         .unmeasured_memory_passes = true},
                        f, memory_facts(memory), results::check_wording());
}

int CheckResult::exit_code() const {
  return !interrupted && std::all_of(variants.begin(), variants.end(),
                                     [](const VariantResult& v) { return v.passed(); })
             ? 0
             : 1;
}

std::string interrupted_line(const CheckResult& r) {
  if (!r.interrupted) return "";
  std::vector<std::string> finished, parts;
  for (const VariantResult& v : r.variants) {
    if (v.interrupted_in.empty()) {
      finished.push_back(v.name);
      continue;
    }
    std::string cut = fmt::format("cut short: {} (in {}", v.name, v.interrupted_in);
    if (!v.not_run.empty()) cut += fmt::format("; not run: {}", fmt::join(v.not_run, ", "));
    parts.push_back(cut + ")");
  }
  parts.insert(parts.begin(),
               "finished: " + (finished.empty() ? std::string("none")
                                                : fmt::format("{}", fmt::join(finished, ", "))));
  if (!r.not_run.empty()) parts.push_back(fmt::format("not run: {}", fmt::join(r.not_run, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

const char* const kInterruptedWhy =
    "an interrupted check is not a verdict: a variant cut short or not run is not a pass, whatever "
    "it showed so far (failures found stand); run the check again to the end";

const char* const kNativeOnlyWhy =
    "its race lies below racelab's scheduling points: inside one native call that drops the GIL "
    "(two threads in the same C++ at once, e.g. a lazily initialised global: docs/facts.md F13), "
    "in the order of Python accesses between points, or once per process (racelab runs its "
    "executions in one interpreter)";

std::string races_line(const VariantResult& v) {
  if (v.native.failed == 0) return race_summary(v.races);
  // An exception's type leads its message ("CheckpointError in thread drafter 0.0 at ...").
  const std::string type = v.native.message.substr(0, v.native.message.find_first_of(" :"));
  const bool typed = v.native.kind == "exception" && !type.empty() &&
                     std::isupper(static_cast<unsigned char>(type[0])) != 0;
  return fmt::format("not reached under control; seen in {} of {} native runs: {}{}",
                     v.native.failed, v.native.runs, v.native.kind, typed ? " (" + type + ")" : "");
}

const char* race_state_name(RaceVerdict::State s) {
  switch (s) {
    case RaceVerdict::State::kClean:
      return "clean";
    case RaceVerdict::State::kProven:
      return "proven";
    case RaceVerdict::State::kFound:
      return "found";
    case RaceVerdict::State::kInconclusive:
      return "inconclusive";
    case RaceVerdict::State::kError:
      return "error";
  }
  return "?";
}

const char* memory_state_name(MemoryVerdict::State s) {
  switch (s) {
    case MemoryVerdict::State::kStable:
      return "stable";
    case MemoryVerdict::State::kUnstable:
      return "unstable";
    case MemoryVerdict::State::kNotMeasured:
      return "not_measured";
    case MemoryVerdict::State::kError:
      return "error";
  }
  return "?";
}

std::string race_summary(const RaceVerdict& r) {
  switch (r.state) {
    case RaceVerdict::State::kClean:
      if (r.stopped_by == sched::StopReason::kTimeLimit ||
          r.stopped_by == sched::StopReason::kInterrupted)
        return fmt::format("none in {} of {} executions (stopped by {}; sampled, not a proof)",
                           r.executions, r.budget, sched::stop_reason_words(*r.stopped_by));
      return fmt::format("none in {} executions (sampled, not a proof)", r.executions);
    case RaceVerdict::State::kProven:
      return fmt::format("proven (dpor, exhaustive, {} executions; none in {} sampled first)",
                         r.proof.executions, r.executions);
    case RaceVerdict::State::kFound:
      return fmt::format("{} at execution {}{}", r.kind.empty() ? "failure" : r.kind, r.execution,
                         r.proof.ran ? " of the dpor proof" : "");
    case RaceVerdict::State::kInconclusive:
      if (!r.reason.empty()) return "inconclusive: " + r.reason;
      return fmt::format("inconclusive: racelab lost control ({})", r.kind);
    case RaceVerdict::State::kError:
      return "error: " + r.reason;
  }
  return "?";
}

results::MemoryFacts memory_facts(const MemoryVerdict& m) {
  return {.measured = m.state != MemoryVerdict::State::kNotMeasured,
          .stable = m.state == MemoryVerdict::State::kStable,
          .error = m.state == MemoryVerdict::State::kError,
          .run_failed = !m.failure.empty(),
          .summary = memory_summary(m)};
}

std::string memory_summary(const MemoryVerdict& m) {
  switch (m.state) {
    case MemoryVerdict::State::kNotMeasured:
      if (m.devices.empty()) return "not measured: " + m.reason;
      break;
    case MemoryVerdict::State::kError:
      return "error: " + m.reason;
    case MemoryVerdict::State::kStable:
    case MemoryVerdict::State::kUnstable:
      break;
  }
  // alloc report's own words per device: one rule, one wording (alloc/report.h).
  std::string out;
  for (const DeviceMemory& d : m.devices) {
    if (!out.empty()) out += "; ";
    if (m.devices.size() > 1) out += d.name.substr(d.name.rfind('.') + 1) + " ";
    out += fmt::format("{} ({} iterations)", d.verdict, d.iterations);
  }
  if (!m.failure.empty())
    out = fmt::format("the run failed ({}), so of a partial run: ", m.ended) + out;
  return out;
}

}  // namespace racelab::results

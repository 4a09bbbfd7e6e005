#include "live/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "racelab/version.h"
#include "sched/coverage_json.h"
#include "sched/kinds.h"
#include "sched/loop.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::live {

bool is_failure(const std::string& kind) { return sched::kinds::is_failure(kind); }

// The failure (or lost control) of an execution that ranks first in the registry's order.
std::vector<sched::Finding>::const_iterator worst_failure(const Result& r) {
  auto best = r.findings.end();
  for (auto it = r.findings.begin(); it != r.findings.end(); ++it) {
    if (!is_failure(it->kind) && !sched::kinds::is_inconclusive(it->kind)) continue;
    if (best == r.findings.end() || sched::kinds::rank(it->kind) < sched::kinds::rank(best->kind))
      best = it;
  }
  return best;
}

// The Python stack of thread `name` in a stacks.txt ("Thread 1234 (NAME):" sections), innermost
// frames last; empty when the file or the thread is not there.
std::string thread_stack(const std::filesystem::path& stacks, const std::string& name) {
  std::string text;
  try {
    text = read_file(stacks.string());
  } catch (const InputError&) {
    return {};
  }
  const std::string head = "(" + name + "):\n";
  const auto at = text.find(head);
  if (at == std::string::npos) return {};
  const auto begin = at + head.size();
  const auto end = text.find("\nThread ", begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// "racelab lost control of NAME: ..." -> NAME.
std::string lost_thread(const sched::Finding& f) {
  const std::string prefix = "racelab lost control of ";
  if (f.message.rfind(prefix, 0) != 0) return {};
  const auto colon = f.message.find(": ", prefix.size());
  return f.message.substr(prefix.size(), colon - prefix.size());
}

nlohmann::ordered_json finding_json(const sched::Finding& f) {
  nlohmann::ordered_json j;
  j["kind"] = f.kind;
  j["message"] = f.message;
  j["decision"] = f.step;
  j["details"] = f.details;
  j["cycle"] = f.cycle;
  return j;
}

std::string trace_text(const Result& r) {
  std::string out;
  std::size_t decision = 0;
  for (const Event& e : r.events) {
    out += fmt::format("{:9.6f} {:>5} {}{}: {}\n", e.seconds,
                       e.decision ? std::to_string(decision++) : std::string("-"), e.thread,
                       e.foreign ? " (foreign)" : "", e.text);
  }
  return out;
}

// Writes the schedule of execution `execution` (result `r`) as schedule-<kind>.json; its path.
std::string write_schedule(const SearchOptions& a, const JobInfo& info, const Result& r,
                           std::uint64_t execution, const std::string& strategy_desc) {
  sched::Schedule s;
  s.racelab_version = kVersion;
  s.subject_name = info.subject;
  s.subject_hash = info.hash;
  s.strategy_name = a.strategy;
  s.strategy_description = strategy_desc;
  s.seed = a.seed;
  s.execution = execution;
  s.parameters = nlohmann::json::parse(info.parameters.dump());
  // Named after its worst failure (the registry's order: a deadlock before the FX errors that
  // came first), so that another execution's schedule of a lesser kind never takes its name.
  const auto first = worst_failure(r);
  if (first != r.findings.end()) {
    s.finding_kind = first->kind;
    s.finding_message = first->message;
  }
  s.preemptions = r.preemptions;
  for (auto& [t, op] : r.decisions()) s.steps.push_back({t, op});
  const std::string path =
      (std::filesystem::path(a.out) /
       fmt::format("schedule-{}.json", s.finding_kind.empty() ? "run" : s.finding_kind))
          .string();
  write_file_atomic(path, sched::schedule_to_json(s));
  return path;
}

// Writes report.json, trace.txt and, for a failure, the schedule; returns the schedule's path.
std::string write_outputs(const SearchOptions& a, const JobInfo& info, const Outcome& o,
                          const std::string& strategy_desc) {
  const std::filesystem::path dir(a.out);
  ensure_directory(dir);
  std::string schedule_path;
  nlohmann::ordered_json report;
  report["format"] = "racelab-live-report";
  report["version"] = 1;
  report["racelab_version"] = kVersion;
  report["subject"] = info.subject;
  report["build"] = info.build;
  report["parameters"] = info.parameters;
  report["strategy"] = strategy_desc;
  report["executions"] = o.executions;
  report["seconds"] = o.seconds;
  report["exhausted"] = o.exhausted;
  report["proves"] = !samples(a);
  report["interleavings"] = sched::coverage_json(o.coverage.summary(), samples(a));
  report["kinds_seen"] = o.kinds;
  report["findings"] = nlohmann::ordered_json::array();
  if (o.failure) {
    const Result& r = *o.failure;
    for (const auto& f : r.findings) {
      auto j = finding_json(f);
      j["execution"] = o.failure_execution;
      report["findings"].push_back(j);
    }
    report["hung"] = r.hung;
    report["threads"] = r.threads;
    report["foreign_threads"] = r.foreign;

    schedule_path = write_schedule(a, info, r, o.failure_execution, strategy_desc);
    report["schedule"] = schedule_path;
  }
  if (o.other) {
    const std::string path = write_schedule(a, info, *o.other, o.other_execution, strategy_desc);
    const auto f = worst_failure(*o.other);
    auto j = finding_json(*f);
    j["execution"] = o.other_execution;
    j["schedule"] = path;
    report["other_failure"] = j;
  }
  // The failing execution's events, or the last execution's when none failed.
  if (o.failure) {
    write_file_atomic(dir / "trace.txt", trace_text(*o.failure));
  } else if (o.last) {
    write_file_atomic(dir / "trace.txt", trace_text(*o.last));
  }
  if (o.failure && o.failure->hung && info.on_hang) {
    info.on_hang(dir);
    report["stacks"] = (dir / "stacks.txt").string();
    // Where racelab lost a thread: its Python stack, beside the finding.
    for (auto& j : report["findings"]) {
      if (j["kind"] != sched::kinds::kLostControl) continue;
      sched::Finding f;
      f.message = j["message"].get<std::string>();
      const std::string stack = thread_stack(dir / "stacks.txt", lost_thread(f));
      if (!stack.empty()) j["python_stack"] = stack;
    }
  }
  write_file_atomic(dir / "report.json", report.dump(2) + "\n");
  return schedule_path;
}

Outcome search(const SearchOptions& a, const JobInfo& info, Subject& subject,
               sched::Strategy& strategy, bool replaying, const std::function<bool()>& stop,
               const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  Options lo;
  lo.hang_timeout = std::chrono::milliseconds(static_cast<long>(a.hang_timeout * 1000));
  lo.settle = std::chrono::milliseconds(a.settle_ms);
  lo.cycle_confirm = std::chrono::milliseconds(a.cycle_confirm_ms);
  Outcome o;
  const sched::Budget budget(a.executions, a.time_limit, stop);
  const bool proves = !replaying && !samples(a);
  auto run_one = [&](std::uint64_t i) {
    try {
      return run(subject, strategy, i, lo);
    } catch (const sched::ReplayDivergence& e) {
      throw InputError(
          fmt::format("{}: {} (a live run also depends on foreign threads' timing; "
                      "try a larger --settle-ms)",
                      a.replay, e.what()));
    }
  };
  auto after = [&](std::uint64_t i, Result& result) {
    Result* r = &result;
    ++o.executions;
    o.coverage.add(handoff_fingerprint(*r));
    if (info.after_execution) {
      const auto worst = worst_failure(*r);
      info.after_execution(i, worst != r->findings.end() ? worst->kind : "complete");
    }
    std::set<std::string> seen;
    for (const auto& f : r->findings) seen.insert(f.kind);
    for (const auto& k : seen) ++o.kinds[k];
    if (progress) progress(o.executions, a.executions);
    const bool lost = std::any_of(seen.begin(), seen.end(), sched::kinds::is_inconclusive);
    const bool failed = lost || std::any_of(seen.begin(), seen.end(), is_failure);
    // Searching for a deadlock: another failure is kept (the first) and the search goes on, unless
    // threads were left stuck in real calls (a hang, racelab losing control): then the process
    // must end, and that execution is the result. A hang is never the deadlock asked for.
    if (failed && !replaying && a.expect == "deadlock" && !seen.count(sched::kinds::kDeadlock) &&
        !r->hung) {
      if (!o.other) {
        o.other = std::move(*r);
        o.other_execution = i;
      }
      return true;
    }
    if (failed || replaying) {
      o.failure = std::move(*r);
      o.failure_execution = i;
      if (failed) {
        o.stopped_at_failure = true;
        return false;
      }
    } else {
      o.last = std::move(*r);
    }
    return true;
  };
  if (const auto why = sched::run_loop(budget, strategy, proves, run_one, after)) {
    o.interrupted = *why == sched::StopReason::kInterrupted;
    o.time_limit = *why == sched::StopReason::kTimeLimit;
    o.exhausted = *why == sched::StopReason::kExhausted;
  }
  if (!o.failure && o.other) {  // no deadlock: the other failure is the result
    o.failure = std::move(o.other);
    o.failure_execution = o.other_execution;
    o.other.reset();
  }
  o.seconds = budget.elapsed();
  return o;
}

Judgement judge(const SearchOptions& a, const Outcome& o) {
  Judgement j;
  if (o.failure) {
    for (const auto& f : o.failure->findings) {
      j.failed = j.failed || is_failure(f.kind);
      j.inconclusive = j.inconclusive || sched::kinds::is_inconclusive(f.kind);
    }
    j.found_deadlock = o.failure->found(sched::kinds::kDeadlock);
  }
  // A dfs search asked to show the program clean proves nothing until it covers its space.
  j.cut_short = !j.failed && !j.inconclusive && !samples(a) && !o.exhausted && a.replay.empty() &&
                a.expect == "clean";
  if (j.inconclusive)
    j.exit_code = kExitInternal;
  else if (j.cut_short)
    j.exit_code = kExitFound;
  else if (a.expect == "deadlock")
    j.exit_code = j.found_deadlock ? kExitOk : kExitFound;
  else
    j.exit_code = j.failed ? kExitFound : kExitOk;
  return j;
}

bool samples(const SearchOptions& a) {
  return !sched::strategy_proves(sched::parse_strategy(a.strategy));
}

std::string coverage_brief(const SearchOptions& a, const Outcome& o, const std::string& desc) {
  const std::string stopped = o.interrupted  ? "an interrupt"
                              : o.time_limit ? "the time limit"
                                             : "the execution cap";
  if (!a.replay.empty()) return fmt::format("replayed {} ({} execution)", a.replay, o.executions);
  if (o.stopped_at_failure)
    return fmt::format("{} executions ({}), stopped at the first failure", o.executions, desc);
  if (samples(a)) {
    return o.interrupted || o.time_limit
               ? fmt::format("sampled {} of {} executions ({}; stopped by {}), not a proof",
                             o.executions, a.executions, desc, stopped)
               : fmt::format("sampled {} executions ({}), not a proof", o.executions, desc);
  }
  if (o.exhausted)
    return fmt::format("exhaustive within the bound ({}): {} executions", desc, o.executions);
  return fmt::format(
      "cut short by {} after {} executions ({}) before covering the bounded space: not a proof",
      stopped, o.executions, desc);
}

}  // namespace racelab::live

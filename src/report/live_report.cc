// The files a live search writes (live_report.h).
#include "report/live_report.h"

#include <fmt/format.h>

#include "racelab/version.h"
#include "report/coverage_json.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "sched/kinds.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/document.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::report {

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

std::string trace_text(const live::Result& r) {
  std::string out;
  std::size_t decision = 0;
  for (const live::Event& e : r.events) {
    out += fmt::format("{:9.6f} {:>5} {}{}: {}\n", e.seconds,
                       e.decision ? std::to_string(decision++) : std::string("-"), e.thread,
                       e.foreign ? " (foreign)" : "", e.text);
  }
  return out;
}

// Writes the schedule of execution `execution` (result `r`) as schedule-<kind>.json; its path.
std::string write_schedule(const live::SearchOptions& a, const live::JobInfo& info,
                           const live::Result& r, std::uint64_t execution,
                           const std::string& strategy_desc) {
  const sched::ScheduleSource source{.subject_name = info.subject,
                                     .subject_hash = info.hash,
                                     .strategy_name = sched::strategy_name(a.strategy),
                                     .strategy_description = strategy_desc,
                                     .seed = a.seed,
                                     .live_configuration = info.parameters};
  // Named after its worst failure (the registry's order: a deadlock before the FX errors that
  // came first), so that another execution's schedule of a lesser kind never takes its name.
  const auto worst = live::worst_failure(r);
  const sched::Schedule s =
      sched::make_schedule(source, execution, worst != r.findings.end() ? &*worst : nullptr,
                           r.preemptions, r.replay_steps());
  const std::string path =
      schedule_path(a.out, {ScheduleName::Layout::kLive, "", s.finding_kind}).string();
  write_file_atomic(path, schedule_to_json(s));
  return path;
}

std::vector<live::Found> write_found(const live::SearchOptions& a, const live::JobInfo& info,
                                     const live::Outcome& o, const std::string& strategy_desc) {
  std::vector<live::Found> out;
  if (a.carried) out = a.carried->found;
  for (const auto& [execution, r] : o.kept.found) {
    live::Found f;
    f.kind = live::worst_failure(r)->kind;
    f.execution = execution;
    f.decisions = r.choices.size();
    f.schedule = write_schedule(a, info, r, execution, strategy_desc);
    f.findings = nlohmann::ordered_json::array();
    for (const auto& finding : r.findings) {
      auto j = finding_json(finding, {{"decision", finding.step}});
      j["execution"] = execution;
      j["schedule"] = f.schedule;
      f.findings.push_back(j);
    }
    out.push_back(std::move(f));
  }
  return out;
}

// Writes report.json, trace.txt and, for a failure, the schedules; returns their paths.
LiveSchedules write_outputs(const live::SearchOptions& a, const live::JobInfo& info,
                            const live::Outcome& o, const std::string& strategy_desc,
                            std::optional<sched::Strategy::Classes> classes,
                            const std::vector<live::Found>& found) {
  const std::filesystem::path dir(a.out);
  ensure_directory(dir);
  const live::StopAtFailure& kept = o.kept;
  LiveSchedules written;
  nlohmann::ordered_json report;
  report["format"] = kLiveReportFormat;
  report["version"] = kLiveReportVersion;
  report["racelab_version"] = kVersion;
  report["subject"] = info.subject;
  report["build"] = info.build;
  report["parameters"] = subject_config_json(info.parameters);
  // The torch and Python the run met, against its table's verified range (docs/reports.md).
  if (!info.versions.is_null()) report["versions"] = info.versions;
  report["strategy"] = strategy_desc;
  const nlohmann::ordered_json explored = explored_json(o, !live::samples(a), Seconds::kAsMeasured);
  for (const auto& [key, value] : explored.items()) report[key] = value;
  // dpor's own count: the Mazurkiewicz classes it explored (one complete execution each) and the
  // executions it abandoned as sleep-set blocked (docs/live.md, "Proofs").
  if (classes) report["dpor"] = {{"classes", classes->classes}, {"redundant", classes->redundant}};
  report["kinds_seen"] = kept.kinds;
  // Decisions that waited for a quiet period (--settle-ms) on top of quiescence: where a result
  // could depend on the machine's speed (docs/live.md, "Determinism").
  report["settle"] = {{"ms", a.settle_ms}, {"decisions", kept.settled}};
  if (info.subject == sched::kLivePythonSubject) report["not_checked"] = kPythonNotChecked;
  if (a.replay.empty() && sched::strategy_info(a.strategy).proves_every_order)
    report["proof_covers"] = live_proof_covers(info.subject);
  report["findings"] = nlohmann::ordered_json::array();
  if (kept.failure) {
    const live::Result& r = *kept.failure;
    for (const auto& f : r.findings) {
      auto j = finding_json(f, {{"decision", f.step}});
      j["execution"] = kept.failure_execution;
      report["findings"].push_back(j);
    }
    report["hung"] = r.hung;
    report["threads"] = r.threads;
    report["foreign_threads"] = r.foreign;

    written.failure = write_schedule(a, info, r, kept.failure_execution, strategy_desc);
    report["schedule"] = written.failure;
  }
  if (a.all_findings) {
    // Every kind found, in every process of the search (live/handover.h).
    report["kinds_found"] = nlohmann::ordered_json::array();
    for (const live::Found& f : found) {
      for (const auto& j : f.findings) report["findings"].push_back(j);
      report["kinds_found"].push_back({{"kind", f.kind},
                                       {"execution", f.execution},
                                       {"decisions", f.decisions},
                                       {"schedule", f.schedule}});
    }
    report["processes"] = a.carried ? a.carried->processes + 1 : 1;
  }
  if (kept.other) {
    written.other = write_schedule(a, info, *kept.other, kept.other_execution, strategy_desc);
    const auto f = live::worst_failure(*kept.other);
    auto j = finding_json(*f, {{"decision", f->step}});
    j["execution"] = kept.other_execution;
    j["schedule"] = written.other;
    report["other_failure"] = j;
  }
  // The failing execution's events, or the last execution's when none failed.
  if (kept.failure) {
    write_file_atomic(dir / "trace.txt", trace_text(*kept.failure));
  } else if (kept.last) {
    write_file_atomic(dir / "trace.txt", trace_text(*kept.last));
  }
  if (kept.failure && (kept.failure->hung || kept.failure->stacks) && info.on_hang) {
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
  write_file_atomic(dir / "report.json", document_text(report));
  return written;
}

std::vector<std::pair<std::string, std::string>> write_uncontrolled_report(
    const std::filesystem::path& out, const UncontrolledRun& run) {
  std::vector<std::pair<std::string, std::string>> findings = run.failures;
  if (!run.finished)
    findings.emplace_back(
        live::kinds::kHang,
        fmt::format("the script was still running after --time-limit {} s (every thread's Python "
                    "stack: {}/stacks.txt)",
                    run.time_limit, out.string()));
  nlohmann::ordered_json report;
  report["format"] = kLiveReportFormat;
  report["version"] = kLiveReportVersion;
  report["racelab_version"] = kVersion;
  report["subject"] = run.subject;
  report["uncontrolled"] = true;
  report["parameters"] = subject_config_json(run.parameters);
  report["seconds"] = run.seconds;
  report["finished"] = run.finished;
  report["findings"] = nlohmann::ordered_json::array();
  for (const auto& [kind, message] : findings)
    report["findings"].push_back({{"kind", kind}, {"message", message}});
  if (!run.alloc.empty()) report["alloc"] = run.alloc;
  ensure_directory(out.string());
  write_file_atomic(out / "report.json", document_text(report));
  return findings;
}

}  // namespace racelab::report

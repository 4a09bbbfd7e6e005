#pragma once
// racelab alloc report and alloc diff's use cases (harness/alloc_report.cc and alloc_diff.cc parse
// their options and print): the options checked, the traces analysed (alloc/runs.h), each trace
// judged by the one rule (results::judge) or the two sides diffed (alloc/diff.h), and the files
// written. The terminal sees what it prints before a file is written through the callbacks, so
// that a file that cannot be written ends the command after the same lines as before.
// docs/allocator.md.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "alloc/diff.h"
#include "alloc/inputs.h"
#include "alloc/runs.h"
#include "sched/expectations.h"

namespace racelab::run {

struct AllocReportOptions {
  std::vector<std::string> traces;      // one or more snapshots
  std::vector<std::string> iterations;  // one stats JSON per trace, or none (stats_for)
  int device = -1;                      // -1: every device with a trace
  alloc::ReportSettings settings;
  std::string out;                              // "": no alloc-report.json, report.html, CSV
  std::optional<results::MemoryExpect> expect;  // none: no check
  std::string junit;                            // "": none (needs expect)
  alloc::ProgressFor progress;                  // the replays' progress bars
};

struct AllocReportPrinter {
  std::function<void(const alloc::TraceReports&)> on_reports;  // after the analysis
  // The files just written: --out's (write_report_outputs), then the JUnit file.
  std::function<void(const std::vector<std::string>&)> on_written;
};

struct AllocReportResult {
  alloc::TraceReports got;
  std::optional<results::MemoryExpect> expect;  // as asked
  std::vector<std::string> off;                 // traces not as expected (Why::kNotAsExpected)
  std::vector<std::string> unmeasured;          // too few iterations after the warm phase to tell
  // 0 without an expectation or where every trace is as expected; 1 otherwise (inconclusive
  // included: a CI job must not pass on a run that measured nothing).
  int exit_code() const;
};

// alloc report TRACE...: InputError for --junit without --expect, a count of stats JSON that is not
// one per trace, or a trace or stats file of another kind (report::expect_file).
AllocReportResult alloc_report(const AllocReportOptions& o, const AllocReportPrinter& print);

struct AllocDiffOptions {
  std::vector<std::string> traces;      // A B, or one with from and to
  std::vector<std::string> iterations;  // stats JSON of each trace, in order (at most one each)
  std::string from, to;                 // two iterations (or windows) of one trace
  int device = -1;                      // which device, where a trace has several
  alloc::ReportSettings settings;       // settle and dev (segments_at: from, then to)
  std::string out;                      // "": no alloc-diff.json
  alloc::ProgressFor progress;
};

struct AllocDiffPrinter {
  // Each side's warnings (check_stats_agreement), as its analysis ends.
  std::function<void(const std::vector<std::string>&)> on_warnings;
  std::function<void(const alloc::MemoryDiff&)> on_diff;  // before alloc-diff.json is written
};

struct AllocDiffResult {
  alloc::MemoryDiff diff;
  std::string written;  // OUT/alloc-diff.json, or "" without out
};

// alloc diff A B | TRACE --from I --to J: InputError for a wrong count of traces, --from without
// --to (or the other way), more stats JSON than traces, a file of another kind, or a trace with
// several devices and no device picked.
AllocDiffResult alloc_diff(const AllocDiffOptions& o, const AllocDiffPrinter& print);

}  // namespace racelab::run

// racelab alloc report and alloc diff's use cases (run/alloc.h): the options refused before any
// file is read, the terminal's callbacks before each file is written, and the files themselves.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "alloc/diff.h"
#include "catch.h"
#include "run/alloc.h"
#include "util/errors.h"

using namespace racelab;
namespace fs = std::filesystem;

namespace {

fs::path fixture(const std::string& name) {
  const char* data = std::getenv("RACELAB_ALLOC_DATA");
  REQUIRE(data != nullptr);
  return fs::path(data) / "fixtures-h200" / name;
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST_CASE("alloc report refuses its options before reading a trace", "[alloc_run]") {
  const run::AllocReportPrinter none;  // calling either would throw std::bad_function_call
  run::AllocReportOptions o;
  o.traces = {"/nonexistent/a.pickle"};
  o.junit = "/nonexistent/j.xml";
  CHECK(input_error_of([&] { run::alloc_report(o, none); }) ==
        "alloc report --junit: say what the job checks with --expect stable (or unstable)");
  o.junit.clear();
  o.traces = {"/nonexistent/a.pickle", "/nonexistent/b.pickle"};
  o.iterations = {"/nonexistent/a.json"};
  CHECK(input_error_of([&] { run::alloc_report(o, none); }) ==
        "--iterations: give one stats JSON per trace (2 traces, 1 files)");
}

TEST_CASE("alloc report prints the reports before writing, then judges each trace", "[alloc_run]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-alloc-run-report";
  fs::remove_all(dir);
  run::AllocReportOptions o;
  o.traces = {fixture("snap_sdpa_fused_1.pickle").string()};
  o.out = (dir / "out").string();
  o.junit = (dir / "memory.xml").string();
  o.expect = results::MemoryExpect::kStable;
  std::vector<std::string> events;
  std::vector<std::vector<std::string>> written;
  const run::AllocReportResult got =
      run::alloc_report(o, {.on_reports =
                                [&](const alloc::TraceReports& r) {
                                  events.push_back("reports");
                                  CHECK(r.reports.size() == 1);
                                  CHECK_FALSE(fs::exists(dir / "out" / "alloc-report.json"));
                                },
                            .on_written =
                                [&](const std::vector<std::string>& files) {
                                  events.push_back("written");
                                  written.push_back(files);
                                  for (const std::string& f : files) CHECK(fs::exists(f));
                                }});
  CHECK(events == std::vector<std::string>{"reports", "written", "written"});
  REQUIRE(written.size() == 2);
  CHECK(written[0].front() == (dir / "out" / "alloc-report.json").string());
  CHECK(written[1] == std::vector<std::string>{o.junit});
  REQUIRE(got.got.reports.size() == 1);
  const alloc::StabilityReport& r = got.got.reports.front();
  // One trace, one of three outcomes against "stable": as expected, not, or not measured.
  CHECK(got.off.size() == (r.measured && !r.stable ? 1u : 0u));
  CHECK(got.unmeasured.size() == (r.measured ? 0u : 1u));
  CHECK(got.exit_code() == (r.measured && r.stable ? 0 : 1));
  fs::remove_all(dir);
}

TEST_CASE("alloc diff refuses its options before reading a trace", "[alloc_run]") {
  const run::AllocDiffPrinter none;
  run::AllocDiffOptions o;
  o.traces = {"/nonexistent/a.pickle"};
  o.from = "3";
  CHECK(input_error_of([&] { run::alloc_diff(o, none); }) ==
        "alloc diff: --from and --to go together (two iterations of one trace)");
  o.from.clear();
  CHECK(input_error_of([&] { run::alloc_diff(o, none); }) ==
        "alloc diff: give two traces (A B), or one with --from I --to J (two of its iterations)");
  o.traces.push_back("/nonexistent/b.pickle");
  o.iterations = {"x.json", "y.json", "z.json"};
  CHECK(input_error_of([&] { run::alloc_diff(o, none); }) ==
        "--iterations: at most one stats JSON per trace");
}

TEST_CASE("alloc diff prints each side's warnings and the diff before writing alloc-diff.json",
          "[alloc_run]") {
  const fs::path dir = fs::temp_directory_path() / "racelab-test-alloc-run-diff";
  fs::remove_all(dir);
  run::AllocDiffOptions o;
  o.traces = {fixture("snap_sdpa_fused_1.pickle").string(),
              fixture("snap_sdpa_chunked_1.pickle").string()};
  o.out = dir.string();
  const fs::path file = dir / "alloc-diff.json";
  std::vector<std::string> events;
  const run::AllocDiffResult got = run::alloc_diff(
      o, {.on_warnings = [&](const std::vector<std::string>&) { events.push_back("warnings"); },
          .on_diff =
              [&](const alloc::MemoryDiff&) {
                events.push_back("diff");
                CHECK_FALSE(fs::exists(file));
              }});
  CHECK(events == std::vector<std::string>{"warnings", "warnings", "diff"});
  CHECK(got.written == file.string());
  CHECK(text_of(file) == alloc::diff_json(got.diff).dump(1) + "\n");
  fs::remove_all(dir);
}

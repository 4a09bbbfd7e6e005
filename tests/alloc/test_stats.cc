// Whether a stats JSON belongs to the trace it is given with (racelab alloc report --iterations).
#include "alloc/report.h"
#include "catch.h"
#include "util/errors.h"

using namespace racelab::alloc;

namespace {

StabilityReport device_report(const std::string& name, std::size_t rows, std::size_t matching) {
  StabilityReport r;
  r.name = name;
  for (std::size_t k = 0; k < rows; ++k) {
    Row row;
    row.label = std::to_string(k);
    row.recorded = Window::Recorded{};
    row.recorded->reserved = 2 << 20;
    row.matches_recorded = k < matching;
    r.rows.push_back(row);
  }
  r.recorded_rows = rows;
  r.recorded_matches = matching;
  return r;
}

}  // namespace

TEST_CASE("stats that agree nowhere are refused; partial agreement warns per device", "[stats]") {
  const auto full = device_report("a", 150, 150);
  const auto part = device_report("a", 150, 13);
  const auto none = device_report("a.device1", 150, 0);
  CHECK(check_stats_agreement({&full}, "s.json", "t.pickle").empty());
  const auto w = check_stats_agreement({&part}, "s.json", "t.pickle");
  REQUIRE(w.size() == 1);
  CHECK(w[0].rfind("warning: s.json agrees with a at only 13/150 iterations (first difference at "
                   "iteration 13: stats reserved 2 MiB",
                   0) == 0);
  try {
    check_stats_agreement({&none}, "s.json", "t.pickle");
    FAIL("stats that agree nowhere were accepted");
  } catch (const racelab::InputError& e) {
    CHECK(std::string(e.what()).rfind("s.json: does not belong to t.pickle: none of its 150 "
                                      "iterations agrees with the replayed trace (iteration 0:",
                                      0) == 0);
  }
  // A stats JSON records one device: the trace's other devices only warn.
  const auto two = check_stats_agreement({&full, &none}, "s.json", "t.pickle");
  REQUIRE(two.size() == 1);
  CHECK(two[0].find("agrees with a.device1 at only 0/150") != std::string::npos);
}

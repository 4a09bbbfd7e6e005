#pragma once
// racelab check's check.json (docs/reports.md): every variant's races, native runs and memory,
// and their verdicts, as check_html.cc writes it.
#include <nlohmann/json.hpp>

#include "results/check_result.h"

namespace racelab::report {

nlohmann::ordered_json check_json(const results::CheckResult& r, const results::CheckOptions& o);

}  // namespace racelab::report

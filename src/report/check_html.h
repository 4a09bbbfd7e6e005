#pragma once
// check.html: racelab check's page, self-contained (util/html.h): the variants side by side (the
// table a user shows their team), then per variant the race found (with its replay command) and
// each device's memory per iteration.
#include <string>

#include "results/check_result.h"

namespace racelab::report {

std::string check_html(const results::CheckResult& r, const results::CheckOptions& o);

// racelab check's files: o.out/check.json (report::check_json, check_json.h) and o.out/check.html,
// atomically.
void write_check_outputs(const results::CheckResult& r, const results::CheckOptions& o);

}  // namespace racelab::report

#pragma once
// The one line parse_scenario refuses a scenario text with, or "(no error)" (tests of the parser).
#include <string>

#include "model/scenario.h"
#include "util/errors.h"

namespace racelab::model::test {

inline std::string error_of(const std::string& text) {
  try {
    (void)parse_scenario(text, "s.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace racelab::model::test

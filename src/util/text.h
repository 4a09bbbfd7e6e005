#pragma once
// Small text helpers shared by reports and error messages.
#include <string>
#include <string_view>

namespace racelab {

// The text up to its first newline (exception messages carry backtraces after it).
inline std::string first_line(std::string_view text) {
  return std::string(text.substr(0, text.find('\n')));
}

}  // namespace racelab

#pragma once
// Error types that map onto racelab's exit codes (docs/cli.md):
//   InputError     -> exit 2: bad input or usage; what() is the one line the user sees.
//   InvariantError -> exit 3: a broken invariant, a bug in racelab (util/check.h raises it).
//   anything else  -> exit 3: internal error.
#include <stdexcept>
#include <string>

namespace racelab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFound = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Never bad input: the command line reports it as an internal error, whatever the subcommand.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace racelab

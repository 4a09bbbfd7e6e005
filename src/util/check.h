#pragma once
// Invariant checks that stay on in every build type.
//
// `assert` vanishes under NDEBUG, and Release and RelWithDebInfo define it: a broken invariant in
// the core (a strategy that picks a thread that cannot run) would then corrupt an execution
// silently and surface, if at all, as a wrong trace far from its cause. As in rr, the checks stay
// on and carry context:
//
//   RACELAB_CHECK(cond, "strategy {} picked thread {} at step {}", name, t, step);
//
// evaluates `cond` in every build; when it is false it throws InvariantError whose message names
// the file, line and condition, then the formatted context. The message is formatted only on
// failure, so a check that holds costs a branch.
//
// It throws rather than aborts so that the engines unwind their threads on the way out (the live
// runtime's threads are real) and tests can provoke it. Nothing catches it on purpose: the command
// line reports it as an internal error, exit code 3 (util/errors.h, docs/cli.md).
#include <fmt/format.h>

#include <string>
#include <string_view>

#include "util/errors.h"

namespace racelab::internal {

[[noreturn]] inline void invariant_failed(std::string_view file, int line,
                                          std::string_view condition, const std::string& context) {
  // The path from the source tree's top, not the build machine's checkout.
  for (std::string_view top : {"/src/", "/harness/", "/tests/"}) {
    if (const auto at = file.rfind(top); at != std::string_view::npos) {
      file.remove_prefix(at + 1);
      break;
    }
  }
  throw InvariantError(
      fmt::format("invariant violated at {}:{} ({}): {}", file, line, condition, context));
}

}  // namespace racelab::internal

#define RACELAB_CHECK(cond, ...)                                         \
  do {                                                                   \
    if (!(cond)) [[unlikely]]                                            \
      ::racelab::internal::invariant_failed(__FILE__, __LINE__, #cond,   \
                                            ::fmt::format(__VA_ARGS__)); \
  } while (false)

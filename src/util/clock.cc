#include "util/clock.h"

#include <chrono>

namespace racelab::util {
namespace {

const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

}  // namespace

double process_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

}  // namespace racelab::util

#pragma once

// How long this process has run: a search that goes on in fresh processes (live --all-findings)
// counts each process's start (an interpreter's import of torch, CUDA's start) against its
// --time-limit, not only the executions.

namespace racelab::util {

// Seconds since this process's static initialisation (before any interpreter starts).
double process_seconds();

}  // namespace racelab::util

#include "sched/kinds.h"

#include <algorithm>
#include <array>
#include <climits>

namespace racelab::sched::kinds {

namespace {

constexpr unsigned kAnySubject = kByScheduler;

// Failures first, the ones that stop a program before the ones that corrupt it; evidence last.
constexpr std::array<KindInfo, 14> kRegistry{{
    {kDeadlock, Severity::kFailure, kAnySubject | kByModel | kByLive, 0,
     "some blocked thread can never run again: a cycle of threads waiting on locks held and on "
     "jobs not yet served",
     "the wait-for cycle in words: `A holds L and waits for job J on W; W waits for L held by A`"},
    {kHang, Severity::kFailure, kByLive, 1,
     "a live run made no progress for the hang timeout and racelab can name no wait-for cycle",
     "the stuck threads, what each holds and waits for, and for how long"},
    {kFxTraceError, Severity::kFailure, kByModel | kByLivePython, 2,
     "a compiled wrapper was called while another thread was inside an FX trace (F10); the "
     "caller raises and its thread ends",
     "`RuntimeError: Detected that you are using FX to symbolically trace a dynamo-optimized "
     "function. ...` naming the caller and the thread that was tracing"},
    {kCrash, Severity::kFailure, kByLive, 3,
     "the process received a fatal signal (SIGSEGV, SIGABRT, ...) during an execution",
     "`the process received SIGSEGV in execution N ...`, every thread's Python stack in "
     "stacks.txt"},
    {kOom, Severity::kFailure, kByModel, 3,
     "an allocation exceeds what the device has left; the thread dies",
     "`CUDA out of memory. Tried to allocate 256.00 GiB. GPU 0 has a total capacity of ...`"},
    {kException, Severity::kFailure, kAnySubject | kByLive, 4,
     "an exception ended a controlled thread",
     "`<thread> threw: <what>`; a Python thread's: `<Type> in thread <thread> at <file>:<line> (in "
     "<function>): <what>`"},
    {kAssertion, Severity::kFailure, kAnySubject | kByLive, 5,
     "an assertion of the subject or a step check failed", "`assertion failed: <what>`"},
    {kLivelock, Severity::kFailure, kAnySubject | kByLive, 6,
     "an execution ran past its step limit without finishing", "`no progress after N steps`"},
    {kDataRace, Severity::kFailure, kAnySubject | kByLive, 7,
     "two unordered accesses to a plain shared variable, at least one a write",
     "`data race on <var>: <thread> <op> at step i and <thread> <op> at step j`"},
    {kLostControl, Severity::kInconclusive, kByLive, 8,
     "a controlled thread ran past the hang timeout without reaching a scheduling point: it waits "
     "in a call racelab does not control (racelab's blind spot, not the program's bug)",
     "`racelab lost control of <thread>: it has run N s without reaching a scheduling point ...`"},
    {kNondeterministic, Severity::kInconclusive, kByLive, 8,
     "a decision met other enabled threads than the same schedule prefix met before: something "
     "racelab does not see acted at another moment (racelab's blind spot, not the program's bug)",
     "`step N had <threads> enabled when first explored and <threads> now: <likely cause>`"},
    {kRecompileLimit, Severity::kEvidence, kByModel, 9,
     "a compile was refused because the shared cache held recompile_limit entries; the call runs "
     "eagerly (F6, F7)",
     "`<thread>: recompile_limit (N) reached on cuda:D at L=...; flex_attention falls back ...`"},
    {kDuplicateCompile, Severity::kEvidence, kByModel | kByLiveTorch, 10,
     "one (device, requires_grad, shape) forward, or one entry's backward, compiled twice (F5)",
     "`forward for (cuda:D, requires_grad, L=...) compiled twice; the second by <thread> ...`"},
    {kCompileAfterWarmup, Severity::kEvidence, kByModel | kByLiveTorch, 11,
     "a compile (forward, backward or recompile) started after main started the drafters",
     "`<thread> compiles <what> after main started the drafters`"},
}};

}  // namespace

std::span<const KindInfo> all() { return kRegistry; }

const KindInfo* find(std::string_view name) {
  for (const KindInfo& k : kRegistry) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

bool is_failure(std::string_view name) {
  const KindInfo* k = find(name);
  return k == nullptr || k->severity == Severity::kFailure;
}

bool is_inconclusive(std::string_view name) {
  const KindInfo* k = find(name);
  return k != nullptr && k->severity == Severity::kInconclusive;
}

int rank(std::string_view name) {
  const KindInfo* k = find(name);
  return k == nullptr ? INT_MAX : k->rank;
}

bool before(std::string_view a, std::string_view b) {
  const int ra = rank(a), rb = rank(b);
  return ra != rb ? ra < rb : a < b;
}

std::vector<std::string> names_found_by(unsigned finders) {
  std::vector<std::string> out;
  for (const KindInfo& k : kRegistry) {
    if ((k.found_by & finders) != 0) out.emplace_back(k.name);
  }
  return out;
}

}  // namespace racelab::sched::kinds

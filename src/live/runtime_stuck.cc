// Why an execution cannot go on, in words: the wait-for graph of the live runtime (lock owners,
// joined threads, blocking calls to the threads that serve them), its cycles, and the deadlock,
// hang and lost_control findings that name them. The engine (runtime.cc) calls report_stuck when
// no thread can make progress.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "live/runtime_impl.h"
#include "sched/decide.h"
#include "sched/kinds.h"

namespace racelab::live {

using internal::State;
using sched::OpKind;

std::string Runtime::Impl::holds_text(int agent) const {
  std::vector<std::string> held;
  for (const MutexState& mx : mutexes)
    if (mx.owner == agent && !mx.obj->waiter()) held.push_back(mx.obj->name());
  return held.empty() ? std::string() : sched::holds_text(held) + " ";
}

int Runtime::Impl::agent_named(const std::string& name) const {
  for (std::size_t i = 0; i < agents.size(); ++i)
    if (agents[i].name == name) return static_cast<int>(i);
  return -1;
}

std::pair<std::string, int> Runtime::Impl::wait_of(int agent, bool timed) const {
  const Agent& a = agents[agent];
  auto lock_wait = [&](int m, const std::string& waits_for) -> std::pair<std::string, int> {
    const MutexState& mx = mutexes[m];
    // A Python lock its waiter holds itself is how Condition.wait parks: some other thread must
    // release it, and which one is the program's business (the bridge says what for).
    if (mx.obj->python_lock() && mx.owner == agent) {
      return {fmt::format("waits for {}",
                          waits_for.empty() ? "a wake-up on " + mx.obj->name() : waits_for),
              -1};
    }
    return {sched::held_wait_text(waits_for.empty() ? mx.obj->name() : waits_for,
                                  mx.owner >= 0 ? agents[mx.owner].name : "nobody"),
            mx.owner};
  };
  switch (a.state) {
    case State::kAtPoint:
      if (a.pending.kind == OpKind::kLock && !enabled(agent))
        return lock_wait(a.pending.object, a.pending.label);
      if (a.pending.kind == OpKind::kPoint && !enabled(agent)) {  // a guarded point
        return {fmt::format("waits for {}",
                            a.pending.waits_for.empty() ? a.pending.label : a.pending.waits_for),
                -1};
      }
      if (a.pending.kind == OpKind::kJoin && !enabled(agent)) {
        const int t = controlled[a.pending.object];
        return {fmt::format("waits for {} to finish", agents[t].name), t};
      }
      return {fmt::format("is ready to {}", op_text(a.pending)), -1};
    case State::kRunning:
      return {fmt::format("has run{} without reaching a scheduling point{} (last: {})",
                          timed ? fmt::format(" {:.1f} s", age(a)) : "",
                          a.away.empty() ? "" : " inside " + a.away.back().first, a.last),
              -1};
    case State::kAway: {
      // Once the execution is over a thread leaving its call pops it (Blocking's destructor) and
      // runs on, unwinding, still kAway until it finishes (wind_down asks meanwhile).
      if (a.away.empty()) return {"is on its way back from a blocking call", -1};
      const auto& [what, server] = a.away.back();
      const int s = server.empty() ? -1 : agent_named(server);
      return {
          fmt::format("is inside {}{}{}", what, timed ? fmt::format(" for {:.1f} s", age(a)) : "",
                      server.empty() ? "" : ", served by " + server),
          s};
    }
    case State::kWaiting:
      return lock_wait(a.waiting_mutex, {});
    case State::kFree:
      return {fmt::format("runs freely (last: {})", a.last.empty() ? "nothing" : a.last), -1};
    case State::kFinished:
      return {"has finished", -1};
  }
  return {"?", -1};
}

std::vector<int> Runtime::Impl::find_cycle() const {
  std::vector<int> cycle = sched::find_wait_cycle(
      static_cast<int>(agents.size()), [&](int t) { return wait_of(t).second; },
      [&](int t) { return agents[t].state == State::kFinished; },
      [&](int t) { return !agents[t].daemon; });
  if (cycle.empty()) return cycle;
  // (Only a cycle that a non-daemon thread waits in: daemon threads alone cannot hang a program.)
  // Controlled threads first, by id: the same cycle reads the same whichever thread closed it.
  auto first = std::min_element(cycle.begin(), cycle.end(), [&](int x, int y) {
    const auto key = [&](int v) { return std::pair(agents[v].foreign, agents[v].id); };
    return key(x) < key(y);
  });
  std::rotate(cycle.begin(), first, cycle.end());
  return cycle;
}

bool Runtime::Impl::certain_cycle(const std::vector<int>& cycle, bool unwinding) const {
  if (cycle.empty()) return false;
  for (int c : cycle) {
    const State s = agents[c].state;
    const bool certain = s == State::kAway      ? away_certain(c)
                         : s == State::kAtPoint ? !unwinding
                                                : s == State::kWaiting;
    if (!certain) return false;
  }
  return true;
}

void Runtime::Impl::report_stuck(std::string_view hang_reason, bool settled) {
  sched::Finding f;
  f.step = static_cast<std::int64_t>(decisions);
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const Agent& a = agents[i];
    if (a.state == State::kFinished) continue;
    if (a.foreign && a.state == State::kFree && a.last.empty()) continue;
    f.details.push_back(a.name + " " + holds_text(static_cast<int>(i)) +
                        wait_of(static_cast<int>(i), true).first);
  }
  const std::vector<int> cycle = find_cycle();
  sched::describe_cycle(
      f, cycle, [&](int c) { return agents[c].name; },
      [&](int c) {
        return fmt::format("{} {}{}", agents[c].name, holds_text(c), wait_of(c).first);
      });
  const int lost = running();
  if (!f.cycle.empty()) {
    f.kind = sched::kinds::kDeadlock;
  } else if (settled && !foreign_released_python_lock) {
    std::vector<std::string> waits;
    for (int c : controlled) {
      if (agents[c].state == State::kFinished) continue;
      f.cycle.push_back(agents[c].name);
      waits.push_back(fmt::format("{} {}{}", agents[c].name, holds_text(c), wait_of(c).first));
    }
    f.kind = sched::kinds::kDeadlock;
    f.message = sched::stuck_deadlock_message(waits);
  } else if (lost >= 0) {
    // The thread holding the turn never came back: it waits in a call racelab does not see
    // (a lock or queue a library made, real I/O). That is racelab's blind spot, not a verdict.
    f.kind = sched::kinds::kLostControl;
    f.message = fmt::format(
        "racelab lost control of {}: it {}; it is blocked or busy in a call racelab does not "
        "control. This is not a verdict on the program: interpose the call it waits in (a "
        "table's \"blocking\" entry, or --blocking MODULE.FUNC), or raise --hang-timeout if "
        "the call is only slow",
        agents[lost].name, holds_text(lost) + wait_of(lost, true).first);
  } else {
    f.kind = kinds::kHang;
    f.message = fmt::format("hang: {}: {}", hang_reason,
                            f.details.empty() ? "no thread left" : f.details.front());
  }
  result.findings.push_back(std::move(f));
}

void Runtime::Impl::report_nondeterminism(const sched::Nondeterminism& e) {
  sched::Finding f;
  f.kind = sched::kinds::kNondeterministic;
  f.step = static_cast<std::int64_t>(e.step());
  for (std::size_t i = 0; i < agents.size(); ++i) {
    const Agent& a = agents[i];
    if (a.foreign && a.state == State::kFree && a.last.empty()) continue;
    f.details.push_back(a.name + " " + holds_text(static_cast<int>(i)) +
                        wait_of(static_cast<int>(i), true).first);
  }
  std::vector<std::string> foreign;
  for (const Agent& a : agents)
    if (a.foreign) foreign.push_back(a.name);
  std::string cause;
  if (result.settled > 0) {
    cause = fmt::format(
        "a thread inside a blocking call whose server waited came back after the quiet period of "
        "{} ms (--settle-ms) at one of the {} decisions that waited for one; a larger --settle-ms "
        "may hold, or interpose what the call waits for",
        options.settle.count(), result.settled);
  } else if (!foreign.empty()) {
    cause = fmt::format(
        "a thread racelab does not control ({}) acted at another moment than before relative to "
        "the controlled threads, outside the instrumented objects racelab orders",
        fmt::join(foreign, ", "));
  } else {
    cause =
        "a thread read something racelab does not order between two scheduling points (a Python "
        "variable written without a lock, the clock, a real lock, queue or file racelab does not "
        "interpose) and took another path";
  }
  f.message = fmt::format("step {} had {} enabled when first explored and {} now: likely cause: {}",
                          e.step(), e.first(), e.now(), cause);
  result.findings.push_back(std::move(f));
  fatal = true;
}

}  // namespace racelab::live

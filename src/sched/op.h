#pragma once
// Operations at scheduling points.
//
// A controlled thread announces the operation it is about to perform (its *pending* operation) and
// waits. The scheduler only chooses among threads whose pending operation is *enabled* (a lock that
// is free, a job that is done, ...); choosing a thread performs that operation atomically and lets
// the thread run its local code up to its next scheduling point. An execution is therefore the
// sequence of (thread, operation) steps, which is what schedule files record. One vocabulary for
// model and live subjects: the live runtime's pending operations are OpKinds too
// (docs/schedules.md lists their texts).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace racelab::sched {

using ThreadId = std::int32_t;
inline constexpr ThreadId kNoThread = -1;

enum class OpKind : std::uint8_t {
  kStart,      // the thread's first step
  kLock,       // object: mutex
  kUnlock,     // object: mutex
  kEventSet,   // object: event
  kEventWait,  // object: event
  kSubmit,     // object: queue; arg: label; returns the job id
  kTake,       // object: queue; returns the next job id, or -1 once the queue is closed and empty
  kComplete,   // object: job
  kWaitJob,    // object: job
  kClose,      // object: queue; the worker's take returns -1 when nothing is left
  kRead,       // object: shared variable
  kWrite,      // object: shared variable
  kPoint,      // arg: label; a user-defined scheduling point
  // Live subjects only (src/live): the model has no such operations.
  kTryLock,  // object: mutex; succeeds or fails at the moment it runs
  kJoin,     // object: thread; waits for it to finish
  kReturn,   // arg: label; comes back from a blocking call racelab let run for real
};

struct Op {
  OpKind kind = OpKind::kStart;
  std::int32_t object = -1;
  std::int32_t arg = -1;
};

const char* op_kind_name(OpKind kind);
// An operation's text in schedule files, for the kinds that name one object (`name`: the mutex,
// event, queue, variable or thread; the label of a point or of a blocking call): "lock M",
// "try lock M", "take from Q", "join T", "return from F", a point's label, "start". Submit,
// complete and wait-for-job name several objects: Execution::describe writes them.
std::string op_text(OpKind kind, std::string_view name);

// An access to a shared variable made by the local code that runs after a scheduling point, not
// through an operation (Context::touch). Partial-order reduction (dpor) counts it as part of the
// step that ran that code; nothing else sees it.
//
// `awaited` (live subjects only): a read the step waited for, a guarded point's (live.h): the
// write it reads enabled the step, which could not have run before it; dpor orders the two and
// never tries the other order (as a take and the submit of its job).
//
// `mutex` (live subjects only): not a variable but the mutex numbered `var`, locked, released or
// tried in vain by a foreign thread (one racelab does not schedule) while the step ran. dpor
// orders it as it orders the controlled threads' lock operations (dpor_events.h): the acquire
// races with the mutex's previous acquire, never with the unlock that let it through. The other
// readers of touches see it as a write of `var`.
enum class TouchMutex : std::uint8_t { kNone, kAcquire, kRelease, kBusy };

struct Touch {
  std::int32_t var = -1;
  bool write = false;
  bool awaited = false;
  TouchMutex mutex = TouchMutex::kNone;
};

// What a step declared it may do where it sees other values than it saw (Context::may_touch,
// Context::may_fail): beyond its own touches, the ones its other branches make, and whether one of
// them ends the run with a fatal finding. dpor predicts a reversed step's footprint from it.
struct StepOutlook {
  std::span<const Touch> may_touch;
  bool may_fail = false;
};

}  // namespace racelab::sched

#pragma once
// The events of one execution as partial-order reduction sees them: what each step accessed, the
// happens-before order between steps, and the races that dpor reverses (dpor.cc).
//
// An *event* is one step: its operation plus the local code its thread runs up to its next
// scheduling point, so its *footprint* is the operation's own object plus the shared state that
// code declared with Context::touch. Two events are *dependent* when their footprints conflict:
//
//   mutex  every pair of accesses (lock, unlock) to one mutex
//   queue  submit, close and a take that found the queue closed, pairwise; a take of a job
//          depends only on that job's submit (FIFO: the job at the front is taken whatever is
//          submitted behind it)
//   job    complete and wait of one job (a job is named by its queue and its place among that
//          queue's submits, not by the execution's id, which counts submits to every queue)
//   event  set/set and set/wait (wait/wait commute)
//   var    read/write and write/write, atomic and plain alike (reads commute); a read the step
//          awaited (Touch::awaited: a live guarded point, e.g. a queue get of item k) is ordered
//          after the write it reads, which enabled it, and never reversed with it
//   start, point: nothing but program order
//
// Happens-before is program order plus the order of dependent events in the execution. A *race*
// is a pair of dependent events of two threads, e before e', that the execution could have run
// the other way round and with nothing between them in happens-before. Pairs whose first event
// enables the second (unlock -> lock, set -> the wait it released, submit -> take of that job,
// complete -> wait) are ordered but never reversible. A lock races with the previous acquire of
// its mutex by another thread, the unlock between the two notwithstanding (as in Nidhugg: the
// later thread could have taken the mutex first); a foreign thread's lock operation recorded in a
// step (Touch::mutex) is one of these accesses too. A fatal finding ends the execution: its event
// conflicts with every other thread's (it disables them all).
//
// Everything here is recomputed from the first step of each execution, in one pass; races are
// reported only for events from `first_new` on (source sets: those of the replayed prefix were
// handled when that prefix first ran; optimal dpor passes 0 and reverses them all again, dpor.cc).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sched/op.h"

namespace racelab::sched::dpor {

enum class AccessKind : std::uint8_t {
  kAcquire,     // mutex: the outermost lock
  kMutexOther,  // mutex: an unlock or a re-entrant lock
  kSubmit,      // queue
  kClose,       // queue
  kTakeClosed,  // queue: a take that returned -1
  kJobCreate,   // job: its submit
  kTakeJob,     // job: its take
  kComplete,    // job
  kWaitJob,     // job
  kSet,         // event
  kWait,        // event
  kRead,        // var: a read operation or a read touch
  kWrite,       // var
  kFatal,       // the event ended the execution with a fatal finding: it conflicts with all
  // A thread's symmetry status (object: the thread), as a variable: whether it is gated by an
  // alike thread (dpor.cc, symmetry). Written by a step that makes its thread alike to the object
  // thread or no longer alike; read by the object thread's next step after it was alike to one.
  kStatusRead,
  kStatusWrite,
};

struct Access {
  AccessKind kind;
  std::int32_t object;
};

// What kind of object an access is to: conflicts need the same object of the same class. A fatal
// access counts as a variable's (it conflicts with everything anyway, dependent()).
enum class ObjectClass { kMutex, kQueue, kJob, kEvent, kVar, kStatus };
ObjectClass object_class(AccessKind k);

// A job's name in footprints: its queue and its place among that queue's submits.
inline constexpr int kJobPlaceBits = 20;
inline std::int32_t job_name_of(std::int32_t queue, std::int32_t place) {
  return queue << kJobPlaceBits | place;
}
inline std::int32_t job_queue(std::int32_t job_name) { return job_name >> kJobPlaceBits; }

// True when two accesses of different threads' events conflict (the table above; kFatal aside).
bool conflict(const Access& a, const Access& b);
// True when two footprints (of two threads' events) conflict anywhere, or one of them is fatal.
bool dependent(std::span<const Access> a, std::span<const Access> b);
// True when two footprints conflict on something other than a symmetry status (or one is fatal).
bool dependent_beyond_status(std::span<const Access> a, std::span<const Access> b);

using Clock = std::vector<std::uint32_t>;  // per thread: how many of its events happen before

// A race found in the execution: `earlier` (an event index) could have run after `later` (an
// event index, or the pending operation of a thread blocked at the end: later == kPending).
struct Race {
  static constexpr std::size_t kPending = SIZE_MAX;
  std::size_t earlier = 0;
  std::size_t later = kPending;
  ThreadId later_thread = kNoThread;
  // later's happens-before predecessors once the race is reversed: what it waits for when run
  // before `earlier` (its own thread's past and its dependencies other than the reversed ones).
  Clock reversed_clock;
};

class EventLog {
 public:
  // Starts a new execution of `threads` threads; races are reported from event `first_new` on.
  void reset(std::size_t threads, std::size_t first_new);
  // Appends the next executed step. `fatal`: a fatal finding ended the execution after it.
  // `status`: the threads' symmetry statuses the event reads or writes (kStatusRead/Write).
  void append(ThreadId thread, const Op& op, std::int64_t result, std::span<const Touch> touches,
              bool fatal = false, std::span<const Touch> status = {});
  // A thread blocked at the end on a lock: its pending lock races with the holder's acquire. One
  // blocked on a guarded point (live): its pending accesses (`touches`) race with the last write
  // of each variable they read or write, and with the reads since it of one they write (a get
  // left waiting could have taken the item the last get took).
  void add_blocked(ThreadId thread, const Op& pending, std::span<const Touch> touches = {});
  // A thread that could run when a fatal finding stopped the execution (the last event): its
  // pending operation races with that event, which disabled it.
  void add_stopped(ThreadId thread);

  std::size_t size() const { return events_.size(); }
  ThreadId thread(std::size_t event) const { return events_[event].thread; }
  std::span<const Access> footprint(std::size_t event) const {
    const Event& e = events_[event];
    return {accesses_.data() + e.access_begin, e.access_count};
  }
  std::span<const std::uint32_t> clock(std::size_t event) const {
    return {clocks_.data() + event * threads_, threads_};
  }
  bool happens_before(std::size_t a, std::size_t b) const {
    return clock(b)[static_cast<std::size_t>(events_[a].thread)] > events_[a].local;
  }
  // The races found since reset() (cleared by take_races()).
  std::vector<Race> take_races() { return std::exchange(races_, {}); }
  // The threads that can start notdep(earlier).later at the state before `earlier`: the first
  // events, among those after `earlier` that do not happen after it followed by `later`, that
  // nothing else in that sequence happens before (the initials of source-DPOR, Abdulla et al.,
  // POPL 2014, section 4). `later` comes after every event of the sequence that conflicts with it
  // (as in dpor::reversal), not only after its sources that stay.
  std::vector<ThreadId> initials(const Race& race) const;

 private:
  struct Event {
    ThreadId thread;
    std::uint32_t local;  // its index among its thread's events
    std::uint32_t access_begin;
    std::uint32_t access_count;
  };
  struct Source {
    std::size_t event;
    bool mutex;  // an earlier access to the mutex this event locks (skipped for a lock race)
    // The write an awaited read reads (Touch::awaited), skipped for a race with an earlier write
    // of a variable this event writes too (Candidate::skip_awaited): it enabled this event where
    // it came second (a second get awaits the put of the second item); run first, the event
    // takes what the first took, which was there when the first ran.
    bool awaited = false;
    // The last access to a mutex that a foreign thread then took, tried or released in this event
    // (Touch::mutex): it orders the foreign operation, not the event, which could have run before
    // it (the foreign thread would have waited for the mutex inside it). Part of the event's
    // clock; left out of every race's check, where it hid a race of the event's own accesses (a
    // drafter's backward call with the autograd worker's lazy compile under compile_lock, against
    // another drafter's call: the lazy-compile deadlock, reached only through a sleep-set blocked
    // execution before).
    bool foreign = false;
  };
  struct Candidate {
    std::size_t event;
    bool skip_mutex;  // a lock race: the unlock in between does not order the two acquires
    bool skip_awaited = false;  // a write after a write: see Source::awaited
  };
  // A mutex's holder when a foreign thread (TouchMutex) took it.
  static constexpr ThreadId kForeignOwner = -2;
  struct MutexState {
    ThreadId owner = kNoThread;  // or kForeignOwner
    int depth = 0;
    std::int64_t last = -1;          // the last access
    std::int64_t last_acquire = -1;  // the last outermost lock
  };
  struct QueueState {
    std::int64_t last_control = -1;  // the last submit, close or closed take
    std::vector<std::size_t> fifo;   // submits not yet taken, front at fifo_front
    std::size_t fifo_front = 0;
  };
  struct JobState {
    std::int64_t create = -1;
    std::int64_t complete = -1;
    std::int32_t name = -1;  // its name in footprints (job_name)
  };
  struct EventState {
    std::int64_t first_set = -1;
    std::int64_t last_set = -1;
    std::vector<std::size_t> waits;  // since the last set
  };
  struct VarState {
    std::int64_t last_write = -1;
    std::vector<std::size_t> reads;  // since the last write
  };
  template <class T>
  static T& grow(std::vector<T>& v, std::int32_t index) {
    if (static_cast<std::size_t>(index) >= v.size()) v.resize(static_cast<std::size_t>(index) + 1);
    return v[static_cast<std::size_t>(index)];
  }
  // A variable's access, or a symmetry status's (`status`: in statuses_, as kStatusRead/Write).
  // `awaited`: a read the step waited for (Touch::awaited), ordered after the write, not a race.
  void access_var(std::size_t self, ThreadId thread, std::int32_t var, bool write,
                  bool status = false, bool awaited = false);
  // A job's name in footprints: its queue and its place among that queue's submits. The id the
  // execution gave it counts submits to every queue, so two submits to different queues, which
  // commute, would swap their jobs' ids; a footprint with ids would then differ between two
  // equivalent executions, and a sleeping thread's footprint would be stale (woken for nothing).
  std::int32_t job_name(std::int32_t job) const;
  // A lock operation on mutex `object` in event `self` of `thread`, by `owner` (the thread, or
  // kForeignOwner for a foreign thread's, `foreign`: Source::foreign): the mutex rules above.
  void mutex_op(std::size_t self, ThreadId thread, ThreadId owner, std::int32_t object,
                TouchMutex op, bool foreign);
  void add_source(std::size_t event, std::size_t self, bool mutex = false, bool awaited = false,
                  bool foreign = false);
  void add_candidate(std::size_t event, std::size_t self, ThreadId thread, bool skip_mutex = false,
                     bool skip_awaited = false);
  // The join of `base` and the clocks of the sources, leaving out `skip` (and the mutex sources,
  // and the awaited ones).
  void join_sources(Clock& out, std::span<const std::uint32_t> base, std::size_t skip,
                    bool skip_mutex, bool skip_awaited = false) const;
  void add_pending(ThreadId thread, std::size_t earlier);
  void find_races(std::size_t self, ThreadId thread, std::uint32_t local,
                  std::span<const std::uint32_t> base);

  std::size_t threads_ = 0;
  std::size_t first_new_ = 0;
  std::vector<Event> events_;
  std::vector<Access> accesses_;
  std::vector<std::uint32_t> clocks_;     // events_.size() x threads_
  std::vector<std::int64_t> last_event_;  // per thread: its last event, or -1
  std::vector<MutexState> mutexes_;
  std::vector<QueueState> queues_;
  std::vector<JobState> jobs_;
  std::vector<EventState> event_objects_;
  std::vector<VarState> vars_;
  std::vector<VarState> statuses_;  // per thread: its symmetry status
  // Scratch for the event being appended.
  std::vector<Source> sources_;
  std::vector<Candidate> candidates_;
  // The current step's enabling sources: the events it could not run before (the complete its
  // wait-for-job waits for, the submit of the job its take took, the set that let its wait
  // through, the joined thread's end, the write an awaited touch read). A fatal step races with
  // every other thread's last event except these: it cannot come before them.
  std::vector<std::int64_t> enablers_;
  std::vector<Race> races_;
};

}  // namespace racelab::sched::dpor

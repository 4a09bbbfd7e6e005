#include "sched/strategies/dpor_events.h"

#include <algorithm>
#include <utility>

#include "util/check.h"

namespace racelab::sched::dpor {

ObjectClass object_class(AccessKind k) {
  switch (k) {
    case AccessKind::kAcquire:
    case AccessKind::kMutexOther:
      return ObjectClass::kMutex;
    case AccessKind::kSubmit:
    case AccessKind::kClose:
    case AccessKind::kTakeClosed:
      return ObjectClass::kQueue;
    case AccessKind::kJobCreate:
    case AccessKind::kTakeJob:
    case AccessKind::kComplete:
    case AccessKind::kWaitJob:
      return ObjectClass::kJob;
    case AccessKind::kSet:
    case AccessKind::kWait:
      return ObjectClass::kEvent;
    case AccessKind::kStatusRead:
    case AccessKind::kStatusWrite:
      return ObjectClass::kStatus;
    case AccessKind::kRead:
    case AccessKind::kWrite:
    case AccessKind::kFatal:
      break;
  }
  return ObjectClass::kVar;
}

bool conflict(const Access& a, const Access& b) {
  if (a.object != b.object || object_class(a.kind) != object_class(b.kind)) return false;
  switch (object_class(a.kind)) {
    case ObjectClass::kEvent:
      return a.kind == AccessKind::kSet || b.kind == AccessKind::kSet;
    case ObjectClass::kVar:
      return a.kind == AccessKind::kWrite || b.kind == AccessKind::kWrite;
    case ObjectClass::kStatus:
      return a.kind == AccessKind::kStatusWrite || b.kind == AccessKind::kStatusWrite;
    default:
      return true;
  }
}

bool dependent(std::span<const Access> a, std::span<const Access> b) {
  auto fatal = [](const Access& x) { return x.kind == AccessKind::kFatal; };
  if (std::any_of(a.begin(), a.end(), fatal) || std::any_of(b.begin(), b.end(), fatal)) return true;
  for (const Access& x : a) {
    for (const Access& y : b) {
      if (conflict(x, y)) return true;
    }
  }
  return false;
}

bool dependent_beyond_status(std::span<const Access> a, std::span<const Access> b) {
  auto fatal = [](const Access& x) { return x.kind == AccessKind::kFatal; };
  if (std::any_of(a.begin(), a.end(), fatal) || std::any_of(b.begin(), b.end(), fatal)) return true;
  for (const Access& x : a) {
    if (object_class(x.kind) == ObjectClass::kStatus) continue;
    for (const Access& y : b) {
      if (conflict(x, y)) return true;
    }
  }
  return false;
}

void EventLog::reset(std::size_t threads, std::size_t first_new) {
  threads_ = threads;
  first_new_ = first_new;
  events_.clear();
  accesses_.clear();
  clocks_.clear();
  last_event_.assign(threads, -1);
  mutexes_.clear();
  queues_.clear();
  jobs_.clear();
  event_objects_.clear();
  vars_.clear();
  statuses_.clear();
  races_.clear();
}

std::int32_t EventLog::job_name(std::int32_t job) const {
  const auto j = static_cast<std::size_t>(job);
  RACELAB_CHECK(j < jobs_.size() && jobs_[j].name >= 0, "dpor: job {} was never submitted", job);
  return jobs_[j].name;
}

void EventLog::mutex_op(std::size_t self, ThreadId thread, ThreadId owner, std::int32_t object,
                        TouchMutex op, bool foreign) {
  MutexState& m = grow(mutexes_, object);
  if (m.last >= 0) add_source(static_cast<std::size_t>(m.last), self, true, false, foreign);
  auto candidate = [&](std::int64_t e, bool skip_mutex) {
    if (e >= 0) add_candidate(static_cast<std::size_t>(e), self, thread, skip_mutex);
  };
  switch (op) {
    case TouchMutex::kBusy:
      accesses_.push_back({AccessKind::kMutexOther, object});
      candidate(m.last_acquire, false);
      break;
    case TouchMutex::kAcquire:
      if (m.owner == owner) {  // re-entrant
        accesses_.push_back({AccessKind::kMutexOther, object});
        ++m.depth;
      } else {
        accesses_.push_back({AccessKind::kAcquire, object});
        candidate(m.last_acquire, true);
        m.owner = owner;
        m.depth = 1;
        m.last_acquire = static_cast<std::int64_t>(self);
      }
      break;
    case TouchMutex::kRelease:
      accesses_.push_back({AccessKind::kMutexOther, object});
      if (m.owner == owner) {
        if (--m.depth == 0) m.owner = kNoThread;
      } else {  // a Python lock, released by another thread than its holder (live only)
        m.owner = kNoThread;
        m.depth = 0;
      }
      break;
    case TouchMutex::kNone:
      break;
  }
  m.last = static_cast<std::int64_t>(self);
}

void EventLog::add_source(std::size_t event, std::size_t self, bool mutex, bool awaited,
                          bool foreign) {
  if (event != self) sources_.push_back({event, mutex, awaited, foreign});
}

void EventLog::add_candidate(std::size_t event, std::size_t self, ThreadId thread, bool skip_mutex,
                             bool skip_awaited) {
  if (event == self || events_[event].thread == thread) return;
  for (Candidate& c : candidates_) {
    if (c.event == event) {
      c.skip_awaited = c.skip_awaited || skip_awaited;
      return;
    }
  }
  candidates_.push_back({event, skip_mutex, skip_awaited});
}

void EventLog::access_var(std::size_t self, ThreadId thread, std::int32_t var, bool write,
                          bool status, bool awaited) {
  VarState& v = grow(status ? statuses_ : vars_, var);
  if (status)
    accesses_.push_back({write ? AccessKind::kStatusWrite : AccessKind::kStatusRead, var});
  else
    accesses_.push_back({write ? AccessKind::kWrite : AccessKind::kRead, var});
  const auto last = static_cast<std::size_t>(v.last_write);
  if (v.last_write >= 0 && last != self) {
    add_source(last, self, false, awaited);
    if (!awaited) add_candidate(last, self, thread, false, write);
    if (awaited) enablers_.push_back(v.last_write);  // the write that let the step run
  }
  if (!write) {
    if (std::find(v.reads.begin(), v.reads.end(), self) == v.reads.end()) v.reads.push_back(self);
    return;
  }
  for (std::size_t r : v.reads) {
    add_source(r, self);
    add_candidate(r, self, thread);
  }
  v.reads.clear();
  v.last_write = static_cast<std::int64_t>(self);
}

void EventLog::append(ThreadId thread, const Op& op, std::int64_t result,
                      std::span<const Touch> touches, bool fatal, std::span<const Touch> status) {
  const std::size_t self = events_.size();
  const auto q = static_cast<std::size_t>(thread);
  const std::int64_t previous = last_event_[q];
  const std::uint32_t local =
      previous >= 0 ? events_[static_cast<std::size_t>(previous)].local + 1 : 0;
  sources_.clear();
  candidates_.clear();
  enablers_.clear();
  const auto begin = static_cast<std::uint32_t>(accesses_.size());
  const auto self_index = static_cast<std::int64_t>(self);
  auto source = [&](std::int64_t e, bool mutex = false) {
    if (e >= 0) add_source(static_cast<std::size_t>(e), self, mutex);
  };
  auto candidate = [&](std::int64_t e, bool skip_mutex = false) {
    if (e >= 0) add_candidate(static_cast<std::size_t>(e), self, thread, skip_mutex);
  };
  switch (op.kind) {
    case OpKind::kStart:
    case OpKind::kPoint:
    case OpKind::kReturn:  // live only: what the call did is in the step's touches
      break;
    case OpKind::kJoin: {  // live only: ordered after the joined thread's last step, its end
      const auto joined = static_cast<std::size_t>(op.object);
      if (joined < last_event_.size()) {
        source(last_event_[joined]);
        enablers_.push_back(last_event_[joined]);
      }
      break;
    }
    case OpKind::kTryLock:  // live only: one that took the mutex is a lock
      // One that found the mutex held reads the holder's acquire, and had it run before that
      // acquire it would have taken the mutex (a race, as two acquires are).
      mutex_op(self, thread, thread, op.object,
               result == 0 ? TouchMutex::kBusy : TouchMutex::kAcquire, false);
      break;
    case OpKind::kLock:
      mutex_op(self, thread, thread, op.object, TouchMutex::kAcquire, false);
      break;
    case OpKind::kUnlock:
      mutex_op(self, thread, thread, op.object, TouchMutex::kRelease, false);
      break;
    case OpKind::kEventSet: {
      EventState& ev = grow(event_objects_, op.object);
      accesses_.push_back({AccessKind::kSet, op.object});
      source(ev.last_set);
      candidate(ev.last_set);
      for (std::size_t w : ev.waits) {
        add_source(w, self);
        add_candidate(w, self, thread);
      }
      if (ev.first_set < 0) ev.first_set = self_index;
      ev.last_set = self_index;
      ev.waits.clear();
      break;
    }
    case OpKind::kEventWait: {
      EventState& ev = grow(event_objects_, op.object);
      accesses_.push_back({AccessKind::kWait, op.object});
      source(ev.last_set);
      enablers_.push_back(ev.first_set);
      // The first set is what enabled the wait; after it, a later set could have come after.
      if (ev.last_set != ev.first_set) candidate(ev.last_set);
      ev.waits.push_back(self);
      break;
    }
    case OpKind::kSubmit: {
      QueueState& qs = grow(queues_, op.object);
      JobState& job = grow(jobs_, static_cast<std::int32_t>(result));
      RACELAB_CHECK(
          op.object < (1 << (31 - kJobPlaceBits)) && qs.fifo.size() < (1u << kJobPlaceBits),
          "dpor: queue {} with {} submits is past the job names' range", op.object, qs.fifo.size());
      job.name = job_name_of(op.object, static_cast<std::int32_t>(qs.fifo.size()));
      job.create = self_index;
      accesses_.push_back({AccessKind::kSubmit, op.object});
      accesses_.push_back({AccessKind::kJobCreate, job.name});
      source(qs.last_control);
      candidate(qs.last_control);
      qs.last_control = self_index;
      qs.fifo.push_back(self);
      break;
    }
    case OpKind::kTake: {
      QueueState& qs = grow(queues_, op.object);
      if (result >= 0) {
        accesses_.push_back({AccessKind::kTakeJob, job_name(static_cast<std::int32_t>(result))});
        source(grow(jobs_, static_cast<std::int32_t>(result)).create);
        enablers_.push_back(grow(jobs_, static_cast<std::int32_t>(result)).create);
        if (qs.fifo_front < qs.fifo.size()) ++qs.fifo_front;
      } else {
        accesses_.push_back({AccessKind::kTakeClosed, op.object});
        source(qs.last_control);
        qs.last_control = self_index;
      }
      break;
    }
    case OpKind::kComplete:
      accesses_.push_back({AccessKind::kComplete, job_name(op.object)});
      grow(jobs_, op.object).complete = self_index;
      break;
    case OpKind::kWaitJob:
      accesses_.push_back({AccessKind::kWaitJob, job_name(op.object)});
      source(grow(jobs_, op.object).complete);
      enablers_.push_back(grow(jobs_, op.object).complete);
      break;
    case OpKind::kClose: {
      QueueState& qs = grow(queues_, op.object);
      accesses_.push_back({AccessKind::kClose, op.object});
      source(qs.last_control);
      candidate(qs.last_control);
      qs.last_control = self_index;
      break;
    }
    case OpKind::kRead:
    case OpKind::kWrite:
      access_var(self, thread, op.object, op.kind == OpKind::kWrite);
      break;
  }
  for (const Touch& t : touches) {
    if (t.mutex == TouchMutex::kNone) {
      access_var(self, thread, t.var, t.write, false, t.awaited);
      continue;
    }
    // A foreign thread's lock operation while this step ran: as a controlled thread's, held by
    // no thread of the execution (kForeignOwner). Its acquire races with the mutex's previous
    // acquire, the unlock between them notwithstanding; the unlock that let it through enabled
    // it and is no race (were it one, dpor would run the step before that unlock, where the
    // foreign thread cannot take the mutex, and the unlock, asleep, could only wait: a sleep-set
    // blocked execution, 18 of the stand-in's 106 without a warmup).
    mutex_op(self, thread, kForeignOwner, t.var, t.mutex, true);
  }
  for (const Touch& t : status) access_var(self, thread, t.var, t.write, true);
  if (fatal) {  // it disables every other thread: it conflicts with each one's last event
    accesses_.push_back({AccessKind::kFatal, -1});
    for (std::size_t u = 0; u < threads_; ++u) {
      if (u == q) continue;
      source(last_event_[u]);
      // Not a race where that event enabled this step (the complete its wait waited for): the
      // step cannot run before it, and reversing it only leads to a sleep-set blocked execution
      // (a 2-GPU eight-gpus-long-context: 2 of 78 executions; 8 GPUs: 19% of them).
      if (std::find(enablers_.begin(), enablers_.end(), last_event_[u]) == enablers_.end())
        candidate(last_event_[u]);
    }
  }
  events_.push_back({thread, local, begin, static_cast<std::uint32_t>(accesses_.size()) - begin});
  clocks_.resize(clocks_.size() + threads_, 0);
  Clock base(threads_, 0);
  if (previous >= 0) {
    const auto c = clock(static_cast<std::size_t>(previous));
    std::copy(c.begin(), c.end(), base.begin());
  }
  Clock mine;
  join_sources(mine, base, SIZE_MAX, false);
  mine[q] = local + 1;
  std::copy(mine.begin(), mine.end(),
            clocks_.begin() + static_cast<std::ptrdiff_t>(self * threads_));
  if (self >= first_new_) find_races(self, thread, local, base);
  last_event_[q] = self_index;
}

void EventLog::join_sources(Clock& out, std::span<const std::uint32_t> base, std::size_t skip,
                            bool skip_mutex, bool skip_awaited) const {
  out.assign(base.begin(), base.end());
  // A lock race with the acquire `skip`: the unlock that released it does not order the two, nor
  // does anything that follows the acquire up to that unlock (it ran while the mutex was held, so
  // the lock could not have come between it and the acquire), the unlock's own step included: its
  // local code (t2 unlocks m1 and writes v0 in one step, t0's lock of m1 writes v0) flips with
  // the acquires, and counted as a source it hid the race (a regression case in test_dpor).
  std::size_t release = 0;
  for (const Source& s : sources_) {
    if (skip_mutex && s.mutex) release = std::max(release, s.event);
  }
  for (const Source& s : sources_) {
    if (s.event == skip || (skip_mutex && s.mutex)) continue;
    if (s.foreign && skip != SIZE_MAX) continue;  // a race's check (Source::foreign)
    if (skip_awaited && s.awaited) continue;
    if (skip_mutex && s.event <= release && happens_before(skip, s.event)) continue;
    const auto c = clock(s.event);
    for (std::size_t u = 0; u < threads_; ++u) out[u] = std::max(out[u], c[u]);
  }
}

void EventLog::find_races(std::size_t self, ThreadId thread, std::uint32_t local,
                          std::span<const std::uint32_t> base) {
  for (const Candidate& c : candidates_) {
    Race race;
    join_sources(race.reversed_clock, base, c.event, c.skip_mutex, c.skip_awaited);
    const Event& earlier = events_[c.event];
    // Something else between the two orders them: not a race of this pair.
    if (race.reversed_clock[static_cast<std::size_t>(earlier.thread)] > earlier.local) continue;
    race.reversed_clock[static_cast<std::size_t>(thread)] = local + 1;
    race.earlier = c.event;
    race.later = self;
    race.later_thread = thread;
    races_.push_back(std::move(race));
  }
}

void EventLog::add_pending(ThreadId thread, std::size_t earlier) {
  const auto q = static_cast<std::size_t>(thread);
  const Event& e = events_[earlier];
  if (e.thread == thread) return;
  Race race;
  race.reversed_clock.assign(threads_, 0);
  std::uint32_t next_local = 0;
  if (last_event_[q] >= 0) {
    const auto last = static_cast<std::size_t>(last_event_[q]);
    const auto c = clock(last);
    std::copy(c.begin(), c.end(), race.reversed_clock.begin());
    next_local = events_[last].local + 1;
  }
  if (race.reversed_clock[static_cast<std::size_t>(e.thread)] > e.local) return;
  race.reversed_clock[q] = next_local + 1;
  race.earlier = earlier;
  race.later = Race::kPending;
  race.later_thread = thread;
  races_.push_back(std::move(race));
}

void EventLog::add_blocked(ThreadId thread, const Op& pending, std::span<const Touch> touches) {
  for (const Touch& t : touches) {
    if (t.var < 0 || static_cast<std::size_t>(t.var) >= vars_.size()) continue;
    const VarState& v = vars_[static_cast<std::size_t>(t.var)];
    if (v.last_write >= 0) add_pending(thread, static_cast<std::size_t>(v.last_write));
    if (t.write) {
      for (std::size_t r : v.reads) add_pending(thread, r);
    }
  }
  if (pending.kind != OpKind::kLock || static_cast<std::size_t>(pending.object) >= mutexes_.size())
    return;
  const MutexState& m = mutexes_[static_cast<std::size_t>(pending.object)];
  if (m.owner == kNoThread || m.owner == thread || m.last_acquire < 0) return;
  add_pending(thread, static_cast<std::size_t>(m.last_acquire));
}

void EventLog::add_stopped(ThreadId thread) {
  if (!events_.empty()) add_pending(thread, events_.size() - 1);
}

std::vector<ThreadId> EventLog::initials(const Race& race) const {
  const Event& e = events_[race.earlier];
  const std::size_t end = race.later == Race::kPending ? events_.size() : race.later;
  std::vector<std::int64_t> first(threads_, -1);  // each thread's first event in the sequence
  std::vector<ThreadId> out;
  auto starts = [&](std::span<const std::uint32_t> c) {
    for (std::size_t u = 0; u < threads_; ++u) {
      if (first[u] >= 0 && c[u] > static_cast<std::uint32_t>(first[u])) return false;
    }
    return true;
  };
  for (std::size_t l = race.earlier + 1; l < end; ++l) {
    const auto c = clock(l);
    if (c[static_cast<std::size_t>(e.thread)] > e.local) continue;  // happens after `earlier`
    const auto t = static_cast<std::size_t>(events_[l].thread);
    if (first[t] >= 0) continue;
    if (starts(c)) out.push_back(events_[l].thread);
    first[t] = events_[l].local;
  }
  const auto t = static_cast<std::size_t>(race.later_thread);
  if (first[t] >= 0) return out;
  // The later event, run before `earlier`, follows every event of the sequence that conflicts
  // with it, not only its sources in the execution that stay: a source that happens after
  // `earlier` is left out, and with it the order it gave (dpor_wakeup.cc, reversal). Counted an
  // initial there, its thread went into the backtrack set (or, asleep, was trusted with the
  // race), and the class of the real reversal was left to no one: hunt program 510 lost 3 of 18
  // classes under source sets (a regression case in test_dpor; h35b's fallback in dpor.cc,
  // every enabled thread where each initial is asleep, had hidden it, and stays for another).
  Clock later = race.reversed_clock;
  if (race.later != Race::kPending) {
    for (std::size_t l = race.earlier + 1; l < end; ++l) {
      const auto c = clock(l);
      if (c[static_cast<std::size_t>(e.thread)] > e.local) continue;
      if (!dependent(footprint(l), footprint(race.later))) continue;
      for (std::size_t u = 0; u < threads_; ++u) later[u] = std::max(later[u], c[u]);
    }
  }
  if (starts(later)) out.push_back(race.later_thread);
  return out;
}

}  // namespace racelab::sched::dpor

#include "sched/execution.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "sched/decide.h"
#include "util/check.h"

namespace racelab::sched {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kStart:
      return "start";
    case OpKind::kLock:
      return "lock";
    case OpKind::kUnlock:
      return "unlock";
    case OpKind::kEventSet:
      return "set";
    case OpKind::kEventWait:
      return "wait";
    case OpKind::kSubmit:
      return "submit";
    case OpKind::kTake:
      return "take";
    case OpKind::kComplete:
      return "complete";
    case OpKind::kWaitJob:
      return "wait";
    case OpKind::kClose:
      return "close";
    case OpKind::kRead:
      return "read";
    case OpKind::kWrite:
      return "write";
    case OpKind::kPoint:
      return "point";
    case OpKind::kTryLock:
      return "try lock";
    case OpKind::kJoin:
      return "join";
    case OpKind::kReturn:
      return "return";
  }
  return "?";
}

std::string op_text(OpKind kind, std::string_view name) {
  const std::string n(name);
  switch (kind) {
    case OpKind::kStart:
      return "start";
    case OpKind::kPoint:
      return n;
    case OpKind::kTake:
      return "take from " + n;
    case OpKind::kTryLock:
      return "try lock " + n;
    case OpKind::kReturn:
      return "return from " + n;
    case OpKind::kLock:
    case OpKind::kUnlock:
    case OpKind::kEventSet:
    case OpKind::kEventWait:
    case OpKind::kClose:
    case OpKind::kRead:
    case OpKind::kWrite:
    case OpKind::kJoin:
      return std::string(op_kind_name(kind)) + " " + n;
    case OpKind::kSubmit:
    case OpKind::kComplete:
    case OpKind::kWaitJob:
      break;  // their text names more than one object: Execution::describe
  }
  RACELAB_CHECK(false, "op_text({}, \"{}\"): its text names more than one object; use describe()",
                op_kind_name(kind), n);
  return {};
}

namespace {

// Freed coroutine frames by size class (kFrameGrain bytes each), per thread, a bounded number of
// each: a frame freed on another thread (the thread backend's) simply joins that thread's lists.
constexpr std::size_t kFrameGrain = 64;
constexpr std::size_t kFrameClasses = 16;  // frames up to 960 bytes; larger ones are not kept
constexpr std::size_t kKeptFrames = 256;   // per class
// Under AddressSanitizer no frame is kept: a use after free of a recycled frame would be hidden.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepFrames = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kKeepFrames = false;
#else
constexpr bool kKeepFrames = true;
#endif
#else
constexpr bool kKeepFrames = true;
#endif

struct FramePool {
  std::vector<void*> freed[kFrameClasses];
  FramePool() {
    for (auto& list : freed) list.reserve(kKeptFrames);  // frees never allocate
  }
  ~FramePool();
};

thread_local bool frame_pool_gone = false;  // a frame freed at thread exit after the pool

FramePool::~FramePool() {
  frame_pool_gone = true;
  for (auto& list : freed) {
    for (void* frame : list) ::operator delete(frame);
  }
}

FramePool& frame_pool() {
  thread_local FramePool pool;
  return pool;
}

std::size_t frame_class(std::size_t size) { return (size + kFrameGrain - 1) / kFrameGrain; }

}  // namespace

void* Task::promise_type::operator new(std::size_t size) {
  const std::size_t c = frame_class(size);
  if (!kKeepFrames || c >= kFrameClasses) return ::operator new(size);
  auto& list = frame_pool().freed[c];
  if (list.empty()) return ::operator new(c* kFrameGrain);
  void* frame = list.back();
  list.pop_back();
  return frame;
}

void Task::promise_type::operator delete(void* frame, std::size_t size) noexcept {
  const std::size_t c = frame_class(size);
  if (kKeepFrames && c < kFrameClasses && !frame_pool_gone) {
    auto& list = frame_pool().freed[c];
    if (list.size() < kKeptFrames) {
      list.push_back(frame);
      return;
    }
  }
  ::operator delete(frame);
}

std::coroutine_handle<> Task::promise_type::FinalAwaiter::await_suspend(
    std::coroutine_handle<promise_type> h) noexcept {
  auto& p = h.promise();
  if (p.continuation) return p.continuation;
  if (p.root_of != nullptr) p.root_of->on_root_finished(p.root_thread);
  return std::noop_coroutine();
}

Execution::Execution(std::uint64_t max_steps) : max_steps_(max_steps) {}

Execution::~Execution() {
  for (auto& t : threads_) {
    if (t.root) t.root.destroy();
  }
}

namespace {
// The longest text a std::string holds without a heap buffer.
const std::size_t kInlineChars = std::string().capacity();
}  // namespace

void Execution::keep_name(std::string& name) {
  if (name.capacity() > kInlineChars) spare_names_.push_back(std::move(name));
}

std::string Execution::own(std::string_view text) {
  if (text.size() <= kInlineChars || spare_names_.empty()) return std::string(text);
  std::string name = std::move(spare_names_.back());
  spare_names_.pop_back();
  name.assign(text);
  return name;
}

void Execution::reset(std::uint64_t max_steps) {
  // Every member, as the constructor leaves it; containers are cleared, which keeps their
  // buffers, and the buffers inside their elements are moved to the spares first.
  for (auto& t : threads_) {
    if (t.root) t.root.destroy();
    keep_name(t.name);
  }
  threads_.clear();
  for (Mutex& m : mutexes_) keep_name(m.name);
  mutexes_.clear();
  for (Event& e : events_) keep_name(e.name);
  events_.clear();
  for (Queue& q : queues_) {
    keep_name(q.name);
    q.waiting.clear();
    spare_fifos_.push_back(std::move(q.waiting));
  }
  queues_.clear();
  jobs_.clear();
  for (Var& v : vars_) keep_name(v.name);
  vars_.clear();
  for (std::string& l : labels_) keep_name(l);
  labels_.clear();
  label_ids_.clear();
  steps_.clear();
  touches_.clear();
  may_touches_.clear();
  findings_.clear();
  for (Note& n : notes_) keep_name(n.text);
  notes_.clear();
  current_ = kNoThread;
  max_steps_ = max_steps;
  stopped_ = false;
  fatal_ = false;
  touches_fixed_ = false;
  track_races_ = false;
  keep_states_ = false;
  state_source_ = nullptr;
  current_part_ = -1;
  for (auto& part : parts_) {
    for (auto& members : part) members.clear();
    spare_parts_.push_back(std::move(part));
  }
  parts_.clear();
  for (auto& places : places_) places.clear();
  parts_checked_ = false;
  enabled_.clear();
  enabled_dirty_ = false;
  enabled_bits_.clear();
  // The waiter lists stay, emptied: a list past the objects of a run is never read.
  for (auto& lists : waiters_) {
    for (auto& list : lists) list.clear();
  }
}

int Execution::make_mutex(std::string_view name, bool recursive) {
  mutexes_.push_back(Mutex{own(name), recursive});
  join_part(kPartMutex, static_cast<int>(mutexes_.size() - 1));
  return static_cast<int>(mutexes_.size() - 1);
}

int Execution::make_event(std::string_view name) {
  events_.push_back(Event{own(name)});
  join_part(kPartEvent, static_cast<int>(events_.size() - 1));
  return static_cast<int>(events_.size() - 1);
}

int Execution::make_queue(std::string_view name) {
  Queue q{own(name)};
  if (!spare_fifos_.empty()) {
    q.waiting = std::move(spare_fifos_.back());
    spare_fifos_.pop_back();
  }
  queues_.push_back(std::move(q));
  join_part(kPartQueue, static_cast<int>(queues_.size() - 1));
  return static_cast<int>(queues_.size() - 1);
}

int Execution::make_var(std::string_view name, bool atomic) {
  if (!atomic) track_races_ = true;
  vars_.push_back(Var{own(name), atomic});
  join_part(kPartVar, static_cast<int>(vars_.size() - 1));
  return static_cast<int>(vars_.size() - 1);
}

namespace {
// Up to this many labels label() scans them; beyond, it keeps an index.
constexpr std::size_t kScannedLabels = 16;
}  // namespace

int Execution::label(std::string_view text) {
  if (labels_.size() <= kScannedLabels) {
    for (std::size_t i = 0; i < labels_.size(); ++i) {
      if (labels_[i] == text) return static_cast<int>(i);
    }
  } else if (auto it = label_ids_.find(std::string(text)); it != label_ids_.end()) {
    return it->second;
  }
  labels_.push_back(own(text));
  const int id = static_cast<int>(labels_.size() - 1);
  if (labels_.size() > kScannedLabels) {
    if (label_ids_.empty()) {
      for (std::size_t i = 0; i < labels_.size(); ++i)
        label_ids_.emplace(labels_[i], static_cast<int>(i));
    } else {
      label_ids_.emplace(labels_.back(), id);
    }
  }
  return id;
}

ThreadId Execution::spawn(std::string_view name, Task body, bool daemon, int symmetry) {
  RACELAB_CHECK(steps_.empty(),
                "spawn of thread {} after step {}: a model subject spawns its threads in setup, "
                "before the first step",
                name, steps_.size());
  ThreadId id = static_cast<ThreadId>(threads_.size());
  Thread t;
  t.name = own(name);
  t.daemon = daemon;
  t.symmetry = symmetry;
  t.root = body.release();
  t.root.promise().root_of = this;
  t.root.promise().root_thread = id;
  t.resume = t.root;
  threads_.push_back(std::move(t));
  join_part(kPartThread, id);
  if (static_cast<std::size_t>(id) >> 6 >= enabled_bits_.size()) enabled_bits_.push_back(0);
  refresh(id);
  return id;
}

void Execution::set_queue_worker(int queue, ThreadId worker) { queues_[queue].worker = worker; }

bool Execution::is_enabled(ThreadId id) const {
  const Thread& t = threads_[id];
  if (t.finished) return false;
  const Op& op = t.pending;
  switch (op.kind) {
    case OpKind::kLock: {
      const Mutex& m = mutexes_[op.object];
      return m.owner == kNoThread || (m.recursive && m.owner == id);
    }
    case OpKind::kEventWait:
      return events_[op.object].set;
    case OpKind::kTake: {
      const Queue& q = queues_[op.object];
      return !q.waiting.empty() || q.closed;
    }
    case OpKind::kWaitJob:
      return jobs_[op.object].done;
    default:
      return true;
  }
}

void Execution::refresh(ThreadId t) {
  const std::uint64_t bit = std::uint64_t{1} << (t & 63);
  std::uint64_t& word = enabled_bits_[static_cast<std::size_t>(t) >> 6];
  const std::uint64_t want = is_enabled(t) ? bit : 0;
  if ((word & bit) == want) return;
  word ^= bit;
  enabled_dirty_ = true;
}

const std::vector<ThreadId>& Execution::enabled() const {
  if (enabled_dirty_) {
    enabled_.clear();
    for (std::size_t w = 0; w < enabled_bits_.size(); ++w) {
      for (std::uint64_t bits = enabled_bits_[w]; bits != 0; bits &= bits - 1) {
        enabled_.push_back(
            static_cast<ThreadId>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
      }
    }
    enabled_dirty_ = false;
  }
  return enabled_;
}

void Execution::pending_changed(ThreadId t) {
  const Op& op = threads_[t].pending;
  const std::uint32_t stamp = ++threads_[t].watch;
  auto watch = [&](WaitKind kind, int object) {
    auto& lists = waiters_[kind];
    if (static_cast<std::size_t>(object) >= lists.size())
      lists.resize(static_cast<std::size_t>(object) + 1);
    lists[static_cast<std::size_t>(object)].push_back({t, stamp});
  };
  switch (op.kind) {
    case OpKind::kLock:
      watch(kWaitMutex, op.object);
      break;
    case OpKind::kEventWait:
      watch(kWaitEvent, op.object);
      break;
    case OpKind::kTake:
      watch(kWaitQueue, op.object);
      break;
    case OpKind::kWaitJob:
      watch(kWaitJob, op.object);
      break;
    default:
      break;
  }
  refresh(t);
}

void Execution::notify(WaitKind kind, int object) {
  auto& lists = waiters_[kind];
  if (static_cast<std::size_t>(object) >= lists.size()) return;
  auto& w = lists[static_cast<std::size_t>(object)];
  std::size_t keep = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const Thread& th = threads_[w[i].thread];
    if (th.finished || th.watch != w[i].watch) continue;  // stale: it waits on something else now
    w[keep++] = w[i];
    refresh(w[i].thread);
  }
  w.resize(keep);
}

bool Execution::all_done() const {
  return std::all_of(threads_.begin(), threads_.end(),
                     [](const Thread& t) { return t.finished || t.daemon; });
}

void Execution::acquire(Thread& t, const Clock& from) {
  if (!track_races_) return;
  for (std::size_t i = 0; i < from.size(); ++i) t.clock[i] = std::max(t.clock[i], from[i]);
}

void Execution::release(Thread& t, ThreadId id, Clock& into) {
  if (!track_races_) return;
  if (into.size() < t.clock.size()) into.resize(t.clock.size(), 0);
  for (std::size_t i = 0; i < t.clock.size(); ++i) into[i] = std::max(into[i], t.clock[i]);
  ++t.clock[id];
}

void Execution::apply(ThreadId id) {
  Thread& t = threads_[id];
  const Op op = t.pending;
  if (steps_.empty() && track_races_) {
    for (auto& th : threads_) {
      th.clock.assign(threads_.size(), 0);
    }
    for (ThreadId i = 0; i < static_cast<ThreadId>(threads_.size()); ++i) threads_[i].clock[i] = 1;
  }
  switch (op.kind) {
    case OpKind::kStart:
      t.started = true;
      break;
    case OpKind::kLock: {
      Mutex& m = mutexes_[op.object];
      m.owner = id;
      ++m.depth;
      t.vtime = std::max(t.vtime, m.released_at);
      acquire(t, m.clock);
      notify(kWaitMutex, op.object);
      break;
    }
    case OpKind::kUnlock: {
      Mutex& m = mutexes_[op.object];
      if (m.owner != id) {
        report(kinds::kAssertion,
               fmt::format("{} unlocks {} which it does not hold", t.name, m.name), true);
        break;
      }
      if (--m.depth == 0) {
        m.owner = kNoThread;
        m.released_at = t.vtime;
        release(t, id, m.clock);
        notify(kWaitMutex, op.object);
      }
      break;
    }
    case OpKind::kEventSet: {
      Event& e = events_[op.object];
      if (!e.set) e.set_at = t.vtime;
      e.set = true;
      release(t, id, e.clock);
      notify(kWaitEvent, op.object);
      break;
    }
    case OpKind::kEventWait: {
      Event& e = events_[op.object];
      t.vtime = std::max(t.vtime, e.set_at);
      acquire(t, e.clock);
      break;
    }
    case OpKind::kSubmit: {
      Job job;
      job.queue = op.object;
      job.label = op.arg;
      job.submitter = id;
      job.seq = t.submitted++;
      job.submitted_at = t.vtime;
      release(t, id, job.submit_clock);
      jobs_.push_back(std::move(job));
      int job_id = static_cast<int>(jobs_.size() - 1);
      queues_[op.object].waiting.push_back(job_id);
      t.result = job_id;
      notify(kWaitQueue, op.object);
      break;
    }
    case OpKind::kTake: {
      Queue& q = queues_[op.object];
      if (q.waiting.empty()) {  // closed and drained
        t.result = -1;
        t.vtime = std::max(t.vtime, q.closed_at);
        acquire(t, q.clock);
        break;
      }
      int job_id = q.waiting.front();
      q.waiting.pop_front();
      if (q.waiting.empty()) notify(kWaitQueue, op.object);
      Job& job = jobs_[job_id];
      job.taken_by = id;
      t.vtime = std::max(t.vtime, job.submitted_at);
      acquire(t, job.submit_clock);
      t.result = job_id;
      break;
    }
    case OpKind::kComplete: {
      Job& job = jobs_[op.object];
      job.done = true;
      job.done_at = t.vtime;
      release(t, id, job.done_clock);
      notify(kWaitJob, op.object);
      break;
    }
    case OpKind::kWaitJob: {
      Job& job = jobs_[op.object];
      t.vtime = std::max(t.vtime, job.done_at);
      acquire(t, job.done_clock);
      break;
    }
    case OpKind::kClose: {
      Queue& q = queues_[op.object];
      q.closed = true;
      q.closed_at = t.vtime;
      release(t, id, q.clock);
      notify(kWaitQueue, op.object);
      break;
    }
    case OpKind::kRead:
    case OpKind::kWrite: {
      Var& v = vars_[op.object];
      if (v.atomic) {
        acquire(t, v.clock);
        release(t, id, v.clock);
      } else if (track_races_) {
        check_access(id, v, op.kind == OpKind::kWrite);
      }
      break;
    }
    case OpKind::kPoint:
      break;
    case OpKind::kTryLock:
    case OpKind::kJoin:
    case OpKind::kReturn:  // live-only (op.h): no Context call makes one
      RACELAB_CHECK(false,
                    "thread {} ({}) at step {}: a model execution got the live-only operation {}",
                    id, t.name, steps_.size(), op_kind_name(op.kind));
      break;
  }
  // Filled in place: a Step built on the stack and copied in stalled on its partial stores.
  Step& step = steps_.emplace_back();
  step.thread = id;
  step.op = op;
  step.vtime = t.vtime;
  if (op.kind == OpKind::kSubmit || op.kind == OpKind::kTake) step.result = t.result;
  step.touch_begin = static_cast<std::uint32_t>(touches_.size());
  step.may_begin = static_cast<std::uint32_t>(may_touches_.size());
  if (state_source_ != nullptr) observe(id, op);
}

void Execution::touch(int var, bool write) {
  if (current_ == kNoThread || steps_.empty() || steps_.back().thread != current_) return;
  touches_.push_back(Touch{var, write});
  ++steps_.back().touch_count;
  if (state_source_ != nullptr)
    threads_[current_].seen.push_back({1, Op{write ? OpKind::kWrite : OpKind::kRead, var, -1}, 0,
                                       state_source_->var_digest(var, current_)});
}

void Execution::may_touch(int var, bool write) {
  if (!touches_fixed_ || current_ == kNoThread || steps_.empty() ||
      steps_.back().thread != current_)
    return;
  Step& step = steps_.back();
  for (std::uint32_t i = step.may_begin; i < step.may_begin + step.may_count; ++i) {
    if (may_touches_[i].var == var && (may_touches_[i].write || !write)) return;
  }
  RACELAB_CHECK(step.may_count < UINT16_MAX, "step {} declares too many touches", steps_.size());
  may_touches_.push_back(Touch{var, write});
  ++step.may_count;
}

void Execution::may_fail() {
  if (current_ == kNoThread || steps_.empty() || steps_.back().thread != current_) return;
  steps_.back().may_fail = true;
}

void Execution::check_access(ThreadId id, Var& var, bool write) {
  const Thread& t = threads_[id];
  const std::int64_t step = static_cast<std::int64_t>(steps_.size());
  record_access(
      var.race, id, step, write, [&](std::int32_t x) { return t.clock[x]; },
      [&](const RaceAccess& a, bool a_write) {
        report(kinds::kDataRace,
               fmt::format("data race on {}: {} by {} at step {} and {} by {} at step {} are not "
                           "ordered by happens-before",
                           var.name, a_write ? "write" : "read", threads_[a.who].name, a.at,
                           write ? "write" : "read", t.name, step));
      });
}

void Execution::park(Op op, std::coroutine_handle<> resume_at) {
  Thread& t = threads_[current_];
  t.pending = op;
  t.resume = resume_at;
  pending_changed(current_);
}

void Execution::on_root_finished(ThreadId id) {
  Thread& t = threads_[id];
  t.finished = true;
  refresh(id);
  auto& promise = t.root.promise();
  if (promise.error) {
    try {
      std::rethrow_exception(promise.error);
    } catch (const ExecutionAborted&) {
      // Torn down by the engine after the execution ended: not a finding.
    } catch (const std::exception& e) {
      report(kinds::kException, fmt::format("{} threw: {}", t.name, e.what()), true);
    } catch (...) {
      report(kinds::kException, fmt::format("{} threw a non-standard exception", t.name), true);
    }
  }
}

void Execution::note(std::string_view text) {
  notes_.push_back(Note{static_cast<std::int64_t>(steps_.size()), current_,
                        current_ == kNoThread ? 0.0 : threads_[current_].vtime, own(text)});
}

void Execution::report(std::string kind, std::string message, bool fatal) {
  if (fatal) stopped_ = fatal_ = true;
  for (const Finding& f : findings_) {
    if (f.kind == kind) return;  // the first finding of each kind per execution is the one kept
  }
  Finding f;
  f.kind = std::move(kind);
  f.message = std::move(message);
  f.step = static_cast<std::int64_t>(steps_.size());
  if (current_ != kNoThread) f.thread = thread_name(current_);
  findings_.push_back(std::move(f));
}

bool Execution::has_finding(std::string_view kind) const {
  return std::any_of(findings_.begin(), findings_.end(),
                     [&](const Finding& f) { return f.kind == kind; });
}

std::string Execution::job_text(int job) const {
  const Job& j = jobs_[job];
  return fmt::format("job {} ({} from {}) on {}", job, j.label >= 0 ? labels_[j.label] : "job",
                     threads_[j.submitter].name, queues_[j.queue].name);
}

std::string Execution::describe(const Op& op) const {
  switch (op.kind) {
    case OpKind::kStart:
      return op_text(op.kind, "");
    case OpKind::kLock:
    case OpKind::kUnlock:
      return op_text(op.kind, mutexes_[op.object].name);
    case OpKind::kEventSet:
    case OpKind::kEventWait:
      return op_text(op.kind, events_[op.object].name);
    case OpKind::kSubmit:
      return fmt::format("submit {} to {}", op.arg >= 0 ? labels_[op.arg] : "job",
                         queues_[op.object].name);
    case OpKind::kTake:
    case OpKind::kClose:
      return op_text(op.kind, queues_[op.object].name);
    case OpKind::kComplete:
      return "complete " + job_text(op.object);
    case OpKind::kWaitJob:
      return "wait " + job_text(op.object);
    case OpKind::kRead:
    case OpKind::kWrite:
      return op_text(op.kind, vars_[op.object].name);
    case OpKind::kPoint:
      return op_text(op.kind, labels_[op.arg]);
    case OpKind::kTryLock:
    case OpKind::kJoin:
    case OpKind::kReturn:
      break;  // live subjects only
  }
  return std::string(op_kind_name(op.kind)) + " (not a model operation)";
}

std::string Execution::describe_step(const Step& s) const {
  return threads_[s.thread].name + ": " + describe(s.op);
}

double Execution::makespan() const {
  double m = 0;
  for (const Thread& t : threads_) m = std::max(m, t.vtime);
  return m;
}

ThreadId Execution::waits_for(ThreadId id) const {
  const Op& op = threads_[id].pending;
  switch (op.kind) {
    case OpKind::kLock:
      return mutexes_[op.object].owner;
    case OpKind::kWaitJob: {
      const Job& j = jobs_[op.object];
      return j.taken_by != kNoThread ? j.taken_by : queues_[j.queue].worker;
    }
    default:
      return kNoThread;
  }
}

std::string Execution::wait_text(ThreadId id) const {
  const Op& op = threads_[id].pending;
  const std::string& name = threads_[id].name;
  std::vector<std::string> locks;
  for (const Mutex& m : mutexes_) {
    if (m.owner == id) locks.push_back(m.name);
  }
  std::string held = locks.empty() ? "" : " " + holds_text(locks);
  // A worker's current job explains why it is where it is.
  for (std::size_t j = jobs_.size(); j-- > 0;) {
    if (jobs_[j].taken_by == id && !jobs_[j].done) {
      held = fmt::format(" runs job {} ({} from {}){}{}", j,
                         jobs_[j].label >= 0 ? labels_[jobs_[j].label] : "job",
                         threads_[jobs_[j].submitter].name, held.empty() ? " and" : ",", held);
      break;
    }
  }
  switch (op.kind) {
    case OpKind::kLock: {
      const Mutex& m = mutexes_[op.object];
      return fmt::format("{}{} {}{}", name, held, held_wait_text(m.name, threads_[m.owner].name),
                         threads_[m.owner].finished ? " (finished without releasing it)" : "");
    }
    case OpKind::kWaitJob: {
      const Job& j = jobs_[op.object];
      if (j.taken_by != kNoThread) {
        return fmt::format("{}{} waits for {}, which {} is running", name, held,
                           job_text(op.object), threads_[j.taken_by].name);
      }
      ThreadId w = queues_[j.queue].worker;
      return fmt::format("{}{} waits for {}, queued behind the job {} is running", name, held,
                         job_text(op.object), w == kNoThread ? "its worker" : threads_[w].name);
    }
    case OpKind::kEventWait:
      return fmt::format("{}{} waits for {}, which is never set", name, held,
                         events_[op.object].name);
    case OpKind::kTake:
      return fmt::format("{}{} waits for work on {}", name, held, queues_[op.object].name);
    default:
      return fmt::format("{}{} waits to {}", name, held, describe(op));
  }
}

void Execution::check_deadlock() {
  Finding f;
  f.kind = kinds::kDeadlock;
  f.step = static_cast<std::int64_t>(steps_.size());
  for (ThreadId t = 0; t < static_cast<ThreadId>(threads_.size()); ++t) {
    if (!threads_[t].finished && !(threads_[t].daemon && threads_[t].pending.kind == OpKind::kTake))
      f.details.push_back(wait_text(t));
  }
  // Follow each blocked thread's single wait-for edge; the first thread seen twice closes a cycle.
  const std::vector<int> cycle = find_wait_cycle(
      static_cast<int>(threads_.size()), [&](int t) { return waits_for(t); },
      [&](int t) { return threads_[t].finished; },
      [&](int t) { return !threads_[t].finished && !threads_[t].daemon; });
  describe_cycle(
      f, cycle, [&](int t) { return threads_[t].name; },
      [&](int t) { return wait_text(static_cast<ThreadId>(t)); });
  if (f.cycle.empty()) {
    f.message = stuck_deadlock_message(f.details.empty() ? std::vector<std::string>{}
                                                         : std::vector{f.details.front()});
  }
  stopped_ = true;
  findings_.push_back(std::move(f));
}

}  // namespace racelab::sched

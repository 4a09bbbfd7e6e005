#pragma once
// Execution: the state of one run of a subject under the scheduler.
//
// It owns the controlled threads (their pending operations, virtual clocks and vector clocks), the
// synchronisation objects they share (mutexes, events, job queues, shared variables), the trace of
// steps taken so far and the findings. It knows nothing about *how* threads run (coroutines or OS
// threads: see backend.h) nor about *who* chooses the next thread (strategy.h); engine.cc connects
// the three. Everything here runs on one thread at a time, so it needs no locks of its own.
#include <array>
#include <coroutine>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sched/finding.h"
#include "sched/op.h"
#include "sched/race.h"
#include "sched/state.h"
#include "sched/strategy.h"
#include "sched/task.h"

namespace racelab::sched {

// Thrown at a scheduling point of the OS-thread backend to unwind a thread the engine gave up on.
struct ExecutionAborted {};

struct Step {
  ThreadId thread;
  Op op;
  double vtime;             // the thread's virtual time (seconds) when the step took effect
  std::int64_t result = 0;  // a submit's or take's job id (take: -1 once closed and drained)
  // This step's touches are touches_[touch_begin, touch_begin + touch_count) (Context::touch).
  std::uint32_t touch_begin = 0;
  std::uint32_t touch_count = 0;
  // What it declared it may touch elsewhere: may_touches_[may_begin, may_begin + may_count)
  // (Context::may_touch), and whether it may fail (Context::may_fail).
  std::uint32_t may_begin = 0;
  std::uint16_t may_count = 0;
  bool may_fail = false;
};

struct Note {  // something a subject wants shown on its timeline; not a scheduling point
  std::int64_t step;
  ThreadId thread;
  double vtime;
  std::string text;
};

class Execution final : public ThreadView, public FootprintView, public StateView {
 public:
  explicit Execution(std::uint64_t max_steps = 1'000'000);
  ~Execution();
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;
  // Makes this a new Execution, as Execution(max_steps) would, for another run of a subject: its
  // threads' coroutines are destroyed and every object, step, note and finding is gone; only the
  // buffers stay, so that an exploration does not allocate them afresh for every execution
  // (run_execution recycles Executions: engine.cc).
  void reset(std::uint64_t max_steps);

  // ---- Setup: called by the subject before the first step. Names appear in traces and reports.
  int make_mutex(std::string_view name, bool recursive = false);
  int make_event(std::string_view name);
  int make_queue(std::string_view name);
  // A shared variable. Plain ones are checked for data races; atomic ones (state the interpreter
  // lock makes atomic, like a Python dict) order their accesses instead.
  int make_var(std::string_view name, bool atomic = false);
  int label(std::string_view text);  // interns a label for points and jobs
  // `symmetry`: the thread's symmetry group (FootprintView::symmetry_group), -1 for none.
  ThreadId spawn(std::string_view name, Task body, bool daemon = false, int symmetry = -1);
  // Threads and objects made from now on belong to part `part` of the subject's alike parts
  // (state.h; parts are numbered from 0), or to none for -1.
  void set_part(int part) { current_part_ = part; }
  // The thread serving `queue`, used to explain waits on its jobs in deadlock reports.
  void set_queue_worker(int queue, ThreadId worker);
  // Whether this execution's strategy reads state digests (Strategy::needs().state_digests); set by
  // the engine before the subject's setup.
  void keep_states(bool keep) { keep_states_ = keep; }
  // The subject describes its state (state.h): where the strategy reads digests, each thread's
  // operations and what it saw are recorded from here on, and state_digest() answers.
  void describe_state(const StateSource* source) {
    state_source_ = keep_states_ ? source : nullptr;
  }

  // ---- Scheduling: called by the engine.
  std::size_t thread_count() const override { return threads_.size(); }
  const std::string& thread_name(ThreadId t) const override { return threads_[t].name; }
  bool finished(ThreadId t) const override { return threads_[t].finished; }
  std::string pending_text(ThreadId t) const override { return describe(threads_[t].pending); }
  const FootprintView* footprints() const override { return this; }
  const StateView* states() const override { return this; }
  const Op* pending_op(ThreadId t) const override { return &threads_[t].pending; }
  // None where the subject has plain shared variables: the race checker's vector clocks are
  // state that two alike threads need not share (dpor.cc, symmetry).
  int symmetry_group(ThreadId t) const override { return track_races_ ? -1 : threads_[t].symmetry; }
  // The digest of the current state (state.h; state_digest.cc), alike threads renamed; nullopt
  // where the subject does not describe its state or has plain shared variables (the race
  // checker's vector clocks are state too).
  std::optional<std::uint64_t> state_digest() const override;
  std::optional<std::uint64_t> named_state_digest(std::vector<ThreadId>& canonical) const override;
  std::uint64_t role(Role what, std::int32_t id) const override;
  std::int64_t step_result(std::uint64_t step) const override { return steps_[step].result; }
  std::span<const Touch> step_touches(std::uint64_t step) const override {
    const Step& s = steps_[step];
    return {touches_.data() + s.touch_begin, s.touch_count};
  }
  bool ended_by_finding() const override { return fatal_; }
  bool step_limit_reached() const override { return steps_.size() >= max_steps_; }
  bool touches_fixed() const override { return touches_fixed_; }
  void fix_touches() { touches_fixed_ = true; }
  StepOutlook step_outlook(std::uint64_t step) const override {
    const Step& s = steps_[step];
    return {{may_touches_.data() + s.may_begin, s.may_count}, s.may_fail};
  }
  bool is_enabled(ThreadId t) const;
  // The enabled threads, ascending. A bit per thread is kept up to date as steps change what
  // threads wait on (a step touches only the waiters of the objects it changes); the list is
  // rebuilt from the bits, a word at a time, only when a bit changed.
  const std::vector<ThreadId>& enabled() const;
  const Op& pending(ThreadId t) const { return threads_[t].pending; }
  void apply(ThreadId t);  // performs t's pending operation and records the step
  bool all_done() const;   // every non-daemon thread finished
  void check_deadlock();   // call when nothing is enabled and not all_done()
  std::coroutine_handle<> resume_point(ThreadId t) const { return threads_[t].resume; }
  std::coroutine_handle<Task::promise_type> root(ThreadId t) const { return threads_[t].root; }
  void set_current(ThreadId t) { current_ = t; }
  ThreadId current() const { return current_; }

  // ---- Called from awaiters (on behalf of current()).
  void park(Op op, std::coroutine_handle<> resume_at);
  void set_pending(Op op) {
    threads_[current_].pending = op;
    pending_changed(current_);
  }
  std::int64_t result() const { return threads_[current_].result; }
  void on_root_finished(ThreadId t);

  // ---- Subject-facing information.
  void advance(double seconds) { threads_[current_].vtime += seconds; }
  double vtime(ThreadId t) const { return threads_[t].vtime; }
  void note(std::string_view text);
  // Records that the current step's local code accessed `var` (Context::touch). Not a scheduling
  // point: it changes no trace, clock or race check; only dpor's dependency relation reads it.
  void touch(int var, bool write);
  // Records that the current step's local code may touch `var`, or end the run with a fatal
  // finding, where it sees other values (Context::may_touch, Context::may_fail).
  void may_touch(int var, bool write);
  void may_fail();
  // The current thread's past no longer matters (Context::forget_past): what it saw is cleared.
  void forget_past(std::int64_t label);
  // Records a finding; `fatal` ends the execution after the current step.
  void report(std::string kind, std::string message, bool fatal = false);
  bool stopped() const { return stopped_; }
  void stop() { stopped_ = true; }
  bool has_finding(std::string_view kind) const;

  // ---- Results.
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Finding>& findings() const { return findings_; }
  const std::vector<Note>& notes() const { return notes_; }
  std::string describe(const Op& op) const;
  std::string describe_step(const Step& s) const;
  std::uint64_t max_steps() const { return max_steps_; }
  double makespan() const;
  std::int64_t job_label(int job) const { return jobs_[job].label; }

 private:
  using Clock = std::vector<std::uint32_t>;  // a vector clock, one entry per thread

  struct Thread {
    std::string name;
    bool daemon = false;
    int symmetry = -1;
    bool started = false;
    bool finished = false;
    std::uint32_t watch = 0;  // bumped whenever the pending operation changes
    Op pending;
    std::coroutine_handle<> resume;
    std::coroutine_handle<Task::promise_type> root;
    std::int64_t result = 0;
    double vtime = 0;
    Clock clock;
    // For state_digest: what the thread saw since it last forgot its past, and its submits.
    struct Seen {
      std::uint8_t what = 0;  // 0: an operation, 1: a touch, 2: forget_past
      Op op;
      std::int64_t result = 0;  // a submit's or take's job id
      std::uint64_t value = 0;  // the accessed variable's var_digest, or the label
    };
    std::vector<Seen> seen;
    std::uint32_t submitted = 0;
  };
  struct Mutex {
    std::string name;
    bool recursive = false;
    ThreadId owner = kNoThread;
    int depth = 0;
    double released_at = 0;
    Clock clock;
  };
  struct Event {
    std::string name;
    bool set = false;
    double set_at = 0;
    Clock clock;
  };
  // A queue's job ids not yet taken, oldest first: a vector and the place of its front (a deque
  // allocates even empty); emptied, it starts again at its buffer's beginning.
  class JobFifo {
   public:
    bool empty() const { return head_ == ids_.size(); }
    int front() const { return ids_[head_]; }
    void push_back(int id) { ids_.push_back(id); }
    void pop_front() {
      if (++head_ == ids_.size()) clear();
    }
    void clear() {
      ids_.clear();
      head_ = 0;
    }
    const int* begin() const { return ids_.data() + head_; }
    const int* end() const { return ids_.data() + ids_.size(); }

   private:
    std::vector<int> ids_;
    std::size_t head_ = 0;
  };
  struct Queue {
    std::string name;
    ThreadId worker = kNoThread;
    JobFifo waiting;  // job ids not yet taken
    bool closed = false;
    double closed_at = 0;
    Clock clock;  // for the close
  };
  struct Job {
    int queue = -1;
    int label = -1;
    ThreadId submitter = kNoThread;
    ThreadId taken_by = kNoThread;
    std::uint32_t seq = 0;  // its place among its submitter's jobs
    bool done = false;
    double submitted_at = 0;
    double done_at = 0;
    Clock submit_clock;
    Clock done_clock;
  };
  struct Var {
    std::string name;
    bool atomic = false;
    Clock clock;     // atomic: the release clock of the accesses so far
    RaceState race;  // plain variables: the accesses a new one may race with
  };

  void acquire(Thread& t, const Clock& from);
  void release(Thread& t, ThreadId id, Clock& into);
  void check_access(ThreadId id, Var& var, bool write);
  // Incremental enabled set: threads whose pending operation waits on an object are listed under
  // it (lists are pruned lazily); a step that changes an object refreshes only its waiters.
  enum WaitKind { kWaitMutex = 0, kWaitEvent = 1, kWaitQueue = 2, kWaitJob = 3 };
  void refresh(ThreadId t);
  void pending_changed(ThreadId t);
  void notify(WaitKind kind, int object);
  mutable std::vector<ThreadId> enabled_;
  mutable bool enabled_dirty_ = false;
  std::vector<std::uint64_t> enabled_bits_;
  struct Waiter {
    ThreadId thread;
    std::uint32_t watch;  // valid while the thread's watch counter still has this value
  };
  std::vector<std::vector<Waiter>> waiters_[4];

  std::string job_text(int job) const;
  // ---- Buffers kept by reset() for the next run: names longer than a string holds inline, the
  // queues' job lists and the parts' member lists.
  std::string own(std::string_view text);  // a name, in a kept buffer where one fits
  void keep_name(std::string& name);
  std::vector<std::string> spare_names_;
  std::vector<JobFifo> spare_fifos_;
  // ---- For state_digest (state_digest.cc).
  void observe(ThreadId id, const Op& op);
  class Names;
  // What a part holds: its threads, mutexes, events, queues and variables, in the order made.
  enum PartKind { kPartThread, kPartMutex, kPartEvent, kPartQueue, kPartVar, kPartKinds };
  struct PartPlace {
    int part = -1;  // -1: the object belongs to no part
    int index = -1;
  };
  void join_part(PartKind kind, int id);  // called where threads and objects are made
  PartPlace place(PartKind kind, int id) const;
  void check_parts() const;
  std::uint64_t object_name(const Op& op, ThreadId self, const Names* names) const;
  std::uint64_t thread_digest(ThreadId t, const Names* names) const;
  std::uint64_t job_name(int job, ThreadId self, const Names* names) const;
  std::uint64_t part_key(int part, const std::vector<ThreadId>& layout,
                         const std::vector<std::uint64_t>& key) const;
  std::optional<std::uint64_t> digest_state(std::vector<ThreadId>* canonical_out) const;
  std::string wait_text(ThreadId t) const;
  ThreadId waits_for(ThreadId t) const;

  std::vector<Thread> threads_;
  std::vector<Mutex> mutexes_;
  std::vector<Event> events_;
  std::vector<Queue> queues_;
  std::vector<Job> jobs_;
  std::vector<Var> vars_;
  std::vector<std::string> labels_;
  // The labels' index, built only once there are more than a few (label() scans until then).
  std::unordered_map<std::string, int> label_ids_;
  std::vector<Step> steps_;
  std::vector<Touch> touches_;      // every step's touches, in step order (Step::touch_begin)
  std::vector<Touch> may_touches_;  // every step's declared touches (Step::may_begin)
  std::vector<Finding> findings_;
  std::vector<Note> notes_;
  ThreadId current_ = kNoThread;
  std::uint64_t max_steps_;
  bool stopped_ = false;
  bool fatal_ = false;          // a fatal report stopped the execution (not the deadlock check)
  bool touches_fixed_ = false;  // Context::fix_touches
  bool track_races_ = false;    // vector clocks are only kept when the subject has shared variables
  bool keep_states_ = false;
  const StateSource* state_source_ = nullptr;  // null unless kept and described
  int current_part_ = -1;
  std::vector<std::array<std::vector<int>, kPartKinds>> parts_;  // each part's members by kind
  std::array<std::vector<PartPlace>, kPartKinds> places_;        // by kind and id, where made
  std::vector<std::array<std::vector<int>, kPartKinds>> spare_parts_;  // reset() keeps them
  mutable bool parts_checked_ = false;
};

}  // namespace racelab::sched

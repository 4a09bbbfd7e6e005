#pragma once
// Context: what a subject's thread bodies use to reach scheduling points.
//
// Every call that touches shared state returns an awaitable: `co_await ctx.lock(m)`. On the
// coroutine backend the awaiting coroutine suspends and the engine resumes it when the scheduler
// picks its thread. On the OS-thread backend the same awaitable blocks the calling OS thread in
// await_ready until the scheduler hands it the token, and the coroutine itself never suspends. The
// subject's code is identical on both, which is what lets tests check that the two backends produce
// the same trace for the same schedule.
//
// Primitive handles are plain ints made during setup (Subject::setup), valid for one execution.
#include <coroutine>
#include <cstdint>
#include <string>
#include <string_view>

#include "sched/execution.h"

namespace racelab::sched {

class ThreadBackend;

class Context {
 public:
  struct Awaiter {
    Context* ctx;
    Op op;
    bool await_ready();
    void await_suspend(std::coroutine_handle<> h) { ctx->exec_.park(op, h); }
    std::int64_t await_resume() const { return ctx->exec_.result(); }
  };

  Context(Execution& exec, ThreadBackend* threads) : exec_(exec), threads_(threads) {}

  // ---- Setup.
  int mutex(std::string_view name) { return exec_.make_mutex(name, false); }
  int recursive_mutex(std::string_view name) { return exec_.make_mutex(name, true); }
  int event(std::string_view name) { return exec_.make_event(name); }
  // A FIFO job queue served by one worker thread (the worker calls take/complete).
  int queue(std::string_view name) { return exec_.make_queue(name); }
  int shared_var(std::string_view name) { return exec_.make_var(name); }
  int atomic_var(std::string_view name) { return exec_.make_var(name, true); }
  int label(std::string_view text) { return exec_.label(text); }
  ThreadId spawn(std::string_view name, Task body, bool daemon = false) {
    return exec_.spawn(name, std::move(body), daemon);
  }
  // A thread of symmetry group `group` (FootprintView::symmetry_group), for dpor's symmetry
  // reduction. The subject vouches that the threads of one group run the same code; that what
  // that code does depends only on what its operations and touches see (not on self(), now() or
  // the thread's name, other than in messages); and that every other thread treats them alike.
  ThreadId spawn_symmetric(std::string_view name, Task body, int group) {
    return exec_.spawn(name, std::move(body), false, group);
  }
  void serve(int queue, ThreadId worker) { exec_.set_queue_worker(queue, worker); }
  // Opts in to the states strategy (state.h lists what the subject vouches for); `source` must
  // outlive the execution.
  void describe_state(const StateSource& source) { exec_.describe_state(&source); }
  // Threads and objects made from now on belong to part `part` (numbered from 0) of the subject's
  // alike parts, -1 to none: one GPU's drafters, worker, queue and variables, say. The states
  // strategy treats two states that differ only by a renaming of parts as one (state.h lists
  // what the subject vouches for). Every part must make the same threads and objects, in the same
  // order. Only the states strategy reads parts.
  void part(int part) { exec_.set_part(part); }

  // ---- Scheduling points.
  Awaiter lock(int m) { return {this, {OpKind::kLock, m, -1}}; }
  Awaiter unlock(int m) { return {this, {OpKind::kUnlock, m, -1}}; }
  Awaiter set(int event) { return {this, {OpKind::kEventSet, event, -1}}; }
  Awaiter wait(int event) { return {this, {OpKind::kEventWait, event, -1}}; }
  // Returns the job id.
  Awaiter submit(int queue, int label) { return {this, {OpKind::kSubmit, queue, label}}; }
  // Returns the next job id, or -1 when the queue is closed and drained.
  Awaiter take(int queue) { return {this, {OpKind::kTake, queue, -1}}; }
  Awaiter complete(int job) { return {this, {OpKind::kComplete, job, -1}}; }
  Awaiter wait_job(int job) { return {this, {OpKind::kWaitJob, job, -1}}; }
  Awaiter close(int queue) { return {this, {OpKind::kClose, queue, -1}}; }
  Awaiter read(int var) { return {this, {OpKind::kRead, var, -1}}; }
  Awaiter write(int var) { return {this, {OpKind::kWrite, var, -1}}; }
  Awaiter point(int label) { return {this, {OpKind::kPoint, -1, label}}; }

  // ---- Not scheduling points.
  ThreadId self() const { return exec_.current(); }
  void advance(double seconds) { exec_.advance(seconds); }
  double now() const { return exec_.vtime(exec_.current()); }
  void note(std::string_view text) { exec_.note(text); }
  void report(std::string kind, std::string message, bool fatal = false) {
    exec_.report(std::move(kind), std::move(message), fatal);
  }
  // An assertion of the subject: a failure is a finding of kind "assertion" and ends the run.
  void check(bool ok, std::string_view what) {
    if (!ok)
      exec_.report(kinds::kAssertion, std::string("assertion failed: ") + std::string(what), true);
  }
  // Declares that the code running now (between two scheduling points) reads or writes shared
  // state `var` (a shared_var or atomic_var made in setup) without an operation on it: state the
  // local code after a scheduling point touches. Not a scheduling point; traces, vector clocks and
  // race checks ignore it. dpor's dependency relation needs it to be sound (docs/concepts.md).
  void touch(int var, bool write) { exec_.touch(var, write); }
  // The subject vouches that what the local code after each operation touches, and whether it
  // ends the run with a fatal finding, depends on the operation and its thread's past alone, never
  // on the values the step reads, except what the step declares with may_touch and may_fail where
  // it branches on such a value (a program whose threads touch nothing vouches with no
  // declaration). Optimal dpor then knows a reversed step's footprint before running it again
  // (dpor_wakeup.h), and checks it as it runs: a step that touches outside what it and its
  // declarations predicted is an internal error. Without it, that footprint counts as unknown:
  // sound, with sleep-set blocked executions.
  void fix_touches() { exec_.fix_touches(); }
  // Declares, where the current step's local code branches on a value it read, what another
  // branch touches (may_touch) or that another branch ends the run with a fatal finding
  // (may_fail). Not a scheduling point; only dpor reads it, and only under fix_touches.
  void may_touch(int var, bool write) { exec_.may_touch(var, write); }
  void may_fail() { exec_.may_fail(); }
  // The calling thread's continuation depends from here on only on `label` and shared state,
  // not on anything it saw before (state.h): the states strategy forgets its past. Not a
  // scheduling point; nothing else sees it.
  void forget_past(std::int64_t label) { exec_.forget_past(label); }
  Execution& execution() { return exec_; }

 private:
  Execution& exec_;
  ThreadBackend* threads_;  // null on the coroutine backend
};

}  // namespace racelab::sched

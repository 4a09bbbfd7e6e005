#pragma once
// Task: the coroutine type every controlled thread body (and every function it calls that reaches a
// scheduling point) returns.
//
// A Task starts suspended. `co_await task` runs it to completion as a nested call, using symmetric
// transfer so that deep call chains do not grow the machine stack. The outermost Task of a thread
// (its root) is started by the execution backend; when the root finishes it tells the Execution,
// and destroying a root destroys the whole suspended call chain below it (each parent frame owns
// the Task object of the child it awaits).
//
// The same Task code runs on both backends: on the coroutine backend a scheduling point suspends
// the coroutine; on the OS-thread backend the scheduling point blocks the OS thread inside
// await_ready and the coroutine never suspends (see context.h).
#include <coroutine>
#include <cstddef>
#include <exception>
#include <utility>

namespace racelab::sched {

class Execution;

class [[nodiscard]] Task {
 public:
  struct promise_type {
    std::coroutine_handle<> continuation;  // the awaiting parent; empty for a root
    std::exception_ptr error;
    Execution* root_of = nullptr;  // set for a thread's root Task
    int root_thread = -1;

    // Every call of a thread body that reaches a scheduling point has a frame, made afresh in
    // every execution; they come from a per-thread list of freed frames of their size
    // (execution.cc), which the next execution's calls take again.
    static void* operator new(std::size_t size);
    static void operator delete(void* frame, std::size_t size) noexcept;

    Task get_return_object() {
      return Task(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct FinalAwaiter {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept;
      void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };

  Task() = default;
  explicit Task(std::coroutine_handle<promise_type> h) : handle_(h) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  // Awaiting a Task runs it as a nested call and rethrows what it threw.
  bool await_ready() const noexcept { return !handle_ || handle_.done(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> parent) noexcept {
    handle_.promise().continuation = parent;
    return handle_;
  }
  void await_resume() {
    if (handle_ && handle_.promise().error) std::rethrow_exception(handle_.promise().error);
  }

  std::coroutine_handle<promise_type> handle() const { return handle_; }
  std::coroutine_handle<promise_type> release() { return std::exchange(handle_, {}); }

 private:
  void reset() {
    if (handle_) handle_.destroy();
    handle_ = {};
  }
  std::coroutine_handle<promise_type> handle_;
};

}  // namespace racelab::sched

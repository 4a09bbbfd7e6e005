#pragma once
// ThreadBackend: runs each controlled thread of an execution on its own OS thread and passes a
// token so that exactly one of them (or the engine) runs at a time.
//
// Hand-off is one binary semaphore per controlled thread plus one for the engine: the engine
// releases the chosen thread's semaphore and waits on its own; the thread runs up to its next
// scheduling point, records its pending operation, releases the engine and waits again. The
// semaphores give the happens-before edges, so the Execution needs no locks. When an execution ends
// with threads still blocked (a deadlock), teardown wakes each with an abort flag; the scheduling
// point throws ExecutionAborted, which unwinds the thread's coroutines before the OS thread exits.
#include <memory>
#include <semaphore>
#include <thread>
#include <vector>

#include "sched/execution.h"

namespace racelab::sched {

class ThreadBackend {
 public:
  explicit ThreadBackend(Execution& exec) : exec_(exec) {}
  ~ThreadBackend();

  void start();             // after setup: one OS thread per controlled thread, all waiting
  void resume(ThreadId t);  // runs t up to its next scheduling point or its end
  void park(const Op& op);  // called on the current controlled thread at a scheduling point
  void teardown();          // aborts every unfinished thread and joins them all

 private:
  void body(ThreadId t);

  struct Slot {
    std::binary_semaphore go{0};
    bool abort = false;
  };
  Execution& exec_;
  std::binary_semaphore engine_{0};
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::thread> threads_;
};

}  // namespace racelab::sched

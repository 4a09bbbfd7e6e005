#include "sched/thread_backend.h"

#include "sched/context.h"

namespace racelab::sched {

bool Context::Awaiter::await_ready() {
  if (ctx->threads_ == nullptr) return false;
  ctx->threads_->park(op);
  return true;
}

ThreadBackend::~ThreadBackend() { teardown(); }

void ThreadBackend::start() {
  const std::size_t n = exec_.thread_count();
  slots_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) slots_.push_back(std::make_unique<Slot>());
  threads_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    threads_.emplace_back([this, i] { body(static_cast<ThreadId>(i)); });
  }
}

void ThreadBackend::body(ThreadId t) {
  slots_[t]->go.acquire();
  if (!slots_[t]->abort) {
    // Runs the whole thread: every scheduling point blocks inside park(), so resume() returns only
    // when the root coroutine has finished (normally, by exception, or by abort).
    exec_.root(t).resume();
  }
  engine_.release();
}

void ThreadBackend::resume(ThreadId t) {
  slots_[t]->go.release();
  engine_.acquire();
}

void ThreadBackend::park(const Op& op) {
  const ThreadId me = exec_.current();
  exec_.set_pending(op);
  engine_.release();
  slots_[me]->go.acquire();
  if (slots_[me]->abort) throw ExecutionAborted{};
}

void ThreadBackend::teardown() {
  for (std::size_t t = 0; t < threads_.size(); ++t) {
    if (!threads_[t].joinable()) continue;
    if (!exec_.finished(static_cast<ThreadId>(t))) {
      exec_.set_current(static_cast<ThreadId>(t));
      exec_.stop();
      slots_[t]->abort = true;
      slots_[t]->go.release();
      engine_.acquire();
    }
    threads_[t].join();
  }
  threads_.clear();
}

}  // namespace racelab::sched

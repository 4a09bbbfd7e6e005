#pragma once
// The bug corpus: small hand-written subjects, each with a fixed twin, that prove the scheduler
// finds what it claims to find. Every subject is written once as coroutines and runs on both
// backends.
#include <string>

#include "sched/context.h"
#include "sched/engine.h"

namespace racelab::corpus {

using sched::Context;
using sched::Subject;
using sched::Task;

// Two threads increment a shared counter with a read then a write. Bug: an update is lost (and
// the accesses race). Fixed: the increment holds a mutex.
class LostUpdate : public Subject {
 public:
  explicit LostUpdate(bool fixed) : fixed_(fixed) {}
  std::string name() const override { return fixed_ ? "lost-update-fixed" : "lost-update"; }
  std::string content_hash() const override { return name() + "/1"; }
  void setup(Context& ctx) override;
  void finish(Context& ctx) override;

 private:
  Task increment(Context& ctx);
  bool fixed_;
  int counter_var_ = -1, mutex_ = -1;
  int counter_ = 0;
};

// Two threads take two mutexes in opposite orders. Fixed: both take them in the same order.
class LockOrderInversion : public Subject {
 public:
  explicit LockOrderInversion(bool fixed) : fixed_(fixed) {}
  std::string name() const override { return fixed_ ? "lock-order-fixed" : "lock-order"; }
  std::string content_hash() const override { return name() + "/1"; }
  void setup(Context& ctx) override;

 private:
  Task both(Context& ctx, int first, int second);
  bool fixed_;
};

// Check-then-act lazy initialisation: two threads look the compiled kernel up, find none and both
// compile it (the double compile of F5). Fixed: the check is repeated under the lock.
class LazyInit : public Subject {
 public:
  explicit LazyInit(bool fixed) : fixed_(fixed) {}
  std::string name() const override { return fixed_ ? "lazy-init-fixed" : "lazy-init"; }
  std::string content_hash() const override { return name() + "/1"; }
  void setup(Context& ctx) override;

 private:
  Task user(Context& ctx);
  bool fixed_;
  int lock_ = -1, lookup_ = -1, insert_ = -1, kernel_var_ = -1;
  bool compiled_ = false;
  int compiles_ = 0;
};

// An ordering bug of depth 3 (two ordering constraints): the writer sets x then y; the reader sees
// x set and y unset, then later sees y set. PCT needs two change points (depth 3) to force
// writer(x) < reader(check 1) < writer(y) < reader(check 2); PCT with depth 2 cannot. Fixed: the
// writer sets y before x.
class OrderingDepth3 : public Subject {
 public:
  explicit OrderingDepth3(bool fixed, int padding = 4) : fixed_(fixed), padding_(padding) {}
  std::string name() const override { return fixed_ ? "ordering-d3-fixed" : "ordering-d3"; }
  std::string content_hash() const override { return name() + "/1"; }
  void setup(Context& ctx) override;

 private:
  Task writer(Context& ctx);
  Task reader(Context& ctx);
  bool fixed_;
  int padding_;
  int x_var_ = -1, y_var_ = -1, pad_ = -1, lock_ = -1;
  bool x_ = false, y_ = false, saw_half_ = false;
};

// The compile_lock <-> autograd worker deadlock of docs/facts.md: two drafters on one device, lazy
// compile. A drafter's forward compile holds compile_lock and waits on the worker for its trace
// job (F4); the worker, running the other drafter's backward, waits for compile_lock to compile the
// backward (F2, F3). Fixed: the main thread compiles forward and backward before starting the
// drafters (sequential warmup).
class CompileLockDeadlock : public Subject {
 public:
  explicit CompileLockDeadlock(bool fixed, int drafters = 2) : fixed_(fixed), drafters_(drafters) {}
  std::string name() const override {
    return fixed_ ? "compile-lock-deadlock-fixed" : "compile-lock-deadlock";
  }
  std::string content_hash() const override { return name() + "/" + std::to_string(drafters_); }
  void setup(Context& ctx) override;

 private:
  Task step(Context& ctx);
  Task drafter(Context& ctx);
  Task main_thread(Context& ctx);
  Task worker(Context& ctx);
  bool fixed_;
  int drafters_;
  int compile_lock_ = -1, queue_ = -1, start_ = -1, trace_ = -1, backward_ = -1, guard_ = -1,
      cache_var_ = -1;
  int finished_ = 0;
  bool forward_compiled_ = false, backward_compiled_ = false;
};

}  // namespace racelab::corpus

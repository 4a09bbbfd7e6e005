#include "corpus.h"

namespace racelab::corpus {

// ---- LostUpdate

void LostUpdate::setup(Context& ctx) {
  counter_ = 0;
  counter_var_ = ctx.shared_var("counter");
  mutex_ = ctx.mutex("counter_mutex");
  ctx.spawn("t0", increment(ctx));
  ctx.spawn("t1", increment(ctx));
}

Task LostUpdate::increment(Context& ctx) {
  if (fixed_) co_await ctx.lock(mutex_);
  co_await ctx.read(counter_var_);
  const int seen = counter_;
  co_await ctx.write(counter_var_);
  counter_ = seen + 1;
  if (fixed_) co_await ctx.unlock(mutex_);
}

void LostUpdate::finish(Context& ctx) {
  ctx.check(counter_ == 2, "counter == 2 after two increments");
}

// ---- LockOrderInversion

void LockOrderInversion::setup(Context& ctx) {
  const int a = ctx.mutex("A");
  const int b = ctx.mutex("B");
  ctx.spawn("t0", both(ctx, a, b));
  ctx.spawn("t1", fixed_ ? both(ctx, a, b) : both(ctx, b, a));
}

Task LockOrderInversion::both(Context& ctx, int first, int second) {
  co_await ctx.lock(first);
  co_await ctx.lock(second);
  co_await ctx.unlock(second);
  co_await ctx.unlock(first);
}

// ---- LazyInit

void LazyInit::setup(Context& ctx) {
  compiled_ = false;
  compiles_ = 0;
  lock_ = ctx.mutex("init_lock");
  lookup_ = ctx.label("lookup kernel");
  insert_ = ctx.label("insert kernel");
  kernel_var_ = ctx.atomic_var("kernel");  // compiled_, for dpor (Context::touch)
  ctx.spawn("t0", user(ctx));
  ctx.spawn("t1", user(ctx));
}

Task LazyInit::user(Context& ctx) {
  co_await ctx.point(lookup_);
  ctx.touch(kernel_var_, false);
  if (compiled_) co_return;
  co_await ctx.lock(lock_);
  if (fixed_) {
    co_await ctx.point(lookup_);
    ctx.touch(kernel_var_, false);
  }
  if (!fixed_ || !compiled_) {
    ++compiles_;
    if (compiles_ > 1) ctx.report("duplicate_compile", "the kernel was compiled twice");
    co_await ctx.point(insert_);
    ctx.touch(kernel_var_, true);
    compiled_ = true;
  }
  co_await ctx.unlock(lock_);
}

// ---- OrderingDepth3

void OrderingDepth3::setup(Context& ctx) {
  x_ = y_ = saw_half_ = false;
  x_var_ = ctx.shared_var("x");
  y_var_ = ctx.shared_var("y");
  lock_ = ctx.mutex("xy_lock");
  pad_ = ctx.label("local work");
  ctx.spawn("writer", writer(ctx));
  ctx.spawn("reader", reader(ctx));
}

Task OrderingDepth3::writer(Context& ctx) {
  // Every access holds xy_lock, so there is no data race: the bug is purely one of ordering.
  const int first = fixed_ ? y_var_ : x_var_;
  const int second = fixed_ ? x_var_ : y_var_;
  co_await ctx.lock(lock_);
  co_await ctx.write(first);
  (fixed_ ? y_ : x_) = true;
  co_await ctx.unlock(lock_);
  for (int i = 0; i < padding_; ++i) co_await ctx.point(pad_);
  co_await ctx.lock(lock_);
  co_await ctx.write(second);
  (fixed_ ? x_ : y_) = true;
  co_await ctx.unlock(lock_);
}

Task OrderingDepth3::reader(Context& ctx) {
  co_await ctx.lock(lock_);
  co_await ctx.read(x_var_);
  co_await ctx.read(y_var_);
  saw_half_ = x_ && !y_;
  co_await ctx.unlock(lock_);
  for (int i = 0; i < padding_; ++i) co_await ctx.point(pad_);
  co_await ctx.lock(lock_);
  co_await ctx.read(y_var_);
  ctx.check(!(saw_half_ && y_), "reader never sees x without y and then y");
  co_await ctx.unlock(lock_);
}

// ---- CompileLockDeadlock

void CompileLockDeadlock::setup(Context& ctx) {
  finished_ = 0;
  forward_compiled_ = backward_compiled_ = false;
  compile_lock_ = ctx.recursive_mutex("compile_lock");
  queue_ = ctx.queue("autograd 0");
  start_ = ctx.event("start_gate");
  trace_ = ctx.label("trace");
  backward_ = ctx.label("backward");
  guard_ = ctx.label("guard check");
  cache_var_ = ctx.atomic_var("forward cache");  // forward_compiled_, for dpor (Context::touch)
  ctx.spawn("main", main_thread(ctx));
  for (int i = 0; i < drafters_; ++i) ctx.spawn("drafter 0." + std::to_string(i), drafter(ctx));
  const auto worker_id = ctx.spawn("autograd 0", worker(ctx), /*daemon=*/true);
  ctx.serve(queue_, worker_id);
}

Task CompileLockDeadlock::step(Context& ctx) {
  co_await ctx.point(guard_);  // F5: the cache snapshot is taken before the lock
  ctx.touch(cache_var_, false);
  const bool have = forward_compiled_;
  if (!have) {
    co_await ctx.lock(compile_lock_);                                       // F1
    const int job = static_cast<int>(co_await ctx.submit(queue_, trace_));  // F4
    co_await ctx.wait_job(job);
    ctx.touch(cache_var_, true);
    forward_compiled_ = true;
    co_await ctx.unlock(compile_lock_);
  }
  const int job = static_cast<int>(co_await ctx.submit(queue_, backward_));  // F3
  co_await ctx.wait_job(job);
}

Task CompileLockDeadlock::main_thread(Context& ctx) {
  if (fixed_) co_await step(ctx);  // sequential warmup: forward and backward compiled here
  co_await ctx.set(start_);
}

Task CompileLockDeadlock::drafter(Context& ctx) {
  co_await ctx.wait(start_);
  for (int s = 0; s < 2; ++s) co_await step(ctx);
}

Task CompileLockDeadlock::worker(Context& ctx) {
  for (;;) {
    const int job = static_cast<int>(co_await ctx.take(queue_));
    if (job < 0) co_return;
    if (ctx.execution().job_label(job) == backward_ && !backward_compiled_) {
      co_await ctx.lock(compile_lock_);  // F2: the lazy backward compile takes compile_lock
      backward_compiled_ = true;
      co_await ctx.unlock(compile_lock_);
    }
    co_await ctx.complete(job);
  }
}

}  // namespace racelab::corpus

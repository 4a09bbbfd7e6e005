#include "model/pipeline.h"

#include <fmt/format.h>

#include <cmath>

#include "sched/state.h"
#include "util/units.h"

namespace racelab::model {

using sched::Context;
using sched::Task;

PipelineModel::PipelineModel(Scenario scenario)
    : scenario_(std::move(scenario)), profile_(torch_profile(scenario_.profile)) {
  name_objects();
}

PipelineModel::PipelineModel(Scenario scenario, TorchProfile profile)
    : scenario_(std::move(scenario)), profile_(std::move(profile)) {
  name_objects();
}

void PipelineModel::name_objects() {
  for (int d = 0; d < scenario_.devices; ++d) {
    queue_names_.push_back(fmt::format("autograd {}", d));
    worker_names_.push_back(fmt::format("autograd {}", d));
    allocator_names_.push_back(fmt::format("allocator cuda:{}", d));
    for (int i = 0; i < scenario_.drafters_per_device; ++i) {
      drafter_names_.push_back(fmt::format("drafter {}.{}", d, i));
      private_lock_names_.push_back(fmt::format("warmup_lock {}.{}", d, i));
    }
  }
}

const PipelineModel::CompileText& PipelineModel::compile_text(int kind, int device,
                                                              std::int64_t length) {
  for (const CompileText& t : compile_texts_) {
    if (t.kind == kind && t.device == device && t.length == length) return t;
  }
  std::string what;
  if (kind == 0) {
    what = fmt::format("forward (cuda:{}, L={})", device, length);
  } else if (kind == 1) {
    what = fmt::format("backward (cuda:{}, {})", device,
                       length < 0 ? std::string("dynamic") : fmt::format("L={}", length));
  } else {
    what = fmt::format("backward (cuda:{}, dynamic) ahead of time", device);
  }
  std::string note = "compile " + what;
  compile_texts_.push_back(CompileText{kind, device, length, std::move(what), std::move(note)});
  return compile_texts_.back();
}

std::string PipelineModel::format_size(std::uint64_t bytes) { return racelab::format_size(bytes); }

double PipelineModel::compile_scale() const {
  // F8: a warmup in another process leaves only the disk caches warm; compiles still happen.
  return scenario_.warmup == WarmupMode::kSeparateProcess ? profile_.warm_disk_factor : 1.0;
}

std::uint64_t PipelineModel::dense_scores_bytes(std::int64_t length) const {
  // F7: the unfused path materialises B x H x Sq x Skv fp32 scores.
  return static_cast<std::uint64_t>(scenario_.batch) * static_cast<std::uint64_t>(scenario_.heads) *
         static_cast<std::uint64_t>(length) * static_cast<std::uint64_t>(length) * 4u;
}

void PipelineModel::setup(Context& ctx) {
  const Scenario& s = scenario_;
  wrapper_.assign(static_cast<std::size_t>(s.devices), false);
  entries_.clear();
  jobs_.clear();
  used_bytes_.assign(static_cast<std::size_t>(s.devices), 0);
  drafters_started_ = false;
  fx_tracers_.clear();

  compile_lock_ = ctx.recursive_mutex("compile_lock");  // F1
  // The dict (atomic under the GIL, M1) and the code cache (F6: one cache for all wrappers) are
  // one object each, named alike in every trace; dpor gets one key per device. A device's dict
  // lookup reads only its key, and its guard check finds only its own entries, whose positions
  // an insert for another device (an append) does not move: steps of two devices commute. The
  // recompile limit reads the number of entries: every insert writes cache_size_var_ too.
  dict_var_.clear();
  cache_var_.clear();
  // Each device's variables, queue and threads are one part (Context::part): the devices are
  // alike, and the states strategy explores states that differ only by which device is which
  // once (pipeline_state.cc). Main's warmup visits devices in order, but a device it has not
  // reached is where every device starts.
  for (int d = 0; d < s.devices; ++d) {
    ctx.part(d);
    dict_var_.push_back(ctx.atomic_var("_compiled_flex_attention"));
    cache_var_.push_back(ctx.atomic_var("code cache"));
  }
  ctx.part(-1);
  cache_size_var_ = ctx.atomic_var("code cache size");
  start_gate_ = ctx.event("start_gate");
  trace_label_ = ctx.label("trace autograd.grad");
  backward_label_ = ctx.label("backward");
  shared_warmup_lock_ = -1;
  private_locks_.clear();
  if (s.warmup == WarmupMode::kLockFirstStep || s.warmup == WarmupMode::kLockFirstForward) {
    shared_warmup_lock_ = ctx.mutex("warmup_lock");
  }
  worker_queue_.clear();
  for (int d = 0; d < s.devices; ++d) {
    ctx.part(d);
    worker_queue_.push_back(ctx.queue(queue_names_[static_cast<std::size_t>(d)]));
  }
  ctx.part(-1);
  // State the local code after a scheduling point touches (Context::touch), for dpor's dependency
  // relation; no operation names them, so no trace shows them. The rest of the per-execution
  // state needs no touch: wrapper_ is read and written only in the steps of the dict's read and
  // write, entries_ only in those of the code cache's read and write (the worker's check of an
  // entry's backward follows its creation in happens-before: creation, the forward's cache read,
  // submit, take), a backward's fields only by its device's worker or at creation, jobs_[j] in the
  // submit step and then the take of j (ordered by the hand-off), and drafters_started_ is
  // written by main before it sets start_gate, which every later compile follows.
  fx_flag_var_ = ctx.atomic_var("fx_tracing");  // F10: fx_tracer_
  allocator_var_.clear();
  for (int d = 0; d < s.devices; ++d) {
    ctx.part(d);
    allocator_var_.push_back(
        ctx.atomic_var(allocator_names_[static_cast<std::size_t>(d)]));  // used_bytes_
  }
  ctx.part(-1);

  ctx.describe_state(*this);  // pipeline_state.cc
  // What a step's local code touches follows from its operation and its thread's past, except
  // where it branches on a value the step read: the eager call's entry check (may set the FX
  // flag) and an allocation (may run out of memory) declare their other branch.
  ctx.fix_touches();
  ctx.spawn("main", main_thread(ctx));
  for (int d = 0; d < s.devices; ++d) {
    ctx.part(d);
    for (int i = 0; i < s.drafters_per_device; ++i) {
      const auto at = static_cast<std::size_t>(d * s.drafters_per_device + i);
      if (s.warmup == WarmupMode::kPerThreadLock) {
        private_locks_.push_back(ctx.mutex(private_lock_names_[at]));
      }
      // The drafters of one device are alike (their index picks only a per-thread warmup lock,
      // which nothing else touches): dpor may explore one of two that have done the same.
      ctx.spawn_symmetric(drafter_names_[at], drafter(ctx, d, i), d);
    }
  }
  for (int d = 0; d < s.devices; ++d) {
    // F3: one autograd engine worker per device, serving its FIFO queue one job at a time.
    ctx.part(d);
    const auto worker =
        ctx.spawn(worker_names_[static_cast<std::size_t>(d)], autograd_worker(ctx, d), true);
    ctx.serve(worker_queue_[d], worker);
  }
  ctx.part(-1);
}

Task PipelineModel::main_thread(Context& ctx) {
  const Scenario& s = scenario_;
  if (s.warmup == WarmupMode::kSequential) {
    // M3 sequential: device by device, one forward (and backward) at the warmup length, same rules.
    // No drafter runs yet, so nothing can be tracing at its entry checks (M2a).
    bool raised = false;
    for (int d = 0; d < s.devices && !raised; ++d) {
      co_await step(ctx, d, s.warmup_length(), -1, false, s.warmup_backward, raised);
    }
    ctx.note("warmup done");
  }
  drafters_started_ = true;  // read only by compile steps, which all follow the gate (M4)
  co_await ctx.set(start_gate_);
}

Task PipelineModel::drafter(Context& ctx, int device, int index) {
  const Scenario& s = scenario_;
  co_await ctx.wait(start_gate_);
  for (int k = 0; k < s.steps; ++k) {
    ctx.forget_past(k);  // a step depends on k and shared state, not on the steps before (state.h)
    int lock = -1;
    if (k == 0 && shared_warmup_lock_ >= 0) lock = shared_warmup_lock_;
    if (k == 0 && s.warmup == WarmupMode::kPerThreadLock) {
      lock = private_locks_[static_cast<std::size_t>(device * s.drafters_per_device + index)];
    }
    bool raised = false;
    co_await step(ctx, device, s.length_at(k), lock, s.warmup == WarmupMode::kLockFirstForward,
                  true, raised, k);
    if (raised) co_return;  // M2a: the exception ends the drafter
  }
}

Task PipelineModel::step(Context& ctx, int device, std::int64_t length, int warmup_lock,
                         bool lock_forward_only, bool run_backward, bool& raised, int k) {
  // M3: a user lock around the first step or the first forward call only.
  if (warmup_lock >= 0) co_await ctx.lock(warmup_lock);
  Forward fwd;
  co_await forward(ctx, device, length, fwd);
  if (fwd.raised) {
    // M2a: the RuntimeError unwinds the step; the user's lock is a `with` block, so it is
    // released on the way out, and the thread runs no further step.
    if (warmup_lock >= 0) co_await ctx.unlock(warmup_lock);
    raised = true;
    co_return;
  }
  if (warmup_lock >= 0 && lock_forward_only) co_await ctx.unlock(warmup_lock);
  // A drafter's step now depends only on k, the lock it may hold, the forward's outcome and shared
  // state (state.h).
  if (k >= 0) {
    // The lock by what it is, not its id, which names a part (state.h): the mutexes' owners
    // tell which one the thread holds.
    const std::uint64_t held = warmup_lock < 0 ? 0 : warmup_lock == shared_warmup_lock_ ? 1 : 2;
    std::uint64_t past = sched::state_mix(static_cast<std::uint64_t>(k) + 1, held);
    past =
        sched::state_mix(sched::state_mix(past, entry_name(fwd.entry, nullptr)), fwd.scores_bytes);
    ctx.forget_past(static_cast<std::int64_t>(past));
  }
  if (run_backward) {
    co_await backward(ctx, device, fwd);
  } else if (fwd.scores_bytes > 0) {
    ctx.touch(allocator_var_[static_cast<std::size_t>(device)], true);
    used_bytes_[static_cast<std::size_t>(device)] -= fwd.scores_bytes;
  }
  if (warmup_lock >= 0 && !lock_forward_only) co_await ctx.unlock(warmup_lock);
}

int PipelineModel::find_entry(int device, std::int64_t length) const {
  // F6: guards are per device index and requires_grad; a dynamic entry serves any length.
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.device == device && e.requires_grad && (e.length == length || e.length < 0)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool PipelineModel::fx_entry_check(Context& ctx, int device) {
  // M2a / F10: the compiled wrapper's entry asks FX whether a trace is in progress, before the
  // guard check, the cache and compile_lock. In 2.11 the flag is one module global, so another
  // thread's joint-graph trace makes this call raise.
  if (!profile_.fx_tracing_process_wide) return false;
  ctx.touch(fx_flag_var_, false);
  // The first other thread inside a trace (a tracing thread is in make_fx, not at an entry).
  const Tracer* other = nullptr;
  for (const Tracer& t : fx_tracers_) {
    if (t.thread != ctx.self()) {
      other = &t;
      break;
    }
  }
  if (other == nullptr) return false;
  const auto& exec = ctx.execution();
  ctx.report(sched::kinds::kFxTraceError,
             fmt::format("RuntimeError: Detected that you are using FX to symbolically trace a "
                         "dynamo-optimized function. This is not supported at the moment. ({} "
                         "called its compiled flex_attention on cuda:{} while {} was inside "
                         "make_fx tracing {}; F10: the FX tracing flag is process-wide)",
                         exec.thread_name(ctx.self()), device, exec.thread_name(other->thread),
                         other->eager ? "the joint graph of an eager flex_attention call, outside "
                                        "compile_lock (F12)"
                                      : "a joint graph"));
  return true;
}

void PipelineModel::fx_trace_begins(Context& ctx, bool eager) {
  fx_tracers_.push_back(Tracer{ctx.self(), eager});
  ctx.touch(fx_flag_var_, true);
  ctx.note(eager ? "fx_tracing set (eager call's trace)" : "fx_tracing set");
}

void PipelineModel::fx_trace_ends(Context& ctx) {
  for (auto it = fx_tracers_.begin(); it != fx_tracers_.end(); ++it) {
    if (it->thread == ctx.self()) {
      fx_tracers_.erase(it);
      break;
    }
  }
  ctx.touch(fx_flag_var_, true);
  ctx.note("fx_tracing cleared");
}

Task PipelineModel::eager_forward(Context& ctx, int device, std::int64_t length, Forward& out) {
  // F7: the unfused path materialises dense scores.
  if (profile_.eager_flex_traces) {
    // M2f / F12: with gradients, eager flex_attention traces its forward/backward graph with
    // make_fx on every call, outside compile_lock. It enters through the entry check (M2a) like
    // a compiled call (seen: eager drafters crash each other), then sets the FX flag for its
    // trace, whose autograd.grad runs on the device worker (F4), and clears it.
    co_await ctx.read(fx_flag_var_);
    ctx.may_touch(fx_flag_var_, true);  // the check passes where the flag is clear: it sets it
    if (fx_entry_check(ctx, device)) {
      out.raised = true;
      co_return;
    }
    fx_trace_begins(ctx, true);
    const int job = static_cast<int>(co_await ctx.submit(worker_queue_[device], trace_label_));
    if (jobs_.size() <= static_cast<std::size_t>(job))
      jobs_.resize(static_cast<std::size_t>(job) + 1);
    jobs_[static_cast<std::size_t>(job)] = Job{false, -1};
    co_await ctx.wait_job(job);
    fx_trace_ends(ctx);
  }
  out.scores_bytes = dense_scores_bytes(length);
  if (!allocate(ctx, device, out.scores_bytes)) {
    out.scores_bytes = 0;
    co_return;
  }
  ctx.advance(profile_.eager_forward);
}

void PipelineModel::compile_starts(Context& ctx, const CompileText& text) {
  ctx.note(text.note);
  if (drafters_started_) {
    ctx.report(sched::kinds::kCompileAfterWarmup,
               fmt::format("{} compiles {} after main started the drafters",
                           ctx.execution().thread_name(ctx.self()), text.what));
  }
}

bool PipelineModel::allocate(Context& ctx, int device, std::uint64_t bytes) {
  const std::uint64_t capacity =
      static_cast<std::uint64_t>(std::llround(scenario_.memory_gib * 1073741824.0));
  std::uint64_t& used = used_bytes_[static_cast<std::size_t>(device)];
  ctx.touch(allocator_var_[static_cast<std::size_t>(device)], true);
  ctx.may_fail();  // where others hold more of the device's memory
  if (bytes > capacity - std::min(used, capacity)) {
    // M4: reads as PyTorch's OutOfMemoryError; the drafter thread dies, which ends the run.
    ctx.report(sched::kinds::kOom,
               fmt::format("CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity "
                           "of {} of which {} is free. ({})",
                           format_size(bytes), device, format_size(capacity),
                           format_size(capacity - std::min(used, capacity)),
                           ctx.execution().thread_name(ctx.self())),
               true);
    return false;
  }
  used += bytes;
  return true;
}

Task PipelineModel::forward(Context& ctx, int device, std::int64_t length, Forward& out) {
  const Scenario& s = scenario_;
  if (s.attention == Attention::kSdpaFused) {  // never compiles, no dense scores
    ctx.advance(profile_.forward);
    co_return;
  }
  if (s.attention == Attention::kSdpaChunked) {  // never compiles; one chunk of scores at a time
    out.scores_bytes = static_cast<std::uint64_t>(s.batch * s.heads) *
                       static_cast<std::uint64_t>(std::min(length, s.chunk)) *
                       static_cast<std::uint64_t>(length) * 4u;
    if (!allocate(ctx, device, out.scores_bytes)) out.scores_bytes = 0;
    ctx.advance(profile_.forward * 2);
    co_return;
  }
  if (s.attention == Attention::kFlexEager) {  // F7, F12: the unfused path and its own trace
    co_await eager_forward(ctx, device, length, out);
    co_return;
  }
  // M2.1: look the wrapper up in _compiled_flex_attention; create and insert it if missing. Each
  // access is atomic; check-then-insert is not (two threads may both insert, harmlessly).
  const auto d = static_cast<std::size_t>(device);
  co_await ctx.read(dict_var_[d]);
  if (!wrapper_[d]) {
    co_await ctx.write(dict_var_[d]);
    wrapper_[d] = true;
  }
  // M2b / F5: the guard check takes a snapshot of the cache before any lock. The entry check
  // (M2a) comes first, in the same step: nothing another thread does between the two changes
  // either outcome (docs/model.md, "one step for the entry check and the snapshot").
  co_await ctx.read(cache_var_[d]);
  if (fx_entry_check(ctx, device)) {
    out.raised = true;
    co_return;
  }
  const int hit = find_entry(device, length);
  if (hit >= 0) {
    out.entry = hit;
    ctx.advance(profile_.forward);
    co_return;
  }
  co_await compile_forward(ctx, device, length, out);
}

Task PipelineModel::compile_forward(Context& ctx, int device, std::int64_t length, Forward& out) {
  const Scenario& s = scenario_;
  // F1: every frame compile runs under compile_lock. F5: no second look at the cache.
  co_await ctx.lock(compile_lock_);
  compile_starts(ctx, compile_text(0, device, length));
  // M2c / F10: make_fx sets the process-wide FX flag for the joint-graph trace (set with the lock
  // step and cleared with the trace job's return: docs/model.md).
  fx_trace_begins(ctx, false);
  // F4: tracing flex_attention builds its joint graph through autograd.grad, which the device's
  // autograd worker executes while this thread holds compile_lock.
  const int job = static_cast<int>(co_await ctx.submit(worker_queue_[device], trace_label_));
  if (jobs_.size() <= static_cast<std::size_t>(job))
    jobs_.resize(static_cast<std::size_t>(job) + 1);
  jobs_[static_cast<std::size_t>(job)] = Job{false, -1};
  co_await ctx.wait_job(job);
  fx_trace_ends(ctx);
  ctx.advance(profile_.compile_forward * compile_scale());
  co_await ctx.write(cache_var_[static_cast<std::size_t>(device)]);
  ctx.touch(cache_size_var_, true);  // the recompile limit below; the insert
  bool eager = false;
  if (entries_.size() >= static_cast<std::size_t>(s.recompile_limit)) {
    // M4 / F6 / F7: the shared budget is spent; Dynamo runs this call eagerly.
    ctx.report(
        sched::kinds::kRecompileLimit,
        fmt::format("{}: recompile_limit ({}) reached on cuda:{} at L={}; "
                    "flex_attention falls back to the unfused path",
                    ctx.execution().thread_name(ctx.self()), s.recompile_limit, device, length));
    eager = true;
  } else {
    // F6: the first length on a device compiles static; a second distinct length recompiles with
    // a dynamic dimension when automatic_dynamic is on.
    bool other_length = false;
    for (const Entry& e : entries_) {
      if (e.device == device && e.requires_grad && e.length != length) other_length = true;
    }
    const std::int64_t shape = other_length && s.automatic_dynamic ? -1 : length;
    for (const Entry& e : entries_) {
      if (e.device == device && e.requires_grad && e.length == shape) {
        ctx.report(
            sched::kinds::kDuplicateCompile,
            fmt::format("forward for (cuda:{}, requires_grad, {}) compiled twice; the "
                        "second by {} from a stale cache snapshot (F5)",
                        device, shape < 0 ? std::string("dynamic") : fmt::format("L={}", shape),
                        ctx.execution().thread_name(ctx.self())));
        break;
      }
    }
    entries_.push_back(Entry{device, true, shape});
    out.entry = static_cast<int>(entries_.size() - 1);
    if (shape < 0 && profile_.dynamic_backward_ahead_of_time) {
      // M2e / F11: a dynamic entry saves SymInts for backward, so AOTAutograd compiles its
      // backward here, on this thread, still inside compile_lock: no worker compiles it later.
      compile_starts(ctx, compile_text(2, device, -1));
      ctx.advance(profile_.compile_backward * compile_scale());
      Entry& e = entries_.back();
      e.backward_compiled = true;
      e.backward_compiles = 1;
    }
  }
  co_await ctx.unlock(compile_lock_);
  if (eager) co_await eager_forward(ctx, device, length, out);  // M2d: the call runs eagerly
}

Task PipelineModel::backward(Context& ctx, int device, const Forward& fwd) {
  // F3: backward() hands the graph to the device's autograd worker and blocks until it is done.
  const int job = static_cast<int>(co_await ctx.submit(worker_queue_[device], backward_label_));
  if (jobs_.size() <= static_cast<std::size_t>(job))
    jobs_.resize(static_cast<std::size_t>(job) + 1);
  jobs_[static_cast<std::size_t>(job)] = Job{true, fwd.entry};
  co_await ctx.wait_job(job);
  if (fwd.scores_bytes > 0) {
    ctx.touch(allocator_var_[static_cast<std::size_t>(device)], true);
    used_bytes_[static_cast<std::size_t>(device)] -= fwd.scores_bytes;
  }
}

Task PipelineModel::autograd_worker(Context& ctx, int device) {
  for (;;) {
    ctx.forget_past(0);  // one job after another: nothing carries over (state.h)
    const int job_id = static_cast<int>(co_await ctx.take(worker_queue_[device]));
    if (job_id < 0) co_return;
    const Job job = jobs_[static_cast<std::size_t>(job_id)];
    if (!job.backward) {
      ctx.advance(profile_.trace_grad);
    } else {
      if (job.entry >= 0 && !entries_[static_cast<std::size_t>(job.entry)].backward_compiled) {
        // F2: the lazy backward compile of a fixed entry, on the first backward(), takes
        // compile_lock.
        co_await ctx.lock(compile_lock_);
        Entry& e = entries_[static_cast<std::size_t>(job.entry)];
        compile_starts(ctx, compile_text(1, device, e.length));
        if (++e.backward_compiles > 1) {
          ctx.report(sched::kinds::kDuplicateCompile,
                     fmt::format("backward of the (cuda:{}) entry compiled twice", device));
        }
        ctx.advance(profile_.compile_backward * compile_scale());
        e.backward_compiled = true;
        co_await ctx.unlock(compile_lock_);
      }
      ctx.advance(profile_.backward);
    }
    jobs_[static_cast<std::size_t>(job_id)].served = true;  // read no more (pipeline_state.cc)
    co_await ctx.complete(job_id);
  }
}

}  // namespace racelab::model

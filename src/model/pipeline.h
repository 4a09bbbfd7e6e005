#pragma once
// The pipeline model: the single-process drafter pipeline of docs/facts.md as a subject of the
// deterministic scheduler. It implements the model's rules v2 (docs/model.md), with the switches of
// the scenario's torch profile (model/profile.h, data/profiles/; profile "2.11" described here):
//
//   M1 threads and resources: main, drafter D.I, one autograd worker per device (F3), the
//      process-wide re-entrant compile_lock (F1), the user's _compiled_flex_attention dict, the
//      shared code-object cache with its recompile budget (F6), one allocator per device, and
//      the process-wide FX tracing flag (F10).
//   M2 a step: wrapper lookup/insert; forward: the entry check against the FX flag (M2a, F10),
//      the stale snapshot (F5), a compile under compile_lock whose joint trace sets the FX flag
//      and runs on the device worker (F4), the recompile budget (M4/F7), the backward of a dynamic
//      entry compiled ahead of time (M2e, F11); backward on the worker, which compiles a fixed
//      entry's backward lazily under compile_lock (F2).
//   M3 warmup modes, M4 findings (deadlock, fx_trace_error, duplicate_compile,
//      compile_after_warmup, recompile_limit, oom).
//
// Every rule in pipeline.cc cites its fact. docs/model.md explains the choices where the rules
// leave room.
#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"
#include "model/scenario.h"
#include "sched/engine.h"

namespace racelab::model {

class PipelineModel : public sched::Subject, public sched::StateSource {
 public:
  explicit PipelineModel(Scenario scenario);
  // A profile other than the scenario's (tests: what a later torch would change).
  PipelineModel(Scenario scenario, TorchProfile profile);
  std::string name() const override { return scenario_.name; }
  std::string content_hash() const override { return scenario_.hash; }
  void setup(sched::Context& ctx) override;
  const Scenario& scenario() const { return scenario_; }

  // Its state, for the states strategy (sched/state.h; pipeline_state.cc).
  std::uint64_t shared_digest(const sched::StateNames& names) const override;
  std::uint64_t var_digest(int var, sched::ThreadId reader) const override;
  std::uint64_t part_digest(int device) const override;
  // Entry `index` as digests name it: its device (as `names` names it; none: the reader's own)
  // and its place among that device's entries.
  std::uint64_t entry_name(int index, const sched::StateNames* names) const;

  // PyTorch's size formatting (c10's format_size): "256.00 GiB".
  static std::string format_size(std::uint64_t bytes);

 private:
  struct Entry {  // one compiled graph in the shared code-object cache (F6)
    int device;
    bool requires_grad;
    std::int64_t length;  // -1: dynamic
    bool backward_compiled = false;
    int backward_compiles = 0;
  };
  struct Job {              // what a job on an autograd worker is
    bool backward = false;  // false: the trace-time autograd.grad of F4
    int entry = -1;         // backward: the entry whose forward ran, or -1 (eager)
    bool served = false;    // the worker is done with it (state only until then)
  };
  struct Forward {  // the outcome of a forward call
    int entry = -1;
    std::uint64_t scores_bytes = 0;  // dense scores held until the backward frees them
    bool raised = false;             // M2a: the call raised; the thread runs no further step
  };

  sched::Task main_thread(sched::Context& ctx);
  sched::Task drafter(sched::Context& ctx, int device, int index);
  sched::Task autograd_worker(sched::Context& ctx, int device);
  // `k`: the drafter's step, whose past the states strategy may forget once the forward is done;
  // -1 for main's warmup.
  sched::Task step(sched::Context& ctx, int device, std::int64_t length, int warmup_lock,
                   bool lock_forward_only, bool backward, bool& raised, int k = -1);
  sched::Task forward(sched::Context& ctx, int device, std::int64_t length, Forward& out);
  sched::Task compile_forward(sched::Context& ctx, int device, std::int64_t length, Forward& out);
  sched::Task backward(sched::Context& ctx, int device, const Forward& fwd);

  int find_entry(int device, std::int64_t length) const;
  bool fx_entry_check(sched::Context& ctx, int device);
  sched::Task eager_forward(sched::Context& ctx, int device, std::int64_t length, Forward& out);
  void fx_trace_begins(sched::Context& ctx, bool eager);
  void fx_trace_ends(sched::Context& ctx);
  // What a compile compiles ("forward (cuda:0, L=1024)") and its note ("compile " and that),
  // formatted once per subject: kind 0 a forward, 1 a backward, 2 a backward ahead of time;
  // `length` -1 for a dynamic entry.
  struct CompileText {
    int kind, device;
    std::int64_t length;
    std::string what, note;
  };
  const CompileText& compile_text(int kind, int device, std::int64_t length);
  void compile_starts(sched::Context& ctx, const CompileText& text);
  void name_objects();
  bool allocate(sched::Context& ctx, int device, std::uint64_t bytes);
  std::uint64_t dense_scores_bytes(std::int64_t length) const;
  double compile_scale() const;

  Scenario scenario_;
  TorchProfile profile_;
  // Names of the per-device objects and threads, formatted once (name_objects), not per execution.
  std::vector<std::string> queue_names_, allocator_names_, worker_names_;
  std::vector<std::string> drafter_names_, private_lock_names_;  // by device, then index
  std::vector<CompileText> compile_texts_;  // compile_text's, as they were first needed

  // Per-execution state, reset by setup(). Touched only in the step right after the scheduling
  // point on the object that guards it (the dict and cache vars, compile_lock, the job hand-off).
  int compile_lock_ = -1, start_gate_ = -1, shared_warmup_lock_ = -1;
  // The dict and the code cache are one object each (F6), with one dpor key per device: a
  // device's lookups read only its own key and entries (setup says why that is sound).
  std::vector<int> dict_var_, cache_var_;
  int cache_size_var_ = -1;  // the number of entries, which the recompile limit reads
  std::vector<int> worker_queue_;
  std::vector<int> private_locks_;
  int trace_label_ = -1, backward_label_ = -1;
  std::vector<bool> wrapper_;  // _compiled_flex_attention: device -> wrapper exists
  std::vector<Entry> entries_;
  std::vector<Job> jobs_;  // indexed by the execution's job id
  std::vector<std::uint64_t> used_bytes_;
  bool drafters_started_ = false;
  // F10: the threads inside a joint-graph trace (make_fx), in the order they entered; the FX flag
  // is set while any is. `eager`: an eager call's own trace (F12), outside compile_lock, where
  // two threads can trace at once.
  struct Tracer {
    sched::ThreadId thread;
    bool eager;
  };
  std::vector<Tracer> fx_tracers_;
  // dpor's names for the two above and used_bytes_ (setup explains why these and no others).
  int fx_flag_var_ = -1;
  std::vector<int> allocator_var_;  // per device
};

}  // namespace racelab::model

// The pipeline model's state, for the states strategy (sched/state.h).
//
// What its threads' code reads of shared state, and where the digests cover it:
//   - wrapper_[d] after an access of the device's dict key: var_digest;
//   - the device's entries (place, shape) after an access of its cache key (find_entry, the
//     duplicate check), the number of entries after an access of the cache size (the recompile
//     limit): var_digest;
//   - the FX tracers after an access of the flag (the entry check asks whether another thread
//     traces, and whether that is an eager call's trace): var_digest, relative to the reader;
//   - used_bytes_[d] after an access of the device's allocator: var_digest;
//   - jobs_[j], written once by the submit step and read by the worker after its take, and
//     drafters_started_, written once before the start gate: shared_digest;
//   - the worker's look at its entry's backward (written at the entry's creation and then only
//     by that worker): shared_digest, and the worker's next operation (lock or complete).
// A drafter forgets its past at the top of each step (its state is then k and shared state), the
// worker at the top of each job.
#include "model/pipeline.h"
#include "sched/state.h"

namespace racelab::model {

using sched::state_mix;

std::uint64_t PipelineModel::var_digest(int var, sched::ThreadId reader) const {
  std::uint64_t h = state_mix(0x7661ULL, static_cast<std::uint64_t>(var));
  if (var == fx_flag_var_) {
    for (const Tracer& t : fx_tracers_) {
      if (t.thread != reader) return state_mix(h, t.eager ? 2 : 1);  // the first other tracer
    }
    return h;
  }
  if (var == cache_size_var_) return state_mix(h, entries_.size());
  for (std::size_t d = 0; d < cache_var_.size(); ++d) {
    if (var == dict_var_[d]) return state_mix(h, wrapper_[d] ? 1 : 0);
    if (var == allocator_var_[d]) return state_mix(h, used_bytes_[d]);
    if (var == cache_var_[d]) {
      // What a guard check and an insert read: the device's entries, where they are, their
      // shape (their backward is the worker's business).
      for (std::size_t i = 0; i < entries_.size(); ++i) {
        const Entry& e = entries_[i];
        if (e.device != static_cast<int>(d)) continue;
        h = state_mix(state_mix(h, i), static_cast<std::uint64_t>(e.length));
        h = state_mix(h, e.requires_grad ? 1 : 0);
      }
      return h;
    }
  }
  return h;
}

std::uint64_t PipelineModel::shared_digest(const sched::StateNames& names) const {
  std::uint64_t h = state_mix(0x706970ULL, drafters_started_ ? 1 : 0);
  for (bool w : wrapper_) h = state_mix(h, w ? 1 : 0);
  for (std::uint64_t used : used_bytes_) h = state_mix(h, used);
  for (const Entry& e : entries_) {
    h = state_mix(state_mix(h, static_cast<std::uint64_t>(e.device)),
                  static_cast<std::uint64_t>(e.length));
    h = state_mix(h, (e.requires_grad ? 1 : 0) | (e.backward_compiled ? 2 : 0));
    h = state_mix(h, static_cast<std::uint64_t>(e.backward_compiles));
  }
  for (const Tracer& t : fx_tracers_) h = state_mix(state_mix(h, names.thread(t.thread)), t.eager);
  // Jobs in any order: the execution's job ids follow the order of submits.
  std::uint64_t jobs = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    jobs += state_mix(state_mix(names.job(static_cast<int>(j)), jobs_[j].backward ? 1 : 0),
                      static_cast<std::uint64_t>(jobs_[j].entry + 1));
  }
  return state_mix(h, jobs);
}

}  // namespace racelab::model

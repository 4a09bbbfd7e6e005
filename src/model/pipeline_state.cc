// The pipeline model's state, for the states strategy (sched/state.h).
//
// What its threads' code reads of shared state, and where the digests cover it:
//   - wrapper_[d] after an access of the device's dict key: var_digest;
//   - the device's entries (shape, in order) after an access of its cache key (find_entry, the
//     duplicate check), the number of entries after an access of the cache size (the recompile
//     limit): var_digest. An entry's place in entries_ follows the order in which devices
//     compiled and serves only to find it again: digests name an entry by its device and its
//     place among that device's entries (entry_name);
//   - the FX tracers after an access of the flag (the entry check asks whether another thread
//     traces, and whether that is an eager call's trace): var_digest, relative to the reader;
//   - used_bytes_[d] after an access of the device's allocator: var_digest;
//   - jobs_[j], written once by the submit step and read by the worker after its take until it
//     marks the job served, and
//     drafters_started_, written once before the start gate: shared_digest;
//   - the worker's look at its entry's backward (written at the entry's creation and then only
//     by that worker): shared_digest, and the worker's next operation (lock or complete).
// A drafter forgets its past at the top of each step (its state is then k and shared state), the
// worker at the top of each job. Each device is a part (Context::part): var_digest and the
// drafters' labels name no device (an entry a drafter found is its own device's), shared_digest
// names devices through StateNames::part, and part_digest is what a device holds alone.
#include <vector>

#include "model/pipeline.h"
#include "sched/state.h"

namespace racelab::model {

using sched::state_mix;

std::uint64_t PipelineModel::entry_name(int index, const sched::StateNames* names) const {
  if (index < 0) return 0;
  const int device = entries_[static_cast<std::size_t>(index)].device;
  std::uint64_t rank = 0;
  for (int i = 0; i < index; ++i) rank += entries_[static_cast<std::size_t>(i)].device == device;
  return state_mix(names != nullptr ? names->part(device) + 1 : 0, rank);
}

std::uint64_t PipelineModel::var_digest(int var, sched::ThreadId reader) const {
  // The variable itself is named by the operation (a device's variables through its part).
  std::uint64_t h = 0x7661ULL;
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
      // What a guard check and an insert read: the device's entries in order, their shape (their
      // backward is the worker's business; their places among other devices' entries are only
      // names: entry_name).
      for (const Entry& e : entries_) {
        if (e.device != static_cast<int>(d)) continue;
        h = state_mix(state_mix(h, static_cast<std::uint64_t>(e.length)), e.requires_grad ? 1 : 0);
      }
      return h;
    }
  }
  return h;
}

std::uint64_t PipelineModel::part_digest(int device) const {
  const auto d = static_cast<std::size_t>(device);
  std::uint64_t h = state_mix(state_mix(0x646576ULL, wrapper_[d] ? 1 : 0), used_bytes_[d]);
  for (const Entry& e : entries_) {
    if (e.device != device) continue;
    h = state_mix(h, static_cast<std::uint64_t>(e.length));
    h = state_mix(h, (e.requires_grad ? 1 : 0) | (e.backward_compiled ? 2 : 0));
    h = state_mix(h, static_cast<std::uint64_t>(e.backward_compiles));
  }
  return h;
}

std::uint64_t PipelineModel::shared_digest(const sched::StateNames& names) const {
  std::uint64_t h = state_mix(0x706970ULL, drafters_started_ ? 1 : 0);
  // Devices in the order names gives them (the order of the parts' ranks); the order in which
  // devices compiled their entries is not state.
  std::vector<std::uint64_t> devices(wrapper_.size());
  for (std::size_t d = 0; d < wrapper_.size(); ++d)
    devices[names.part(static_cast<int>(d))] = part_digest(static_cast<int>(d));
  for (std::uint64_t device : devices) h = state_mix(h, device);
  for (const Tracer& t : fx_tracers_) h = state_mix(state_mix(h, names.thread(t.thread)), t.eager);
  // Jobs in any order: the execution's job ids follow the order of submits. What a job is is
  // read by its worker only, after its take: a served job's is history.
  std::uint64_t jobs = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    if (jobs_[j].served) continue;
    jobs += state_mix(state_mix(names.job(static_cast<int>(j)), jobs_[j].backward ? 1 : 0),
                      entry_name(jobs_[j].entry, &names));
  }
  return state_mix(h, jobs);
}

}  // namespace racelab::model

#include "sched/strategies/dpor_symmetry.h"

#include <algorithm>

namespace racelab::sched::dpor {

void Symmetry::reset(const FootprintView& view, std::size_t threads, bool enabled) {
  threads_ = threads;
  active_ = false;
  gated_.clear();
  status_.clear();
  if (!enabled) return;
  groups_.assign(threads_, -1);
  for (ThreadId t = 0; t < static_cast<ThreadId>(threads_); ++t) {
    groups_[static_cast<std::size_t>(t)] = view.symmetry_group(t);
    active_ = active_ || groups_[static_cast<std::size_t>(t)] >= 0;
  }
  history_.assign(threads_, {});
  history_hash_.assign(threads_, 0);
  local_.assign(threads_, 0);
  last_writer_.clear();
  submits_.clear();
  job_names_.clear();
  // Before any step, the threads of a group are alike (nothing done, nothing seen).
  alike_since_.assign(threads_, 0);
  for (std::size_t t = 0; t < threads_; ++t) {
    for (std::size_t u = 0; u < threads_; ++u) {
      if (u != t && groups_[t] >= 0 && groups_[u] == groups_[t]) alike_since_[t] = 1;
    }
  }
}

bool Symmetry::alike(ThreadId a, ThreadId b) const {
  const auto x = static_cast<std::size_t>(a), y = static_cast<std::size_t>(b);
  return groups_[x] >= 0 && groups_[x] == groups_[y] && history_hash_[x] == history_hash_[y] &&
         history_[x] == history_[y];
}

std::span<const Touch> Symmetry::observe(ThreadId t, const Op& op, std::int64_t result,
                                         std::span<const Touch> touches) {
  status_.clear();
  if (!active_) return {};
  const auto q = static_cast<std::size_t>(t);
  std::vector<std::int64_t>& h = history_[q];
  const std::size_t begin = h.size();
  if (groups_[q] >= 0) {  // who t is alike to before this step
    was_alike_.assign(threads_, 0);
    for (ThreadId u = 0; u < static_cast<ThreadId>(threads_); ++u)
      was_alike_[static_cast<std::size_t>(u)] = u != t && alike(u, t);
  }
  // The record's length first: records compare alike only field by field.
  h.insert(h.end(), {static_cast<std::int64_t>(op.kind), op.object, op.arg, result,
                     static_cast<std::int64_t>(touches.size())});
  const std::int64_t me = (static_cast<std::int64_t>(t) << 32 | local_[q]) + 1;
  auto see = [&](std::int32_t var, bool write) {
    const auto v = static_cast<std::size_t>(var);
    if (v >= last_writer_.size()) last_writer_.resize(v + 1, 0);
    h.insert(h.end(), {var, write ? 1 : 0, last_writer_[v]});
    if (write) last_writer_[v] = me;
  };
  if (op.kind == OpKind::kRead || op.kind == OpKind::kWrite)
    see(op.object, op.kind == OpKind::kWrite);
  // Jobs by queue and place, as the log names them (an id counts submits to every queue, which
  // commuting submits to two queues would swap).
  auto job = [&](std::int64_t id) -> std::int64_t {
    return id >= 0 && static_cast<std::size_t>(id) < job_names_.size()
               ? job_names_[static_cast<std::size_t>(id)]
               : -1;
  };
  std::int64_t& object = h[begin + 1];
  std::int64_t& seen = h[begin + 3];
  switch (op.kind) {
    case OpKind::kSubmit: {
      const auto queue = static_cast<std::size_t>(op.object);
      if (queue >= submits_.size()) submits_.resize(queue + 1, 0);
      const auto id = static_cast<std::size_t>(result);
      if (id >= job_names_.size()) job_names_.resize(id + 1, -1);
      job_names_[id] = static_cast<std::int64_t>(queue) << 32 | submits_[queue]++;
      seen = job_names_[id];
      break;
    }
    case OpKind::kTake:
      seen = job(result);
      break;
    case OpKind::kComplete:
    case OpKind::kWaitJob:
      object = job(op.object);
      break;
    default:
      break;
  }
  for (const Touch& x : touches) see(x.var, x.write);
  ++local_[q];
  std::uint64_t hash = history_hash_[q];
  for (std::size_t i = begin; i < h.size(); ++i)
    hash = (hash ^ static_cast<std::uint64_t>(h[i])) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  history_hash_[q] = hash;
  if (groups_[q] < 0) return status_;
  // Its own status, when it was alike to another since its last step: whether it ran gated.
  if (alike_since_[q]) status_.push_back({t, false});
  bool now_alike = false;
  for (ThreadId u = 0; u < static_cast<ThreadId>(threads_); ++u) {
    if (u == t) continue;
    const bool after = alike(u, t);
    if (after != was_alike_[static_cast<std::size_t>(u)])
      status_.push_back({u, true});  // u's status changed: gated or free again
    if (after) {
      now_alike = true;
      alike_since_[static_cast<std::size_t>(u)] = 1;
    }
  }
  alike_since_[q] = now_alike ? 1 : 0;
  return status_;
}

bool Symmetry::wakes(ThreadId sleeper, std::span<const Access> step) const {
  return active_ && std::any_of(step.begin(), step.end(), [&](const Access& a) {
           return a.kind == AccessKind::kStatusWrite && a.object == sleeper;
         });
}

std::span<const ThreadId> Symmetry::ungated(const Decision& d) {
  if (!active_) return d.enabled;
  ungated_.clear();
  gated_.clear();
  const FootprintView& footprints = *d.exec->footprints();  // dpor checked it records them
  for (ThreadId j : d.enabled) {
    bool gate = false;
    for (ThreadId i : d.enabled) {
      if (i >= j) break;
      const Op* a = footprints.pending_op(i);
      const Op* b = footprints.pending_op(j);
      if (alike(i, j) && a->kind == b->kind && a->object == b->object && a->arg == b->arg) {
        gate = true;
        break;
      }
    }
    (gate ? gated_ : ungated_).push_back(j);
  }
  return ungated_;
}

}  // namespace racelab::sched::dpor

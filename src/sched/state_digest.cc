// Execution's state digest (state.h): what the states strategy compares.
#include <algorithm>
#include <numeric>

#include "sched/execution.h"

namespace racelab::sched {

// The renaming of one digest: alike threads sorted by what they have seen.
class Execution::Names final : public StateNames {
 public:
  Names(const Execution& exec, std::vector<ThreadId> canonical)
      : exec_(exec), canonical_(std::move(canonical)) {}
  std::uint64_t thread(ThreadId t) const override {
    return t == kNoThread ? ~0ULL : static_cast<std::uint64_t>(canonical_[t]);
  }
  std::uint64_t job(int job) const override { return exec_.job_name(job, kNoThread, this); }

 private:
  const Execution& exec_;
  std::vector<ThreadId> canonical_;  // thread id -> its canonical number
};

void Execution::observe(ThreadId id, const Op& op) {
  Thread& t = threads_[id];
  Thread::Seen seen{0, op, t.result, 0};
  if (op.kind != OpKind::kSubmit && op.kind != OpKind::kTake) seen.result = 0;
  if (op.kind == OpKind::kRead || op.kind == OpKind::kWrite)
    seen.value = state_source_->var_digest(op.object, id);
  t.seen.push_back(seen);
}

void Execution::forget_past(std::int64_t label) {
  if (state_source_ == nullptr || current_ == kNoThread) return;
  Thread& t = threads_[current_];
  t.seen.clear();
  t.seen.push_back({2, Op{}, 0, static_cast<std::uint64_t>(label)});
}

// Job `job` as a digest names it: by its submitter's canonical number and its place among that
// thread's submits. Without names (sorting alike threads, before the renaming is chosen), only
// whether `self` submitted it.
std::uint64_t Execution::job_name(int job, ThreadId self, const Names* names) const {
  if (job < 0) return 0x6a6f62ULL;  // a take from a closed, drained queue
  const Job& j = jobs_[job];
  const std::uint64_t who =
      names != nullptr ? names->thread(j.submitter) + 2 : (j.submitter == self ? 1 : 0);
  return state_mix(state_mix(who, j.seq), static_cast<std::uint64_t>(j.label + 1));
}

std::uint64_t Execution::thread_digest(ThreadId id, const Names* names) const {
  const Thread& t = threads_[id];
  const auto job_op = [](OpKind k) { return k == OpKind::kComplete || k == OpKind::kWaitJob; };
  const auto op_digest = [&](std::uint64_t h, const Op& op) {
    h = state_mix(h, static_cast<std::uint64_t>(op.kind));
    h = state_mix(h, job_op(op.kind) ? job_name(op.object, id, names)
                                     : static_cast<std::uint64_t>(op.object));
    return state_mix(h, static_cast<std::uint64_t>(op.arg));
  };
  std::uint64_t h = state_mix(t.symmetry + 7, (t.started ? 1 : 0) | (t.finished ? 2 : 0));
  if (t.finished) return h;  // what a finished thread saw can no longer matter
  h = op_digest(h, t.pending);
  for (const Thread::Seen& s : t.seen) {
    h = op_digest(state_mix(h, s.what), s.op);
    const bool job_result =
        s.what == 0 && (s.op.kind == OpKind::kSubmit || s.op.kind == OpKind::kTake);
    h = state_mix(h, job_result ? job_name(static_cast<int>(s.result), id, names) : 0);
    h = state_mix(h, s.value);
  }
  return h;
}

std::optional<std::uint64_t> Execution::state_digest() const {
  if (state_source_ == nullptr || track_races_) return std::nullopt;
  const auto n = static_cast<ThreadId>(threads_.size());
  // Alike threads: each group's members, sorted by what they have seen, take the group's ids in
  // ascending order. Ties are threads in the same local state; any order of them is a renaming.
  std::vector<ThreadId> canonical(threads_.size());
  std::iota(canonical.begin(), canonical.end(), 0);
  std::vector<std::uint64_t> key(threads_.size());
  for (ThreadId t = 0; t < n; ++t) {
    if (threads_[t].symmetry >= 0) key[t] = thread_digest(t, nullptr);
  }
  std::vector<bool> done(threads_.size(), false);
  for (ThreadId t = 0; t < n; ++t) {
    if (done[t] || threads_[t].symmetry < 0) continue;
    std::vector<ThreadId> members;
    for (ThreadId u = t; u < n; ++u) {
      if (threads_[u].symmetry == threads_[t].symmetry) members.push_back(u);
    }
    std::vector<ThreadId> order = members;
    std::stable_sort(order.begin(), order.end(),
                     [&](ThreadId a, ThreadId b) { return key[a] < key[b]; });
    for (std::size_t r = 0; r < members.size(); ++r) {
      canonical[order[r]] = members[r];
      done[members[r]] = true;
    }
  }
  const Names names(*this, canonical);
  std::vector<ThreadId> by_slot(threads_.size());
  for (ThreadId t = 0; t < n; ++t) by_slot[canonical[t]] = t;
  std::uint64_t h = state_mix(0x7374617465ULL, threads_.size());
  for (ThreadId slot = 0; slot < n; ++slot) h = state_mix(h, thread_digest(by_slot[slot], &names));
  for (const Mutex& m : mutexes_) h = state_mix(state_mix(h, names.thread(m.owner)), m.depth);
  for (const Event& e : events_) h = state_mix(h, e.set ? 1 : 0);
  for (const Queue& q : queues_) {
    h = state_mix(h, q.closed ? 1 : 0);
    for (int job : q.waiting) h = state_mix(h, job_name(job, kNoThread, &names));
    h = state_mix(h, 0x2f);
  }
  // Jobs in any order: their ids follow the order of submits, which the renaming ignores.
  std::uint64_t jobs = 0;
  for (int j = 0; j < static_cast<int>(jobs_.size()); ++j) {
    const Job& job = jobs_[static_cast<std::size_t>(j)];
    jobs += state_mix(state_mix(job_name(j, kNoThread, &names), names.thread(job.taken_by)),
                      job.done ? 1 : 0);
  }
  h = state_mix(h, jobs);
  return state_mix(h, state_source_->shared_digest(names));
}

}  // namespace racelab::sched

// Execution's state digest (state.h): what the states strategy compares.
#include <algorithm>
#include <numeric>

#include "sched/execution.h"
#include "util/check.h"

namespace racelab::sched {

// The renaming of one digest: parts sorted by their state, alike threads by what they have seen.
class Execution::Names final : public StateNames {
 public:
  Names(const Execution& exec, std::vector<ThreadId> canonical, std::vector<int> rank)
      : exec_(exec), canonical_(std::move(canonical)), rank_(std::move(rank)) {}
  std::uint64_t thread(ThreadId t) const override {
    return t == kNoThread ? ~0ULL : static_cast<std::uint64_t>(canonical_[t]);
  }
  std::uint64_t job(int job) const override { return exec_.job_name(job, kNoThread, this); }
  std::uint64_t part(int p) const override {
    const bool renamed = p >= 0 && static_cast<std::size_t>(p) < rank_.size();
    return static_cast<std::uint64_t>(renamed ? rank_[static_cast<std::size_t>(p)] : p);
  }

 private:
  const Execution& exec_;
  std::vector<ThreadId> canonical_;  // thread id -> its canonical number
  std::vector<int> rank_;            // part -> its place among the sorted parts
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

void Execution::join_part(PartKind kind, int id) {
  if (current_part_ < 0) return;  // a lookup past the end of places_ means "no part"
  auto& places = places_[kind];
  places.resize(static_cast<std::size_t>(id) + 1);
  while (parts_.size() <= static_cast<std::size_t>(current_part_)) {
    if (spare_parts_.empty()) {  // member lists a reset kept (emptied) first
      parts_.emplace_back();
    } else {
      parts_.push_back(std::move(spare_parts_.back()));
      spare_parts_.pop_back();
    }
  }
  auto& members = parts_[static_cast<std::size_t>(current_part_)][kind];
  places[static_cast<std::size_t>(id)] = {current_part_, static_cast<int>(members.size())};
  members.push_back(id);
}

Execution::PartPlace Execution::place(PartKind kind, int id) const {
  const auto& places = places_[kind];
  return id >= 0 && static_cast<std::size_t>(id) < places.size()
             ? places[static_cast<std::size_t>(id)]
             : PartPlace{};
}

// Parts are alike only if each made the same threads and objects, alike threads at the same
// places: a subject that breaks this has a bug, which no renaming could make sound.
void Execution::check_parts() const {
  if (parts_checked_) return;
  parts_checked_ = true;
  static constexpr const char* kWhat[] = {"threads", "mutexes", "events", "queues", "variables"};
  const auto alike = [&](ThreadId a, ThreadId b) {
    return threads_[a].symmetry >= 0 && threads_[a].symmetry == threads_[b].symmetry;
  };
  for (std::size_t p = 1; p < parts_.size(); ++p) {
    for (int k = 0; k < kPartKinds; ++k) {
      RACELAB_CHECK(parts_[p][k].size() == parts_[0][k].size(),
                    "part {} has {} {} where part 0 has {}: alike parts make the same threads and "
                    "objects, in the same order (Context::part)",
                    p, parts_[p][k].size(), kWhat[k], parts_[0][k].size());
    }
    const auto& first = parts_[0][kPartThread];
    const auto& other = parts_[p][kPartThread];
    for (std::size_t i = 0; i < first.size(); ++i) {
      for (std::size_t j = 0; j < first.size(); ++j) {
        RACELAB_CHECK(alike(first[i], first[j]) == alike(other[i], other[j]),
                      "part {}'s threads {} and {} are {} alike where part 0's are {}", p,
                      threads_[other[i]].name, threads_[other[j]].name,
                      alike(other[i], other[j]) ? "" : "not",
                      alike(first[i], first[j]) ? "" : "not");
      }
    }
  }
}

// An operation's object as a digest names it. With names: a part's object by the part's place
// and its own place in the part. Without (sorting, before the renaming is chosen): by whether
// it is in `self`'s part and its place there. Objects outside parts by their id.
std::uint64_t Execution::object_name(const Op& op, ThreadId self, const Names* names) const {
  PartKind kind = kPartThread;
  switch (op.kind) {
    case OpKind::kLock:
    case OpKind::kUnlock:
    case OpKind::kTryLock:
      kind = kPartMutex;
      break;
    case OpKind::kEventSet:
    case OpKind::kEventWait:
      kind = kPartEvent;
      break;
    case OpKind::kSubmit:
    case OpKind::kTake:
    case OpKind::kClose:
      kind = kPartQueue;
      break;
    case OpKind::kRead:
    case OpKind::kWrite:
      kind = kPartVar;
      break;
    case OpKind::kComplete:
    case OpKind::kWaitJob:
      return job_name(op.object, self, names);
    case OpKind::kJoin:
      if (names != nullptr) return names->thread(op.object);
      break;
    default:
      return static_cast<std::uint64_t>(op.object);  // a label, or nothing
  }
  const PartPlace at = place(kind, op.object);
  if (at.part < 0) return static_cast<std::uint64_t>(op.object);
  const auto index = static_cast<std::uint64_t>(at.index);
  if (names != nullptr) return state_mix(state_mix(0x7061ULL + kind, names->part(at.part)), index);
  const bool own = self != kNoThread && place(kPartThread, self).part == at.part;
  return state_mix(state_mix(0x6f776eULL + kind, own ? 1 : 2), index);
}

// Job `job` as a digest names it: by its submitter's canonical number and its place among that
// thread's submits. Without names (sorting, before the renaming is chosen), only whether `self`
// submitted it.
std::uint64_t Execution::job_name(int job, ThreadId self, const Names* names) const {
  if (job < 0) return 0x6a6f62ULL;  // a take from a closed, drained queue
  const Job& j = jobs_[job];
  const std::uint64_t who =
      names != nullptr ? names->thread(j.submitter) + 2 : (j.submitter == self ? 1 : 0);
  return state_mix(state_mix(who, j.seq), static_cast<std::uint64_t>(j.label + 1));
}

std::uint64_t Execution::thread_digest(ThreadId id, const Names* names) const {
  const Thread& t = threads_[id];
  const auto op_digest = [&](std::uint64_t h, const Op& op) {
    h = state_mix(h, static_cast<std::uint64_t>(op.kind));
    h = state_mix(h, object_name(op, id, names));
    return state_mix(h, static_cast<std::uint64_t>(op.arg));
  };
  // A part's threads have a group number of their part's; their place in it says what they are.
  const bool in_part = place(kPartThread, id).part >= 0;
  const auto group = static_cast<std::uint64_t>(in_part ? (t.symmetry >= 0 ? -2 : -3) : t.symmetry);
  std::uint64_t h = state_mix(group + 7, (t.started ? 1 : 0) | (t.finished ? 2 : 0));
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

// Part `p`'s own state, naming nothing outside it: its threads (in `layout`, alike ones sorted)
// by what they have seen, its objects with owners and submitters told apart only as the part's
// own or not, and the subject's part_digest.
std::uint64_t Execution::part_key(int p, const std::vector<ThreadId>& layout,
                                  const std::vector<std::uint64_t>& key) const {
  const auto& members = parts_[static_cast<std::size_t>(p)];
  const auto own = [&](ThreadId t) { return t != kNoThread && place(kPartThread, t).part == p; };
  const auto who = [&](ThreadId t) -> std::uint64_t {
    return own(t) ? state_mix(2, key[t]) : (t == kNoThread ? 0 : 1);
  };
  std::uint64_t h = 0x70617274ULL;
  for (ThreadId t : layout) h = state_mix(h, key[t]);
  for (int m : members[kPartMutex])
    h = state_mix(state_mix(h, who(mutexes_[m].owner)), mutexes_[m].depth);
  for (int e : members[kPartEvent]) h = state_mix(h, events_[e].set ? 1 : 0);
  for (int q : members[kPartQueue]) {
    h = state_mix(h, queues_[q].closed ? 1 : 0);
    for (int job : queues_[q].waiting) {
      const Job& j = jobs_[job];
      h = state_mix(state_mix(state_mix(h, who(j.submitter)), j.seq), j.label + 1);
    }
  }
  return state_mix(h, state_source_->part_digest(p));
}

std::optional<std::uint64_t> Execution::state_digest() const { return digest_state(nullptr); }

std::optional<std::uint64_t> Execution::named_state_digest(std::vector<ThreadId>& canonical) const {
  return digest_state(&canonical);
}

// A thread's role: outside parts, its own id, or its group for alike threads; in a part, its place
// there, alike threads of one group at the place of the group's first. An object's: its id
// outside parts, its kind and place in a part.
std::uint64_t Execution::role(Role what, std::int32_t id) const {
  static constexpr PartKind kKind[] = {kPartThread, kPartMutex, kPartEvent, kPartQueue, kPartVar};
  const auto kind = static_cast<std::uint64_t>(what);
  const PartPlace at = place(kKind[kind], id);
  const auto tag = [&](std::uint64_t form, std::uint64_t value) {
    return kind << 60 | form << 56 | value;
  };
  if (what == Role::kThread && id >= 0 && static_cast<std::size_t>(id) < threads_.size()) {
    const int group = threads_[static_cast<std::size_t>(id)].symmetry;
    if (at.part < 0) {
      return group >= 0 ? tag(1, static_cast<std::uint64_t>(group))
                        : tag(0, static_cast<std::uint64_t>(id));
    }
    const auto& layout = parts_[static_cast<std::size_t>(at.part)][kPartThread];
    int first = at.index;
    if (group >= 0) {
      for (int i = 0; i < at.index; ++i) {
        if (threads_[static_cast<std::size_t>(layout[static_cast<std::size_t>(i)])].symmetry ==
            group) {
          first = i;
          break;
        }
      }
    }
    return tag(2, static_cast<std::uint64_t>(first));
  }
  return at.part < 0 ? tag(0, static_cast<std::uint64_t>(id))
                     : tag(2, static_cast<std::uint64_t>(at.index));
}

std::optional<std::uint64_t> Execution::digest_state(std::vector<ThreadId>* canonical_out) const {
  if (state_source_ == nullptr || track_races_) return std::nullopt;
  check_parts();
  const auto n = static_cast<ThreadId>(threads_.size());
  std::vector<std::uint64_t> key(threads_.size());
  for (ThreadId t = 0; t < n; ++t) {
    if (threads_[t].symmetry >= 0 || place(kPartThread, t).part >= 0)
      key[t] = thread_digest(t, nullptr);
  }
  // Threads in places (a part's, or those outside parts by id): alike threads exchange places,
  // sorted by what they have seen. Ties are threads in the same local state; any order of them
  // is a renaming.
  const auto sorted = [&](const std::vector<ThreadId>& places) {
    std::vector<ThreadId> out = places;
    std::vector<bool> done(places.size(), false);
    for (std::size_t i = 0; i < places.size(); ++i) {
      if (done[i] || threads_[places[i]].symmetry < 0) continue;
      std::vector<std::size_t> at;
      for (std::size_t j = i; j < places.size(); ++j) {
        if (threads_[places[j]].symmetry == threads_[places[i]].symmetry) at.push_back(j);
      }
      std::vector<ThreadId> members;
      for (std::size_t j : at) members.push_back(places[j]);
      std::stable_sort(members.begin(), members.end(),
                       [&](ThreadId a, ThreadId b) { return key[a] < key[b]; });
      for (std::size_t r = 0; r < at.size(); ++r) {
        out[at[r]] = members[r];
        done[at[r]] = true;
      }
    }
    return out;
  };
  std::vector<ThreadId> canonical(threads_.size());
  std::vector<ThreadId> outside;
  for (ThreadId t = 0; t < n; ++t) {
    if (place(kPartThread, t).part < 0) outside.push_back(t);
  }
  const std::vector<ThreadId> outside_layout = sorted(outside);
  for (std::size_t i = 0; i < outside.size(); ++i) canonical[outside_layout[i]] = outside[i];
  // Parts sorted by their own state; a part's threads then take the places of the threads of
  // the part whose number is its rank.
  const auto parts = static_cast<int>(parts_.size());
  std::vector<std::vector<ThreadId>> layout(parts_.size());
  std::vector<std::uint64_t> part_keys(parts_.size());
  std::vector<int> by_rank(parts_.size());
  for (int p = 0; p < parts; ++p) {
    layout[static_cast<std::size_t>(p)] = sorted(parts_[static_cast<std::size_t>(p)][kPartThread]);
    part_keys[static_cast<std::size_t>(p)] = part_key(p, layout[static_cast<std::size_t>(p)], key);
  }
  std::iota(by_rank.begin(), by_rank.end(), 0);
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](int a, int b) {
    return part_keys[static_cast<std::size_t>(a)] < part_keys[static_cast<std::size_t>(b)];
  });
  std::vector<int> rank(parts_.size());
  for (int r = 0; r < parts; ++r)
    rank[static_cast<std::size_t>(by_rank[static_cast<std::size_t>(r)])] = r;
  for (int p = 0; p < parts; ++p) {
    const auto& into =
        parts_[static_cast<std::size_t>(rank[static_cast<std::size_t>(p)])][kPartThread];
    const auto& from = layout[static_cast<std::size_t>(p)];
    for (std::size_t i = 0; i < from.size(); ++i) canonical[from[i]] = into[i];
  }
  if (canonical_out != nullptr) *canonical_out = canonical;
  const Names names(*this, canonical, rank);
  std::vector<ThreadId> by_slot(threads_.size());
  for (ThreadId t = 0; t < n; ++t) by_slot[canonical[t]] = t;
  std::uint64_t h = state_mix(0x7374617465ULL, threads_.size());
  for (ThreadId slot = 0; slot < n; ++slot) h = state_mix(h, thread_digest(by_slot[slot], &names));
  // Objects outside parts by id, then each part's in the order of the parts' ranks.
  const auto each = [&](PartKind kind, std::size_t count, auto&& visit) {
    for (std::size_t id = 0; id < count; ++id) {
      if (place(kind, static_cast<int>(id)).part < 0) visit(static_cast<int>(id));
    }
    for (int p : by_rank) {
      for (int id : parts_[static_cast<std::size_t>(p)][kind]) visit(id);
    }
  };
  each(kPartMutex, mutexes_.size(), [&](int m) {
    h = state_mix(state_mix(h, names.thread(mutexes_[m].owner)), mutexes_[m].depth);
  });
  each(kPartEvent, events_.size(), [&](int e) { h = state_mix(h, events_[e].set ? 1 : 0); });
  each(kPartQueue, queues_.size(), [&](int q) {
    h = state_mix(h, queues_[q].closed ? 1 : 0);
    for (int job : queues_[q].waiting) h = state_mix(h, job_name(job, kNoThread, &names));
    h = state_mix(h, 0x2f);
  });
  // Jobs in any order: their ids follow the order of submits, which the renaming ignores. A
  // job that is done is state only while a running thread may still wait for it, that is while
  // one that has not forgotten its past has seen it (its submitter, say, before wait_job):
  // who served it, or whether a finished warmup's jobs were served in this order or that, is
  // history.
  std::vector<bool> seen(jobs_.size(), false);
  for (const Thread& t : threads_) {
    if (t.finished) continue;
    const auto mark = [&](int job) {
      if (job >= 0 && static_cast<std::size_t>(job) < seen.size())
        seen[static_cast<std::size_t>(job)] = true;
    };
    if (t.pending.kind == OpKind::kWaitJob || t.pending.kind == OpKind::kComplete)
      mark(t.pending.object);
    for (const Thread::Seen& s : t.seen) {
      if (s.op.kind == OpKind::kSubmit || s.op.kind == OpKind::kTake)
        mark(static_cast<int>(s.result));
      if (s.op.kind == OpKind::kWaitJob || s.op.kind == OpKind::kComplete) mark(s.op.object);
    }
  }
  std::uint64_t jobs = 0;
  for (int j = 0; j < static_cast<int>(jobs_.size()); ++j) {
    const Job& job = jobs_[static_cast<std::size_t>(j)];
    if (!job.done) {
      jobs += state_mix(job_name(j, kNoThread, &names), names.thread(job.taken_by));
    } else if (seen[static_cast<std::size_t>(j)]) {
      jobs += state_mix(job_name(j, kNoThread, &names), 0x646f6e65ULL);
    }
  }
  h = state_mix(h, jobs);
  return state_mix(h, state_source_->shared_digest(names));
}

}  // namespace racelab::sched

#include "sched/strategies/dpor_cache.h"

#include <iterator>

#include "util/check.h"

namespace racelab::sched::dpor {

void merge(Summary& into, const Summary& from) {
  if (from.empty()) return;
  if (into.empty()) {
    into = from;
    return;
  }
  Summary out;
  out.reserve(into.size() + from.size());
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(out));
  into.swap(out);
}

void Roles::reset(const StateView& view, std::size_t threads) {
  if (thread_roles_.size() == threads) return;  // the same threads every execution
  RACELAB_CHECK(thread_roles_.empty(), "dpor: {} threads where the first execution had {}", threads,
                thread_roles_.size());
  for (std::size_t t = 0; t < threads; ++t) {
    const std::uint64_t role = view.role(StateView::Role::kThread, static_cast<std::int32_t>(t));
    const auto [it, fresh] =
        thread_ids_.emplace(role, static_cast<std::uint32_t>(thread_ids_.size()));
    if (fresh) threads_of_.emplace_back();
    thread_roles_.push_back(it->second);
    threads_of_[it->second].push_back(static_cast<ThreadId>(t));
  }
}

std::uint32_t Roles::object_key(const StateView& view, const Access& a) {
  using R = StateView::Role;
  if (a.kind == AccessKind::kFatal) return kFatalKey;
  const ObjectClass cls = object_class(a.kind);
  RACELAB_CHECK(cls != ObjectClass::kStatus, "dpor: symmetry statuses in a stateful search");
  // The role of the object the access names. A job is named by its queue and place; the place
  // depends on the path (how many jobs went before), so a job's role is its queue's.
  static constexpr R kRole[] = {R::kMutex, R::kQueue, R::kQueue, R::kEvent, R::kVar};
  const std::int32_t id = cls == ObjectClass::kJob ? job_queue(a.object) : a.object;
  const auto [it, fresh] =
      keys_.emplace(std::pair{static_cast<int>(cls), view.role(kRole[static_cast<int>(cls)], id)},
                    static_cast<std::uint32_t>(keys_.size()));
  RACELAB_CHECK(it->second < kFatalKey, "dpor: too many objects for the state cache");
  return it->second;
}

// Called for every new step: the entries are usually there already, so look before inserting.
void add_event(Summary& into, Roles& roles, const StateView& view, ThreadId thread,
               std::span<const Access> footprint) {
  const std::uint64_t role = roles.thread_role(thread);
  RACELAB_CHECK(role < (1U << 24), "dpor: too many thread roles for the state cache");
  for (const Access& a : footprint) {
    const std::uint64_t key = roles.object_key(view, a);
    const std::uint64_t entry = key << 32 | static_cast<std::uint64_t>(a.kind) << 24 | role;
    const auto at = std::lower_bound(into.begin(), into.end(), entry);
    if (at == into.end() || *at != entry) into.insert(at, entry);
  }
}

std::size_t StateCache::VectorHash::operator()(const Summary& s) const {
  std::uint64_t h = s.size();
  for (std::uint64_t v : s) h = (h ^ v) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  return static_cast<std::size_t>(h);
}

void StateCache::store(std::uint64_t digest, std::vector<ThreadId> sleep, const Summary& summary) {
  const auto [it, fresh] =
      summary_ids_.emplace(summary, static_cast<std::uint32_t>(summaries_.size()));
  if (fresh) summaries_.push_back(&it->first);
  std::vector<Visit>& visits = visits_[digest];
  // A visit from a smaller sleep set makes those from larger ones useless.
  std::erase_if(visits, [&](const Visit& v) {
    return std::includes(v.sleep.begin(), v.sleep.end(), sleep.begin(), sleep.end());
  });
  visits.push_back({std::move(sleep), it->second});
}

const Summary* StateCache::find(std::uint64_t digest, const std::vector<ThreadId>& sleep) const {
  const auto it = visits_.find(digest);
  if (it == visits_.end()) return nullptr;
  for (const Visit& v : it->second) {
    if (std::includes(sleep.begin(), sleep.end(), v.sleep.begin(), v.sleep.end()))
      return summaries_[v.summary];
  }
  return nullptr;
}

}  // namespace racelab::sched::dpor

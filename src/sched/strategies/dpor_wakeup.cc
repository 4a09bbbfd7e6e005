#include "sched/strategies/dpor_wakeup.h"

#include <algorithm>
#include <utility>

namespace racelab::sched::dpor {

bool predict_reversed(const EventLog& log, const Race& race, const Op& op,
                      const StepOutlook& outlook, const Sequence& before,
                      std::vector<Access>& out) {
  out.clear();
  const auto fp = log.footprint(race.later);
  for (const Access& a : fp) {
    // A symmetry status read or written depends on what came before (dpor_symmetry.h); a take
    // that found its queue closed takes a job once a submit comes first.
    if (object_class(a.kind) == ObjectClass::kStatus || a.kind == AccessKind::kTakeClosed)
      return false;
  }
  for (const Access& a : fp) {
    if (a.kind != AccessKind::kJobCreate) {
      out.push_back(a);
      continue;
    }
    // A submit's job is named by its place among its queue's submits, which the reversal may
    // change: count them in E up to `earlier` and in the sequence before it.
    std::int32_t place = 0;
    const Access submit{AccessKind::kSubmit, op.object};
    auto count = [&](std::span<const Access> f) {
      for (const Access& b : f) place += b.kind == submit.kind && b.object == submit.object;
    };
    for (std::size_t l = 0; l < race.earlier; ++l) count(log.footprint(l));
    for (const SequenceEvent& x : before) count(x.footprint);
    out.push_back({AccessKind::kJobCreate, job_name_of(op.object, place)});
  }
  for (const Touch& t : outlook.may_touch)
    out.push_back({t.write ? AccessKind::kWrite : AccessKind::kRead, t.var});
  const bool fatal = std::any_of(out.begin(), out.end(),
                                 [](const Access& a) { return a.kind == AccessKind::kFatal; });
  if (outlook.may_fail && !fatal) out.push_back({AccessKind::kFatal, -1});
  return true;
}

bool covers(std::span<const Access> predicted, const Access& a) {
  return std::any_of(predicted.begin(), predicted.end(), [&](const Access& p) {
    if (p.object != a.object) return false;
    if (p.kind == a.kind) return true;
    return a.kind == AccessKind::kRead && p.kind == AccessKind::kWrite;  // a write conflicts more
  });
}

Sequence reversal(const EventLog& log, const Race& race, const Op* later_op,
                  const StepOutlook* outlook) {
  Sequence v;
  const auto et = static_cast<std::size_t>(log.thread(race.earlier));
  const std::uint32_t elocal = log.clock(race.earlier)[et] - 1;
  // Every event of the whole execution after `earlier` that does not happen after it, those after
  // `later` too (JACM 2017, section 6): the sequence then ends where the execution did, and the
  // threads asleep there are in it or commute with it.
  for (std::size_t l = race.earlier + 1; l < log.size(); ++l) {
    if (l == race.later) continue;
    const auto c = log.clock(l);
    if (c[et] > elocal) continue;  // happens after `earlier`: not in notdep
    const ThreadId t = log.thread(l);
    const auto fp = log.footprint(l);
    v.push_back({t,
                 c[static_cast<std::size_t>(t)] - 1,
                 true,
                 {fp.begin(), fp.end()},
                 Clock(c.begin(), c.end())});
  }
  // The reversed event: its operation is the same, but what its local code touches may differ
  // once it runs before `earlier` (it sees another value): its footprint counts as unknown, unless
  // the subject vouches that touches follow from operations, up to what each step declares it may
  // touch or fail with elsewhere (`outlook`): then it is predicted (predict_reversed).
  const auto lt = static_cast<std::size_t>(race.later_thread);
  SequenceEvent last{
      race.later_thread, race.reversed_clock[lt] - 1, false, {}, race.reversed_clock};
  if (race.later != Race::kPending) {
    // What the reversed event waits for in E.v: race.reversed_clock holds its own thread's past
    // and its sources in E that stay, but a source that happens after `earlier` is left out,
    // and with it the events it ordered the reversed one after: an access it hid (t0 writes x,
    // then t2 after `earlier`, then the reversed event: without t2 it follows t0's write
    // directly). Every event of the sequence that conflicts with the reversed event's accesses
    // in E happens before it, or, where its footprint is predicted, with the predicted accesses
    // (a superset of what it will touch: it may touch more than it did in E).
    if (outlook != nullptr && later_op != nullptr)
      last.known = predict_reversed(log, race, *later_op, *outlook, v, last.footprint);
    if (!last.known) {
      const auto was = log.footprint(race.later);
      last.guess.assign(was.begin(), was.end());
    }
    const auto fp =
        last.known ? std::span<const Access>(last.footprint) : log.footprint(race.later);
    for (const SequenceEvent& x : v) {
      if (!dependent(x.footprint, fp)) continue;
      for (std::size_t u = 0; u < last.clock.size(); ++u)
        last.clock[u] = std::max(last.clock[u], x.clock[u]);
    }
  } else {
    // A pending operation (a thread blocked at the end, or stopped by a fatal step): its local
    // code never ran, its footprint is unknown, dependent with everything, so it happens after
    // every event of the sequence. With only its own past in its clock it counted as an initial
    // of the sequence: a tree branch running t1's lock first (t1 blocked at the end on the mutex
    // t0 took) took the sequence for covered, and the class where t0 takes the mutex after the
    // writes that t1's step conflicts with was never explored (random program 833 of the
    // two-worker hunt; regression case in test_dpor). A reversed step that ran but cannot be
    // predicted (a symmetry status) keeps the order its accesses in E give (above): ordered after
    // everything, indexer(13) ran 49 sleep-set blocked executions.
    for (const SequenceEvent& x : v) {
      for (std::size_t u = 0; u < last.clock.size(); ++u)
        last.clock[u] = std::max(last.clock[u], x.clock[u]);
    }
  }
  v.push_back(std::move(last));
  return v;
}

bool weak_initial(const Sequence& v, ThreadId p, std::span<const Access> footprint, bool known,
                  std::optional<std::size_t>& at) {
  at.reset();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].thread != p) continue;
    // p's first event in v: an initial when nothing before it in v happens before it.
    for (std::size_t j = 0; j < i; ++j) {
      if (v[i].clock[static_cast<std::size_t>(v[j].thread)] > v[j].local) return false;
    }
    at = i;
    return true;
  }
  // p has no event in v: a weak initial when its next event commutes with all of v.
  if (!known) return false;
  for (const SequenceEvent& e : v) {
    if (!e.known || dependent(footprint, e.footprint)) return false;
  }
  return true;
}

namespace {

// The rule a sleeper's own footprint gives, over events in order (SequenceEvents or WakeupNodes,
// `of` reaching each): thread p's first event is reached with nothing before it that conflicts
// with `footprint` (nor anything unknown), or p has none and nothing conflicts. Within a
// sequence, an event's happens-before predecessors all lead to one it depends on directly, so the
// direct check suffices.
template <typename Events, typename Of>
bool sleeper_leads(const Events& events, ThreadId p, std::span<const Access> footprint, Of of) {
  for (const auto& x : events) {
    const auto& e = of(x);
    if (e.thread == p) return true;
    if (!e.known || dependent(footprint, e.footprint)) return false;
  }
  return true;
}

}  // namespace

bool sleeper_initial(const Sequence& v, ThreadId p, std::span<const Access> footprint) {
  std::optional<std::size_t> at;
  return weak_initial(v, p, footprint, true, at) ||
         sleeper_leads(v, p, footprint,
                       [](const SequenceEvent& e) -> const SequenceEvent& { return e; });
}

bool sleeper_starts(const EventLog& log, const Race& race, ThreadId p,
                    std::span<const Access> footprint) {
  const auto et = static_cast<std::size_t>(log.thread(race.earlier));
  const std::uint32_t elocal = log.clock(race.earlier)[et] - 1;
  for (std::size_t l = race.earlier + 1; l < log.size(); ++l) {
    if (l == race.later || log.clock(l)[et] > elocal) continue;  // not in notdep
    if (log.thread(l) == p) return true;
    if (dependent(footprint, log.footprint(l))) return false;
  }
  return race.later_thread == p;
}

namespace {

std::vector<WakeupNode> chain(Sequence& v, std::size_t from) {
  std::vector<WakeupNode> out;
  if (from >= v.size()) return out;
  WakeupNode node;
  node.thread = v[from].thread;
  node.known = v[from].known;
  node.footprint = std::move(v[from].footprint);
  node.guess = std::move(v[from].guess);
  node.children = chain(v, from + 1);
  out.push_back(std::move(node));
  return out;
}

}  // namespace

bool WakeupTree::insert(Sequence v) {
  std::vector<WakeupNode>* level = &children_;
  for (;;) {
    if (v.empty()) return false;  // a sequence of the tree covers v
    // A leaf (below the root) with v left over: the rest of v goes below it, and the leaf's
    // execution runs it. JACM 2017 stops here (the leaf's execution covers v: the search from
    // the leaf reverses what differs), which holds where every footprint in the tree is exact.
    // A predicted footprint over-approximates (a check that may fail, predicted fatal, did not
    // fail): the tree then placed a sequence after a sibling it took as dependent, that sibling
    // sleeps when the sequence runs and commutes with it, and the search from the leaf skips the
    // race that needs the sleeper's branch, which in turn left it to this leaf: a class lost
    // (2 GPUs x 2 drafters with the model vouching: 968,256 of 972,992). Extending the leaf costs
    // no execution: the leaf's execution runs v instead of an arbitrary continuation.
    WakeupNode* next = nullptr;
    for (WakeupNode& child : *level) {
      std::optional<std::size_t> at;
      if (!weak_initial(v, child.thread, child.footprint, child.known, at)) continue;
      if (at) v.erase(v.begin() + static_cast<std::ptrdiff_t>(*at));
      next = &child;
      break;
    }
    if (next == nullptr) {
      auto rest = chain(v, 0);
      level->push_back(std::move(rest.front()));
      return true;
    }
    level = &next->children;
  }
}

namespace {

bool every_sequence_covered(const WakeupNode& node, std::vector<const WakeupNode*>& path,
                            std::span<const Sleeper> sleepers) {
  path.push_back(&node);
  bool covered = true;
  if (node.children.empty()) {
    covered = std::any_of(sleepers.begin(), sleepers.end(), [&](const Sleeper& s) {
      return sleeper_leads(path, s.thread, s.footprint,
                           [](const WakeupNode* x) -> const WakeupNode& { return *x; });
    });
  } else {
    for (const WakeupNode& child : node.children) {
      if (!every_sequence_covered(child, path, sleepers)) {
        covered = false;
        break;
      }
    }
  }
  path.pop_back();
  return covered;
}

}  // namespace

void WakeupTree::drop_covered(std::span<const Sleeper> sleepers) {
  if (sleepers.empty() || children_.empty()) return;
  std::vector<const WakeupNode*> path;
  std::erase_if(children_, [&](const WakeupNode& child) {
    return every_sequence_covered(child, path, sleepers);
  });
}

void WakeupTree::add_thread(ThreadId t) {
  for (const WakeupNode& child : children_) {
    if (child.thread == t) return;
  }
  WakeupNode node;
  node.thread = t;
  node.known = false;
  children_.push_back(std::move(node));
}

ThreadId WakeupTree::take_first(WakeupTree& below, std::optional<std::vector<Access>>* predicted,
                                std::vector<Access>* guess) {
  WakeupNode first = std::move(children_.front());
  children_.erase(children_.begin());
  below.children_ = std::move(first.children);
  if (guess != nullptr) *guess = first.known ? first.footprint : first.guess;
  if (predicted != nullptr) {
    if (first.known)
      *predicted = std::move(first.footprint);
    else
      predicted->reset();
  }
  return first.thread;
}

}  // namespace racelab::sched::dpor

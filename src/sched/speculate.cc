#include "sched/speculate.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "util/check.h"
#include "util/errors.h"

namespace racelab::sched {

std::vector<ThreadId> Recording::choices() const {
  std::vector<ThreadId> out;
  out.reserve(decisions.size());
  for (const RecordedDecision& d : decisions) out.push_back(d.chosen);
  return out;
}

namespace {

using Json = nlohmann::json;

Json op_json(const std::optional<Op>& op) {
  if (!op) return nullptr;
  return Json::array({static_cast<int>(op->kind), op->object, op->arg});
}
std::optional<Op> op_from(const Json& j) {
  if (j.is_null()) return std::nullopt;
  return Op{static_cast<OpKind>(j.at(0).get<int>()), j.at(1).get<std::int32_t>(),
            j.at(2).get<std::int32_t>()};
}
Json ops_json(const std::vector<std::optional<Op>>& ops) {
  Json out = Json::array();
  for (const auto& op : ops) out.push_back(op_json(op));
  return out;
}
std::vector<std::optional<Op>> ops_from(const Json& j) {
  std::vector<std::optional<Op>> out;
  for (const Json& op : j) out.push_back(op_from(op));
  return out;
}
Json touches_json(const std::vector<Touch>& touches) {
  Json out = Json::array();
  for (const Touch& t : touches)
    out.push_back({t.var, t.write ? 1 : 0, t.awaited ? 1 : 0, static_cast<int>(t.mutex)});
  return out;
}
std::vector<Touch> touches_from(const Json& j) {
  std::vector<Touch> out;
  for (const Json& t : j)
    out.push_back({t.at(0).get<std::int32_t>(), t.at(1).get<int>() != 0, t.at(2).get<int>() != 0,
                   static_cast<TouchMutex>(t.at(3).get<int>())});
  return out;
}

// The recording at one decision (or at its end) as the strategy's views.
class FedView final : public ThreadView, public FootprintView {
 public:
  explicit FedView(const Recording& r) : r_(&r) {}
  // Decision `decision` of `r` (its end: r.decisions.size()).
  void at(const Recording& r, std::size_t decision) {
    r_ = &r;
    at_ = decision;
  }

  std::size_t thread_count() const override {
    return at_ < r_->decisions.size() ? r_->decisions[at_].threads : r_->names.size();
  }
  std::size_t thread_capacity() const override { return r_->capacity; }
  const std::string& thread_name(ThreadId t) const override {
    static const std::string none;
    return t >= 0 && static_cast<std::size_t>(t) < r_->names.size()
               ? r_->names[static_cast<std::size_t>(t)]
               : none;
  }
  bool finished(ThreadId t) const override {
    const auto i = static_cast<std::size_t>(t);
    if (at_ < r_->decisions.size()) return i >= r_->decisions[at_].threads;
    return i >= r_->finished.size() || r_->finished[i] != 0;
  }
  std::string pending_text(ThreadId) const override { return ""; }
  const FootprintView* footprints() const override { return this; }

  const Op* pending_op(ThreadId t) const override {
    const auto i = static_cast<std::size_t>(t);
    const std::vector<std::optional<Op>>& ops =
        at_ < r_->decisions.size() ? r_->decisions[at_].pending : r_->pending_at_end;
    return t >= 0 && i < ops.size() && ops[i] ? &*ops[i] : nullptr;
  }
  std::int64_t step_result(std::uint64_t step) const override {
    return step < r_->steps.size() ? r_->steps[step].result : 0;
  }
  std::span<const Touch> step_touches(std::uint64_t step) const override {
    if (step >= r_->steps.size()) return {};
    return r_->steps[step].touches;
  }
  std::span<const Touch> pending_touches(ThreadId t) const override {
    const auto i = static_cast<std::size_t>(t);
    if (at_ < r_->decisions.size() || t < 0 || i >= r_->pending_touches.size()) return {};
    return r_->pending_touches[i];
  }
  bool ended_by_finding() const override { return r_->ended_by_finding; }
  bool step_limit_reached() const override { return r_->step_limit_reached; }
  bool touches_fixed() const override { return r_->touches_fixed; }
  StepOutlook step_outlook(std::uint64_t step) const override {
    if (step >= r_->steps.size()) return {};
    return {r_->steps[step].may_touch, r_->steps[step].may_fail};
  }
  int symmetry_group(ThreadId t) const override {
    const auto i = static_cast<std::size_t>(t);
    return t >= 0 && i < r_->groups.size() ? r_->groups[i] : -1;
  }

 private:
  const Recording* r_;
  std::size_t at_ = 0;
};

bool starts_with(const std::vector<ThreadId>& all, const std::vector<ThreadId>& prefix) {
  return all.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), all.begin());
}

}  // namespace

std::string recording_text(const Recording& r) {
  Json decisions = Json::array();
  for (const RecordedDecision& d : r.decisions)
    decisions.push_back({d.enabled, d.previous, d.previous_enabled ? 1 : 0, d.threads,
                         ops_json(d.pending), d.chosen});
  Json steps = Json::array();
  for (const RecordedStep& s : r.steps)
    steps.push_back(
        {s.result, touches_json(s.touches), touches_json(s.may_touch), s.may_fail ? 1 : 0});
  Json pending_touches = Json::array();
  for (const auto& t : r.pending_touches) pending_touches.push_back(touches_json(t));
  std::vector<int> finished(r.finished.begin(), r.finished.end());
  return Json{{"capacity", r.capacity},
              {"groups", r.groups},
              {"touches_fixed", r.touches_fixed},
              {"decisions", decisions},
              {"steps", steps},
              {"ended", r.ended},
              {"ended_by_finding", r.ended_by_finding},
              {"step_limit_reached", r.step_limit_reached},
              {"names", r.names},
              {"finished", finished},
              {"pending_at_end", ops_json(r.pending_at_end)},
              {"pending_touches", pending_touches}}
      .dump();
}

Recording recording_from(const std::string& text) {
  try {
    const Json j = Json::parse(text);
    Recording r;
    r.capacity = j.at("capacity").get<std::size_t>();
    r.groups = j.at("groups").get<std::vector<int>>();
    r.touches_fixed = j.at("touches_fixed").get<bool>();
    for (const Json& d : j.at("decisions")) {
      RecordedDecision& x = r.decisions.emplace_back();
      x.enabled = d.at(0).get<std::vector<ThreadId>>();
      x.previous = d.at(1).get<ThreadId>();
      x.previous_enabled = d.at(2).get<int>() != 0;
      x.threads = d.at(3).get<std::size_t>();
      x.pending = ops_from(d.at(4));
      x.chosen = d.at(5).get<ThreadId>();
      if (x.enabled.empty()) throw InputError("a decision with no enabled thread");
    }
    for (const Json& s : j.at("steps"))
      r.steps.push_back({s.at(0).get<std::int64_t>(), touches_from(s.at(1)), touches_from(s.at(2)),
                         s.at(3).get<int>() != 0});
    r.ended = j.at("ended").get<bool>();
    r.ended_by_finding = j.at("ended_by_finding").get<bool>();
    r.step_limit_reached = j.at("step_limit_reached").get<bool>();
    r.names = j.at("names").get<std::vector<std::string>>();
    for (int f : j.at("finished").get<std::vector<int>>()) r.finished.push_back(f != 0 ? 1 : 0);
    r.pending_at_end = ops_from(j.at("pending_at_end"));
    for (const Json& t : j.at("pending_touches")) r.pending_touches.push_back(touches_from(t));
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("not a recorded execution: {}", e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("not a recorded execution: {}", e.what()));
  }
}

bool RecordingStrategy::begin_execution(std::uint64_t index) {
  rec_ = {};
  view_ = nullptr;
  return inner_.begin_execution(index);
}

ThreadId RecordingStrategy::pick(const Decision& d) {
  const ThreadId chosen = inner_.pick(d);
  view_ = d.exec;
  const FootprintView* fp = d.exec->footprints();
  if (rec_.decisions.empty()) {
    rec_.capacity = d.exec->thread_capacity();
    for (std::size_t t = 0; t < rec_.capacity; ++t)
      rec_.groups.push_back(fp != nullptr ? fp->symmetry_group(static_cast<ThreadId>(t)) : -1);
    rec_.touches_fixed = fp != nullptr && fp->touches_fixed();
  }
  RecordedDecision& x = rec_.decisions.emplace_back();
  x.enabled.assign(d.enabled.begin(), d.enabled.end());
  x.previous = d.previous;
  x.previous_enabled = d.previous_enabled;
  x.threads = d.exec->thread_count();
  for (std::size_t t = 0; t < x.threads; ++t) {
    const Op* op = fp != nullptr ? fp->pending_op(static_cast<ThreadId>(t)) : nullptr;
    x.pending.push_back(op != nullptr ? std::optional<Op>(*op) : std::nullopt);
  }
  x.chosen = chosen;
  return chosen;
}

void RecordingStrategy::end_execution() {
  if (view_ != nullptr) {
    const FootprintView* fp = view_->footprints();
    std::size_t executed = 0;
    for (const RecordedDecision& d : rec_.decisions) executed += d.chosen != kNoThread ? 1 : 0;
    for (std::size_t s = 0; s < executed && fp != nullptr; ++s) {
      RecordedStep& step = rec_.steps.emplace_back();
      step.result = fp->step_result(s);
      const auto touches = fp->step_touches(s);
      step.touches.assign(touches.begin(), touches.end());
      if (rec_.touches_fixed) {
        const StepOutlook outlook = fp->step_outlook(s);
        step.may_touch.assign(outlook.may_touch.begin(), outlook.may_touch.end());
        step.may_fail = outlook.may_fail;
      }
    }
    rec_.ended = true;
    rec_.ended_by_finding = fp != nullptr && fp->ended_by_finding();
    rec_.step_limit_reached = fp != nullptr && fp->step_limit_reached();
    for (std::size_t t = 0; t < view_->thread_count(); ++t)
      rec_.names.push_back(view_->thread_name(static_cast<ThreadId>(t)));
    for (std::size_t t = 0; t < rec_.capacity; ++t) {
      const auto id = static_cast<ThreadId>(t);
      const bool finished = view_->finished(id);
      rec_.finished.push_back(finished ? 1 : 0);
      const Op* op = !finished && fp != nullptr ? fp->pending_op(id) : nullptr;
      rec_.pending_at_end.push_back(op != nullptr ? std::optional<Op>(*op) : std::nullopt);
      std::vector<Touch>& touches = rec_.pending_touches.emplace_back();
      if (!finished && fp != nullptr) {
        const auto pending = fp->pending_touches(id);
        touches.assign(pending.begin(), pending.end());
      }
    }
  }
  inner_.end_execution();
  view_ = nullptr;
}

Speculation::Speculation(Factory make) : make_(std::move(make)) {
  Branch root;
  root.root = true;
  made_.emplace_back();
  root.search = make_();
  RACELAB_CHECK(root.search->resumable() != nullptr, "speculation: {} cannot be handed over",
                root.search->describe());
  describe_ = root.search->describe();
  branches_.push_back(std::move(root));
  trie_.emplace_back();
}

bool Speculation::root_needs() const {
  const Branch& root = branches_.front();
  return !exhausted_ && !root.done && !root.waiting;
}

void Speculation::add_to_trie(std::size_t index) {
  const Recording& r = recordings_[index].rec;
  std::size_t node = 0;
  bool new_path = !trie_[node].rep;
  if (!trie_[node].rep) trie_[node].rep = index;
  for (const RecordedDecision& d : r.decisions) {
    auto [it, fresh] = trie_[node].next.try_emplace(d.chosen, trie_.size());
    if (fresh) {
      trie_.emplace_back();
      trie_.back().rep = index;
      new_path = true;
    }
    node = it->second;
  }
  if (!new_path) repeated_.insert(recordings_[index].id);
}

bool Speculation::in_trie(const std::vector<ThreadId>& prefix) const {
  std::size_t node = 0;
  if (!trie_[node].rep) return false;
  for (ThreadId t : prefix) {
    const auto it = trie_[node].next.find(t);
    if (it == trie_[node].next.end()) return false;
    node = it->second;
  }
  return true;
}

// Feeds `strategy` the one recorded execution that makes its choices: at each decision, the
// recordings that made the same choices so far all saw the same (the program is deterministic),
// so the trie of their choices is followed, one recording standing for each of its nodes.
std::optional<std::size_t> Speculation::feed_from_trie(Strategy& strategy, std::uint64_t index) {
  if (!trie_[0].rep) return std::nullopt;
  try {
    if (!strategy.begin_execution(index)) return std::nullopt;
    std::size_t node = 0;
    std::size_t rep = *trie_[0].rep;
    FedView view(recordings_[rep].rec);
    for (std::size_t i = 0;; ++i) {
      const Recording& r = recordings_[rep].rec;
      if (i == r.decisions.size()) {  // every choice was this recording's: its end
        if (!r.ended) return std::nullopt;
        view.at(r, i);
        strategy.end_execution();
        return rep;
      }
      const RecordedDecision& x = r.decisions[i];
      view.at(r, i);
      const Decision d{.enabled = x.enabled,
                       .previous = x.previous,
                       .previous_enabled = x.previous_enabled,
                       .step = i,
                       .exec = &view};
      const ThreadId c = strategy.pick(d);
      const auto it = trie_[node].next.find(c);
      if (it == trie_[node].next.end()) return std::nullopt;  // not run yet
      node = it->second;
      if (c != x.chosen) rep = *trie_[node].rep;
    }
  } catch (const StrategyError&) {
    return std::nullopt;
  }
}

bool Speculation::advance(Branch& b) {
  bool moved = false;
  while (!b.done && !b.stale) {
    if (!in_trie(b.prefix)) {
      b.stale = true;
      if (b.own && back_.count(*b.own) != 0) {  // its own came back with nothing to follow
        if (b.root) root_lost_ = *b.own;
        b.done = true;
        if (!b.root) b.search.reset();
      }
      break;
    }
    std::unique_ptr<Strategy> trial = b.search->resumable()->fork();
    RACELAB_CHECK(trial != nullptr, "speculation: {} cannot be copied", b.search->describe());
    const std::optional<std::size_t> fed = feed_from_trie(*trial, sequence_.size());
    if (!fed) {
      b.stale = true;
      if (b.own && back_.count(*b.own) != 0) {
        // Its own execution, run from its own state, came back and is not what it makes: the
        // program is not deterministic there (or it did not run to its end). The root cannot go
        // on; a branch gives up.
        if (b.root) root_lost_ = *b.own;
        b.done = true;
        if (!b.root) b.search.reset();
      }
      break;
    }
    b.search = std::move(trial);
    if (b.root) {
      sequence_.push_back(recordings_[*fed].id);
      if (const auto c = b.search->classes()) classes_ = *c;
      classes_after_.push_back(classes_);
    }
    b.waiting.reset();
    b.own.reset();
    moved = true;
    Resumable& r = *b.search->resumable();
    if (!r.move_on()) {
      RACELAB_CHECK(b.search->exhausted(), "speculation: {} cannot move on", b.search->describe());
      b.done = true;
      if (b.root) exhausted_ = true;
      if (!b.root) b.search.reset();
      break;
    }
    b.prefix = r.next_choices();
    add_branches(r);
  }
  return moved;
}

void Speculation::add_branches(Resumable& r) {
  for (Resumable::Alternative& x : r.alternatives()) {
    // What decides the branch's executions besides its prefix: its node's sleep set and the
    // wakeup tree below its choice. A search that came to the alternative later may have added
    // sequences to that tree: the branch made before is then out of date, and a fresh one takes
    // its place (what the old one ran stays in the trie, and fits where it still does).
    auto [it, fresh] = known_.try_emplace(x.prefix, x.key);
    if (!fresh) {
      if (it->second == x.key) continue;
      it->second = x.key;
      for (std::vector<Branch>* list : {&branches_, &fresh_}) {
        for (Branch& old : *list) {
          if (old.root || old.prefix != x.prefix) continue;
          made_[old.serial].replaced = true;
          old.done = true;
          old.search.reset();
        }
      }
    }
    Branch b;
    b.search = make_();
    if (!b.search->resumable()->take_over_alternative(r, x.node)) {  // leaves it fresh
      const std::optional<std::string> text = r.alternative_state(x.node);
      if (!text) continue;
      RACELAB_CHECK(b.search->resumable()->take_over(*text),
                    "speculation: {} refused an alternative's state", b.search->describe());
    }
    b.depth = x.node + 1;
    b.prefix = b.search->resumable()->next_choices();
    b.serial = made_.size();
    made_.push_back({.replaced = false, .guessed = x.guessed});
    fresh_.push_back(std::move(b));
  }
}

// Every branch goes on as far as the recordings take it.
void Speculation::settle() {
  for (bool again = true; again;) {
    again = false;
    for (std::size_t i = 0; i < branches_.size(); ++i) {
      if (exhausted_ || branches_.front().done) return;
      again = advance(branches_[i]) || again;
    }
    for (Branch& b : fresh_) branches_.push_back(std::move(b));
    again = again || !fresh_.empty();
    fresh_.clear();
  }
}

std::vector<Speculation::Request> Speculation::take(std::size_t slots) {
  std::vector<Request> out;
  if (exhausted_ || branches_.front().done) return out;
  // The root first, then the deepest branches (the root gets to them first: dpor goes on from
  // the deepest alternative), older first among equals.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < branches_.size(); ++i) {
    const Branch& b = branches_[i];
    if (!b.done && !b.waiting) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const Branch& a = branches_[x];
    const Branch& b = branches_[y];
    if (a.root != b.root) return a.root;
    return a.depth > b.depth;
  });
  for (std::size_t i : order) {
    Branch& b = branches_[i];
    // A request in flight for the same first choices may well be this one's execution.
    for (const auto& [id, prefix] : in_flight_) {
      if (prefix == b.prefix) {
        b.waiting = id;
        break;
      }
    }
    if (b.waiting) continue;
    if (out.size() >= slots) continue;
    std::string state;  // "" for the root's first execution (nothing to take over)
    if (!b.root || !sequence_.empty()) {
      const std::optional<std::string> text = b.search->resumable()->state_text();
      RACELAB_CHECK(text.has_value(), "speculation: a search that did not move on");
      state = *text;
    }
    Request r{next_id_++, std::move(state), b.root};
    origin_[r.id] = b.serial;
    in_flight_[r.id] = b.prefix;
    b.waiting = r.id;
    b.own = r.id;
    out.push_back(std::move(r));
  }
  return out;
}

void Speculation::arrived(std::uint64_t id, std::optional<Recording> rec) {
  in_flight_.erase(id);
  back_.insert(id);
  std::vector<ThreadId> choices;
  if (rec) {
    choices = rec->choices();
    recordings_.push_back({id, std::move(*rec)});
    add_to_trie(recordings_.size() - 1);
  }
  for (Branch& b : branches_) {
    if (b.done) continue;
    if (b.waiting == id) b.waiting.reset();
    // What came back can take the branches whose next execution starts like it further.
    if (b.own == id || (rec && starts_with(choices, b.prefix))) b.stale = false;
  }
  settle();
}

std::string Speculation::waste() const {
  const std::set<std::uint64_t> counted(sequence_.begin(), sequence_.end());
  std::uint64_t beyond = 0, repeated = 0, replaced = 0, guessed = 0;
  for (const Arrived& a : recordings_) {
    if (counted.count(a.id) != 0) continue;
    ++beyond;
    const auto it = origin_.find(a.id);
    if (repeated_.count(a.id) != 0) {
      ++repeated;
    } else if (it != origin_.end() && made_[it->second].replaced) {
      ++replaced;
    } else if (it != origin_.end() && made_[it->second].guessed) {
      ++guessed;
    }
  }
  return fmt::format(
      "{} beyond the search's: {} repeating another's choices, {} from branches replaced since, "
      "{} from branches on a guessed footprint, {} from branches the search came to otherwise",
      beyond, repeated, replaced, guessed, beyond - repeated - replaced - guessed);
}

}  // namespace racelab::sched

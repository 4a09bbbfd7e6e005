// DPOR: stateless model checking with dynamic partial-order reduction. It explores one execution
// per interleaving class (Mazurkiewicz trace) instead of every schedule, with no preemption bound:
// two executions that order every pair of dependent events alike reach the same state and the
// same findings, so one of them suffices. Source-set DPOR with sleep sets (Abdulla, Aronis,
// Jonsson, Sagonas: "Optimal Dynamic Partial Order Reduction", POPL 2014, algorithm 1; after
// Flanagan & Godefroid, POPL 2005); the dependency relation and races are in dpor_events.h.
//
// The search is a stack of nodes, one per step of the current execution. An execution replays
// the stack's choices up to the node chosen to diverge and extends it with fresh nodes. After
// each step, the races of the new event are reversed: for a race e < e', the initials of
// notdep(e).e' at the node of e are the threads that can start an execution in which e' comes
// first; when none of them is in that node's backtrack set, one is added. A node's sleep set holds
// the threads whose next event was already explored from it or an ancestor and that nothing since
// has depended on; a fresh node never schedules them, and an execution whose enabled threads are
// all asleep could only repeat a class explored elsewhere: it is abandoned (counted as redundant,
// never as a class). With sleep sets, no two explored complete executions are equivalent; with
// source sets, every class has one. When the stack empties, every class has been explored:
// exhausted() is true.
//
// With the state cache (dpor_cache.h: on for one unbounded job on a subject that describes its
// state), an execution may also stop at a state explored before, counted apart
// (Classes::cached): every class is then explored or reaches such a state.
//
// Blocking is handled soundly: threads never run while disabled; a thread blocked on a lock at the
// end of an execution, complete or abandoned as sleep-set blocked, races with the holder's
// acquire (the execution where it came first is another class); a fatal finding ends an
// execution with a step that disables everyone else, so it is dependent with every thread's
// next step. Subjects must declare the shared state their local code touches
// (Context::touch): the model does (src/model/pipeline.cc); a live subject records its steps'
// footprints when asked (live::Options::footprints, src/live/runtime_threads.cc says what they
// are) and spawns its threads as it runs (ThreadView::thread_capacity); a subject that records
// none is refused.
//
// An optional preemption bound (max_preemptions, as dfs counts them) prunes alternatives that
// would exceed it; bounded DPOR is then a heuristic, not a proof within the bound (reversing a
// race can need a preemption the bound forbids: Coons, Musuvathi, McKinley, OOPSLA 2013).
//
// Split (--jobs, --shard): the first `depth` decisions are explored in full, every enabled thread
// that is not asleep, with the same sleep sets; below them, by source-DPOR. A race whose first
// event lies in that top part needs no backtracking (every alternative there is explored), so the
// subtrees of the top part's leaves are independent: each is a function of its prefix and the
// prefix's sleep sets alone, and they can run anywhere, in any order. Sleep sets still keep any
// two explored complete executions inequivalent and source sets still reach every class, so the
// split explores the same classes; only the redundant (sleep-set blocked) executions differ.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "sched/strategies/dpor_cache.h"
#include "sched/strategies/dpor_events.h"
#include "sched/strategies/dpor_state.h"
#include "sched/strategies/dpor_symmetry.h"
#include "sched/strategies/dpor_wakeup.h"
#include "sched/strategies/strategies.h"
#include "util/check.h"
#include "util/errors.h"

namespace racelab::sched {
namespace dpor {

struct SleepEntry {
  ThreadId thread;
  std::vector<dpor::Access> footprint;  // of its next event, as explored
  // Asleep since a split's top part (Frame of a Prefix): explored in another subtree, whose races
  // with the top part's events were reversed nowhere (the top part explores every alternative
  // instead), so a race here is not known to be reversed there (reverse_optimally).
  bool from_top = false;
};

// What a node of the search keeps that a split's subtree needs of its prefix.
struct Frame {
  std::vector<ThreadId> enabled;  // ascending, as the engine gave them
  ThreadId chosen = kNoThread;
  std::vector<SleepEntry> sleep;  // asleep here: inherited, then the siblings explored
  ThreadId previous = kNoThread;  // for the preemption bound
  bool previous_enabled = false;
  int preemptions_before = 0;
};

}  // namespace dpor

namespace {

// The decisions a split's subtree starts with, and the sleep sets there: its subtree depends on
// nothing else.
struct Prefix {
  // Each node's, its sleep set as it was when the prefix was reached.
  std::vector<dpor::Frame> frames;
  bool cut = false;    // stopped at the top part's depth
  bool ended = false;  // ended above it on its own (not sleep-set blocked)
};
using Prefixes = std::vector<std::shared_ptr<const Prefix>>;

class DporStrategy : public SubtreeSearch, private Resumable {
 public:
  // `fixed`: the threads of the first steps, run as given; the search explores what follows them
  // (make_dpor). Symmetry is off below a fixed prefix: it could gate the thread the prefix runs.
  // `stateless_first`: with `states`, the first executions run stateless, and the cache starts
  // from scratch only when they did not exhaust the space (kDporStatelessFirst).
  DporStrategy(std::optional<int> max_preemptions, bool symmetry, bool states = false,
               bool optimal = false, std::vector<ThreadId> fixed = {},
               std::uint64_t stateless_first = 0)
      : bound_(max_preemptions),
        use_symmetry_(symmetry && !max_preemptions && fixed.empty()),
        optimal_(optimal),
        frozen_(fixed.size()),
        fixed_(std::move(fixed)),
        want_states_(states && !max_preemptions),
        stateless_first_(stateless_first) {}
  // The top part of a split: every decision above `depth` in full; each execution stops at
  // `depth` (or ends before it) and its prefix is appended to `out`.
  DporStrategy(std::optional<int> max_preemptions, bool symmetry, std::size_t depth, Prefixes* out)
      : bound_(max_preemptions),
        use_symmetry_(symmetry && !max_preemptions),
        cut_depth_(depth),
        out_(out) {}
  // One subtree of a split: the prefix's decisions are fixed, the search stays below them.
  DporStrategy(std::optional<int> max_preemptions, bool symmetry, bool optimal,
               const Prefix& prefix)
      : bound_(max_preemptions),
        use_symmetry_(symmetry && !max_preemptions),
        optimal_(optimal),
        frozen_(prefix.frames.size()),
        from_prefix_(true) {
    for (const dpor::Frame& f : prefix.frames) {
      dpor::Frame& frame = stack_.emplace_back();
      frame = f;
      for (dpor::SleepEntry& e : frame.sleep) e.from_top = true;
    }
  }

  bool begin_execution(std::uint64_t) override {
    view_ = nullptr;
    abandoned_ = hit_ = false;
    cut_ = false;
    steps_ = 0;
    if (taken_over_) {  // take_over(): the search was moved on to this execution before
      taken_over_ = false;
      return !exhausted_;
    }
    if (!started_) {
      started_ = true;
      first_new_ = 0;
      return true;
    }
    if (!next_branch()) {
      exhausted_ = true;
      return false;
    }
    if (states_capable_ && !states_ && executions() >= stateless_first_) {
      // The stateless search did not end within its share: the state cache from the start. What
      // the stateless executions found stays found; the cache's search covers every class again.
      states_ = true;
      use_symmetry_ = false;  // the digest renames alike threads instead
      switched_after_ = executions();
      stack_.clear();
      deferred_.clear();
      first_new_ = 0;
    }
    return true;
  }

  // Moves the stack to the next execution to explore: the deepest node with an alternative left
  // chooses it (first_new_); false when none is left.
  bool next_branch() {
    while (stack_.size() > frozen_) {
      const std::size_t k = stack_.size() - 1;
      Node& n = stack_[k];
      const auto done = log_.footprint(k);
      n.sleep.push_back({n.chosen, {done.begin(), done.end()}});
      if (advance(n)) {
        first_new_ = k;
        return true;
      }
      leave(k);
      stack_.pop_back();
    }
    return false;
  }

  ThreadId pick(const Decision& d) override {
    const std::size_t s = d.step;
    // The execution's footprints and state, fetched once per decision (ThreadView's queries).
    footprints_ = d.exec->footprints();
    state_view_ = d.exec->states();
    if (s == 0) {
      if (footprints_ == nullptr || footprints_->pending_op(d.enabled.front()) == nullptr) {
        throw StrategyError(
            "dpor: this subject does not record what its steps touch: use random, pct or dfs");
      }
      threads_ = d.exec->thread_capacity();
      if (!states_decided_) {  // stateful only where the subject describes its state
        states_decided_ = true;
        states_capable_ =
            want_states_ && state_view_ != nullptr && state_view_->state_digest().has_value();
        states_ = states_capable_ && stateless_first_ == 0;
        if (states_) use_symmetry_ = false;  // the digest renames alike threads instead
      }
      if (states_) roles_.reset(*state_view_, threads_);
      // Source sets reverse a race once, when its later event is new: the initials of its
      // reversal lie before that event. Optimal dpor reverses every race of each execution, those
      // of the replayed prefix too (JACM 2017, Algorithm 2): a race's sequence holds the events
      // after it as well, which differ from one execution to the next below the same prefix
      // (hunt program 1754 lost 12 of 2,011 classes when each prefix race was reversed only in
      // the execution that first ran it; regression case in test_dpor).
      log_.reset(threads_, optimal_ ? 0 : first_new_);
      symmetry_.reset(*footprints_, threads_, use_symmetry_);
    }
    view_ = d.exec;
    if (d.exec->thread_count() > threads_) {
      throw StrategyError(fmt::format(
          "dpor: the program runs {} threads at step {}, more than the {} dpor tracks in a "
          "live program: use dfs or random",
          d.exec->thread_count(), s, threads_));
    }
    if (s > 0) append(s - 1, false);
    const std::span<const ThreadId> enabled = symmetry_.ungated(d);
    if (s < stack_.size()) {  // replay, then the node that diverges
      Node& n = stack_[s];
      if (!std::equal(n.enabled.begin(), n.enabled.end(), enabled.begin(), enabled.end())) {
        throw Nondeterminism("dpor", d, n.enabled, enabled);
      }
      n.op = *footprints_->pending_op(n.chosen);
      ++steps_;
      return n.chosen;
    }
    if (out_ != nullptr && s == cut_depth_) {  // the top part of a split ends here
      record_prefix(s, true);
      cut_ = true;
      return kNoThread;
    }
    Node n;
    n.enabled.assign(enabled.begin(), enabled.end());
    n.gated = symmetry_.gated();
    n.previous = d.previous;
    n.previous_enabled =
        d.previous_enabled && std::binary_search(enabled.begin(), enabled.end(), d.previous);
    n.backtrack.assign(threads_, 0);
    if (s > 0) {
      const Node& parent = stack_[s - 1];
      n.preemptions_before = parent.preemptions_before + (preempts(parent, parent.chosen) ? 1 : 0);
      const auto last = log_.footprint(s - 1);
      for (const SleepEntry& e : parent.sleep) {
        if (!dpor::dependent(e.footprint, last) && !symmetry_.wakes(e.thread, last))
          n.sleep.push_back(e);
      }
    }
    ThreadId choice = kNoThread;
    if (s < fixed_.size()) {  // a fixed prefix (make_dpor): its thread, and no alternative
      choice = fixed_[s];
      if (!is_enabled(n, choice)) {
        throw StrategyError(fmt::format(
            "dpor: the fixed prefix runs {} at step {}, which is not enabled there (enabled: {})",
            thread_label(*d.exec, choice), s, enabled_labels(d)));
      }
    }
    // Optimal: the parent's wakeup tree below its choice, its first sequence.
    if (choice == kNoThread && optimal_ && s > 0) {
      n.wut = std::move(stack_[s - 1].below);
      stack_[s - 1].below.clear();
      drop_covered(n, n.wut);
      while (choice == kNoThread && !n.wut.empty()) {
        const ThreadId t = n.wut.take_first(n.below, &n.predicted);
        if (is_enabled(n, t) && !asleep(n, t) && allowed(n, t)) choice = t;
      }
      if (choice == kNoThread) {
        n.below.clear();
        n.predicted.reset();
      }
    }
    if (choice == kNoThread && n.previous_enabled && !asleep(n, n.previous))
      choice = n.previous;  // no preemption
    for (std::size_t i = 0; i < n.enabled.size() && choice == kNoThread; ++i) {
      if (!asleep(n, n.enabled[i]) && allowed(n, n.enabled[i])) choice = n.enabled[i];
    }
    if (choice == kNoThread) {  // every way on repeats an explored class (or passes the bound)
      abandoned_ = true;
      return kNoThread;
    }
    if (states_ && s >= frozen_ && lookup(n, *state_view_, s)) {  // explored from before
      abandoned_ = hit_ = true;
      return kNoThread;
    }
    n.chosen = choice;
    n.backtrack[static_cast<std::size_t>(choice)] = 1;
    if (s < cut_depth_) expand(n);  // the top part of a split: every alternative
    n.op = *footprints_->pending_op(choice);
    stack_.push_back(std::move(n));
    ++steps_;
    return choice;
  }

  void end_execution() override {
    if (view_ == nullptr || steps_ == 0) return;
    if (stack_.size() > steps_) {  // stopped inside the replayed prefix
      stack_.resize(steps_);
      // What the dropped nodes' subtrees did is lost: their ancestors' summaries are incomplete.
      for (Node& n : stack_) n.cached = false;
    }
    if (cut_) {           // pick() appended the last step; the subtree below is another worker's
      deferred_.clear();  // all in the top part, which explores every alternative anyway
      view_ = nullptr;
      return;
    }
    if (out_ != nullptr) record_prefix(stack_.size(), false, !abandoned_);  // a leaf above the cut
    const bool fatal = !abandoned_ && footprints_->ended_by_finding();
    // An abandoned execution's last step was appended by the pick() that abandoned it.
    if (!abandoned_) append(steps_ - 1, fatal);
    // A thread blocked on a lock races with the holder's acquire, in an abandoned (sleep-set
    // blocked) execution too: the threads awake there are blocked, and the execution where the
    // blocked one took the lock first is another class, which no other branch reaches (1 GPU x
    // 3 drafters: 31,104 classes were missed when only complete executions reported it).
    for (ThreadId t = 0; t < static_cast<ThreadId>(threads_); ++t) {
      if (view_->finished(t)) continue;
      const Op& pending = *footprints_->pending_op(t);
      log_.add_blocked(t, pending, footprints_->pending_touches(t));
      // A lock the thread is left waiting for is part of what the subtree does (dpor_cache.h).
      if (states_ && !stack_.empty() && pending.kind == OpKind::kLock) {
        const dpor::Access wants{dpor::AccessKind::kAcquire, pending.object};
        dpor::add_event(stack_.back().summary, roles_, *state_view_, t, {&wants, 1});
      }
    }
    if (fatal) {
      const Node& last = stack_.back();
      for (ThreadId t : last.enabled) {
        if (t != last.chosen) log_.add_stopped(t);
      }
    }
    reverse_races(true);
    ++(hit_ ? cached_ : abandoned_ ? redundant_ : classes_);
    // A subtree cut by the step limit is not complete from a shallower depth: not stored.
    if (states_ && footprints_->step_limit_reached()) {
      for (Node& n : stack_) n.cached = false;
    }
    view_ = nullptr;
  }

  // Between executions: moves the search on to its next execution and returns its state
  // (dpor_state.h). Not with the state cache, nor for a split's part or a fixed prefix.
  std::optional<std::string> hand_over() override {
    if (!move_on() && !exhausted_) return std::nullopt;
    return state_text();
  }

  bool move_on() override {
    if (!started_ || view_ != nullptr || states_ || states_capable_ || out_ != nullptr ||
        !fixed_.empty() || from_prefix_)
      return false;
    if (taken_over_) return !exhausted_;  // moved on already
    exhausted_ = exhausted_ || !next_branch();
    // The choices above the diverging node ran in the last execution: their footprints there.
    for (std::size_t k = 0; k < first_new_ && k < stack_.size(); ++k) {
      const auto done = log_.footprint(k);
      stack_[k].done.assign(done.begin(), done.end());
    }
    // Its new choice has not run: what the wakeup tree guesses it touches (alternatives).
    if (first_new_ < stack_.size()) stack_[first_new_].done = stack_[first_new_].guess;
    taken_over_ = true;
    return !exhausted_;
  }

  std::optional<std::string> state_text() const override {
    if (!taken_over_) return std::nullopt;
    dpor::SavedSearch s = save(stack_, first_new_, frozen_);
    s.exhausted = exhausted_;
    s.classes = classes_;
    s.redundant = redundant_;
    return dpor::to_text(s);
  }

  std::vector<ThreadId> next_choices() const override {
    std::vector<ThreadId> out;
    for (const Node& n : stack_) out.push_back(n.chosen);
    return out;
  }

  std::unique_ptr<Strategy> fork() const override {
    if (view_ != nullptr || states_ || out_ != nullptr) return nullptr;
    return std::make_unique<DporStrategy>(*this);
  }

  // Before the first execution: goes on from a state hand_over() or alternative_state() returned,
  // in another process.
  bool take_over(const std::string& text) override {
    if (started_ || out_ != nullptr || frozen_ > 0) return false;
    dpor::SavedSearch s = dpor::from_text(text);
    if (s.strategy != describe())
      throw StrategyError(
          fmt::format("dpor: the state handed over is {}'s, not {}'s", s.strategy, describe()));
    load(std::move(s));
    return true;
  }

  // take_over(from.alternative_state(m)) in one process, without the text.
  bool take_over_alternative(Resumable& from, std::size_t m) override {
    // Resumable is a private base: dynamic_cast cannot come down from it, the type check can.
    if (typeid(from) != typeid(DporStrategy)) return false;
    auto* other = static_cast<DporStrategy*>(&from);
    if (started_ || out_ != nullptr || frozen_ > 0 || other->describe() != describe()) return false;
    std::optional<dpor::SavedSearch> s = other->alternative(m);
    if (!s) return false;
    load(std::move(*s));
    return true;
  }

  // The state take_over() goes on from.
  void load(dpor::SavedSearch&& s) {
    stack_.clear();
    for (dpor::SavedNode& o : s.stack) {
      Node& n = stack_.emplace_back();
      n.enabled = std::move(o.enabled);
      n.chosen = o.chosen;
      for (auto& [thread, footprint] : o.sleep) n.sleep.push_back({thread, std::move(footprint)});
      n.previous = o.previous;
      n.previous_enabled = o.previous_enabled;
      n.preemptions_before = o.preemptions_before;
      n.backtrack = std::move(o.backtrack);
      n.gated = std::move(o.gated);
      n.wut.assign(std::move(o.wut));
      n.below.assign(std::move(o.below));
      n.done = std::move(o.done);
    }
    threads_ = s.threads;
    first_new_ = s.first_new;
    frozen_ = s.frozen;
    exhausted_ = s.exhausted;
    states_decided_ = s.states_decided;
    classes_ = s.classes;
    redundant_ = s.redundant;
    started_ = taken_over_ = true;
  }

  // Moved on (or just taken over): each node above the diverging one that has an alternative
  // left, as the search will be when it moves on to that alternative: the sleep set there gains
  // the node's choice, with the footprint it had (Node::done), as next_branch() adds it. What the
  // search explores before it gets there can still add sequences to the alternative's wakeup
  // tree, which is why `key` holds it (src/sched/speculate.h checks every execution anyway). The
  // diverging node's next alternative too, where the wakeup tree guessed what its new choice
  // touches: that choice has not run yet.
  std::vector<Alternative> alternatives() override {
    std::vector<Alternative> out;
    if (!taken_over_ || exhausted_) return out;
    for (std::size_t m = frozen_; m <= first_new_ && m < stack_.size(); ++m) {
      if (m == first_new_ && stack_[m].done.empty()) break;
      Node n = stack_[m];
      if (!step_to_next(n)) continue;
      Alternative& x = out.emplace_back();
      x.node = m;
      x.guessed = m == first_new_;
      for (std::size_t k = 0; k < m; ++k) x.prefix.push_back(stack_[k].chosen);
      x.prefix.push_back(n.chosen);
      key_add(x.key, n.chosen);
      key_add(x.key, static_cast<std::int32_t>(n.sleep.size()));
      for (const SleepEntry& e : n.sleep) {
        key_add(x.key, e.thread);
        key_add(x.key, e.footprint);
      }
      key_add(x.key, n.below.children());
    }
    return out;
  }

  // The search confined to alternative `node` of alternatives().
  std::optional<std::string> alternative_state(std::size_t m) override {
    std::optional<dpor::SavedSearch> s = alternative(m);
    if (!s) return std::nullopt;
    return dpor::to_text(*s);
  }

  Resumable* resumable() override { return this; }

  Progress progress() const override {
    return {.exhausted = exhausted_,
            .classes = Classes{classes_, redundant_, cached_},
            .states = states_ ? std::optional<std::uint64_t>(cache_.states()) : std::nullopt};
  }
  Needs needs() const override {
    return {.state_digests = want_states_ && (!states_decided_ || states_)};
  }
  std::uint64_t executions() const { return classes_ + redundant_ + cached_; }

  std::string describe() const override {
    // "symmetry": alike threads of a symmetry group are explored once (its classes are those of
    // the program where they take turns); it changes nothing for a subject with no groups.
    // "states": the state cache (dpor_cache.h), whose digests rename alike threads and parts.
    // "source sets": the search before optimal dpor (wakeup trees, dpor_wakeup.h), which can run
    // sleep-set blocked executions; named only when asked for.
    // "states after N stateless": the first N executions ran stateless (kDporStatelessFirst).
    const std::string symmetry =
        use_symmetry_ ? ", symmetry"
        : states_
            ? (switched_after_ > 0 ? fmt::format(", states after {} stateless", switched_after_)
                                   : std::string(", states"))
            : "";
    const char* search = optimal_ ? "" : ", source sets";
    // A fixed prefix: the search covers the continuations of its steps only.
    std::string after;
    if (!fixed_.empty())
      after =
          fmt::format(", after the first {} step{}", fixed_.size(), fixed_.size() == 1 ? "" : "s");
    return bound_ ? fmt::format("dpor(max_preemptions={}{}{}{})", *bound_, symmetry, search, after)
                  : fmt::format("dpor(unbounded{}{}{})", symmetry, search, after);
  }

 private:
  using SleepEntry = dpor::SleepEntry;
  struct Node : dpor::Frame {
    Op op;                        // chosen's operation here
    std::vector<char> backtrack;  // per thread: to explore from here (chosen included)
    std::vector<ThreadId> gated;  // enabled, but left out here by the symmetry reduction
    // Optimal dpor (dpor_wakeup.h): the sequences still to explore from here, and the tree
    // below the current choice, which the next node starts from.
    dpor::WakeupTree wut;
    dpor::WakeupTree below;
    // The footprint the wakeup tree predicted for chosen's step here, where it knew one: the
    // step's own in the execution the sequence came from, or a reversed step's prediction
    // (dpor_wakeup.h, predict_reversed). Checked when the step runs (append).
    std::optional<std::vector<dpor::Access>> predicted;
    // The state cache (dpor_cache.h): this node's state, the canonical numbers of the threads
    // asleep when it was reached, and what its subtree has done so far.
    bool cached = false;  // to be stored when the search leaves it
    std::uint64_t digest = 0;
    std::vector<ThreadId> sleep_names;
    dpor::Summary summary;
    std::vector<dpor::Access> done;   // taken over: the choice's footprint (SavedNode::done)
    std::vector<dpor::Access> guess;  // advance(): the wakeup tree's guess of the choice's step
  };

  // An Alternative's key, in bytes: equal keys, equal contents.
  static void key_add(std::string& key, std::int32_t v) {
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  static void key_add(std::string& key, const std::vector<dpor::Access>& accesses) {
    key_add(key, static_cast<std::int32_t>(accesses.size()));
    for (const dpor::Access& a : accesses) {
      key_add(key, static_cast<std::int32_t>(a.kind));
      key_add(key, a.object);
    }
  }
  static void key_add(std::string& key, const std::vector<dpor::WakeupNode>& nodes) {
    key_add(key, static_cast<std::int32_t>(nodes.size()));
    for (const dpor::WakeupNode& w : nodes) {
      key_add(key, w.thread);
      key_add(key, w.known ? 1 : 0);
      key_add(key, w.footprint);
      key_add(key, w.guess);
      key_add(key, w.children);
    }
  }

  // alternative_state(m) before it is text.
  std::optional<dpor::SavedSearch> alternative(std::size_t m) {
    if (!taken_over_ || exhausted_ || m >= stack_.size() || m < frozen_ || m > first_new_)
      return std::nullopt;
    std::vector<Node> copy(stack_.begin(), stack_.begin() + static_cast<std::ptrdiff_t>(m) + 1);
    if (!step_to_next(copy[m])) return std::nullopt;
    return save(copy, m, m + 1);
  }

  // The stack as dpor_state.h keeps it.
  dpor::SavedSearch save(const std::vector<Node>& stack, std::size_t first_new,
                         std::size_t frozen) const {
    dpor::SavedSearch s;
    s.strategy = describe();
    s.threads = threads_;
    s.first_new = first_new;
    s.frozen = frozen;
    s.states_decided = states_decided_;
    for (const Node& n : stack) {
      dpor::SavedNode& o = s.stack.emplace_back();
      o.enabled = n.enabled;
      o.chosen = n.chosen;
      for (const SleepEntry& e : n.sleep) o.sleep.emplace_back(e.thread, e.footprint);
      o.previous = n.previous;
      o.previous_enabled = n.previous_enabled;
      o.preemptions_before = n.preemptions_before;
      o.backtrack = n.backtrack;
      o.gated = n.gated;
      o.wut = n.wut.children();
      o.below = n.below.children();
      o.done = n.done;
    }
    return s;
  }

  // The state cache at fresh node `n` of step `s`, not yet on the stack: true when its state was
  // explored from a sleep set within n's, after adding the races with its summary.
  bool lookup(Node& n, const StateView& view, std::size_t s) {
    const std::optional<std::uint64_t> digest = view.named_state_digest(canonical_);
    if (!digest || canonical_.size() != threads_)
      throw StrategyError("dpor: the subject stopped describing its state");
    n.digest = *digest;
    n.sleep_names.clear();
    for (const SleepEntry& e : n.sleep)
      n.sleep_names.push_back(canonical_[static_cast<std::size_t>(e.thread)]);
    std::sort(n.sleep_names.begin(), n.sleep_names.end());
    const dpor::Summary* seen = cache_.find(n.digest, n.sleep_names);
    if (seen == nullptr) {
      n.cached = true;
      return false;
    }
    // Each stack event that conflicts with an entry races with it (dpor_cache.h).
    for (std::size_t i = 0; i < s; ++i) {
      Node& at = stack_[i];
      bool full = false;
      dpor::conflicting_roles(*seen, roles_, view, log_.footprint(i), [&](std::uint32_t role) {
        const auto threads = roles_.threads_of(role);
        if (std::any_of(threads.begin(), threads.end(), [&](ThreadId p) { return p != at.chosen; }))
          full = true;
      });
      if (full) expand(at);
    }
    if (s > 0) dpor::merge(stack_[s - 1].summary, *seen);
    return true;
  }

  // The search leaves node k for good: its subtree is complete.
  void leave(std::size_t k) {
    if (!states_) return;
    Node& n = stack_[k];
    if (k > 0) dpor::merge(stack_[k - 1].summary, n.summary);
    if (n.cached) cache_.store(n.digest, std::move(n.sleep_names), n.summary);
  }

  // Node n's next alternative, chosen: its wakeup tree's next sequence (optimal) or a thread of
  // its backtrack set; false when none is left. Its last choice is already asleep there.
  bool advance(Node& n) {
    n.guess.clear();
    if (optimal_) {  // the wakeup tree's next sequence
      drop_covered(n, n.wut);
      while (!n.wut.empty()) {
        const ThreadId t = n.wut.take_first(n.below, &n.predicted, &n.guess);
        if (is_enabled(n, t) && !asleep(n, t) && allowed(n, t)) {
          n.chosen = t;
          return true;
        }
      }
      n.below.clear();
    }
    n.predicted.reset();
    for (ThreadId t : n.enabled) {
      if (optimal_) break;
      if (n.backtrack[static_cast<std::size_t>(t)] && !asleep(n, t) && allowed(n, t)) {
        n.chosen = t;
        return true;
      }
    }
    return false;
  }

  // Node n (a copy) moved on from its choice to its next alternative: false when none is left.
  bool step_to_next(Node& n) {
    n.sleep.push_back({n.chosen, n.done});
    n.done.clear();
    return advance(n);
  }

  // Every enabled thread of n is to be explored from it.
  void expand(Node& n) const {
    for (ThreadId t : n.enabled) {
      n.backtrack[static_cast<std::size_t>(t)] = 1;
      if (optimal_ && t != n.chosen) n.wut.add_thread(t);
    }
  }
  static bool is_enabled(const Node& n, ThreadId t) {
    return std::binary_search(n.enabled.begin(), n.enabled.end(), t);
  }
  // The wakeup tree's sequences at n that a thread asleep there starts (dpor_wakeup.h). Not a
  // thread asleep since a split's top part (reverse_optimally says why).
  void drop_covered(const Node& n, dpor::WakeupTree& tree) {
    sleepers_.clear();
    for (const SleepEntry& e : n.sleep) {
      if (!e.from_top) sleepers_.push_back({e.thread, e.footprint});
    }
    tree.drop_covered(sleepers_);
  }
  static bool asleep(const Node& n, ThreadId t) {
    return std::any_of(n.sleep.begin(), n.sleep.end(),
                       [&](const SleepEntry& e) { return e.thread == t; });
  }
  static bool preempts(const Node& n, ThreadId t) { return n.previous_enabled && t != n.previous; }
  bool allowed(const Node& n, ThreadId t) const {
    return !bound_ || n.preemptions_before + (preempts(n, t) ? 1 : 0) <= *bound_;
  }

  void append(std::size_t step, bool fatal) {
    const Node& n = stack_[step];
    const std::int64_t result = footprints_->step_result(step);
    const std::span<const Touch> touches = footprints_->step_touches(step);
    const std::span<const Touch> status = symmetry_.observe(n.chosen, n.op, result, touches);
    log_.append(n.chosen, n.op, result, touches, fatal, status);
    // Checked where the subject vouches for its footprints (Context::fix_touches); a live
    // subject does not: its reversed steps' footprints count as unknown (dpor_wakeup.h).
    if (n.predicted && step >= first_new_ && footprints_->touches_fixed())
      check_prediction(step, *n.predicted);
    if (states_ && step >= first_new_)
      dpor::add_event(stack_[step].summary, roles_, *state_view_, n.chosen, log_.footprint(step));
    reverse_races();
  }

  // A step the wakeup tree predicted touches nothing outside the prediction: what its sequence was
  // inserted for, and what the sleep sets and the tree's later insertions took it to touch. A
  // subject that vouches for its footprints (Context::fix_touches) and touches outside them
  // (a branch it did not declare with may_touch or may_fail) would otherwise lose classes
  // silently.
  void check_prediction(std::size_t step, const std::vector<dpor::Access>& predicted) const {
    for (const dpor::Access& a : log_.footprint(step)) {
      // Symmetry statuses are the gating rule's bookkeeping (dpor_symmetry.h), recomputed from
      // what came before, not what the subject touches: not predicted.
      if (dpor::object_class(a.kind) == dpor::ObjectClass::kStatus) continue;
      RACELAB_CHECK(dpor::covers(predicted, a),
                    "dpor: step {} ({}) accessed object {} as access kind {}, outside the "
                    "footprint predicted for it (a branch the subject did not declare with "
                    "Context::may_touch or may_fail?)",
                    step, thread_label(*view_, stack_[step].chosen), a.object,
                    static_cast<int>(a.kind));
    }
  }

  // Source-DPOR's backtracking: for each race, make sure the node before its first event will
  // try a thread that can run the second event first.
  // Optimal dpor's sequences need the whole execution (dpor_wakeup.h): its races wait for the end.
  void reverse_races(bool at_end = false) {
    std::vector<dpor::Race> races = log_.take_races();
    if (optimal_) {
      deferred_.insert(deferred_.end(), std::make_move_iterator(races.begin()),
                       std::make_move_iterator(races.end()));
      if (!at_end) return;
      races = std::exchange(deferred_, {});
    }
    for (const dpor::Race& race : races) {
      if (race.earlier < std::max(frozen_, cut_depth_)) continue;  // a split's top: all explored
      // A race through symmetry statuses alone (dpor_symmetry.h) is not reversed. Statuses are
      // the gating rule's bookkeeping, not state: as program steps the two commute (the
      // symmetry argument's (b)), both orders reach one state with the same histories, so the
      // same gates after it. Run first, the later step typically reads no status (it read one
      // only because the earlier step made its thread alike to another): the reversal would
      // explore again what this execution explores, and end sleep-set blocked, the earlier
      // thread asleep and never woken (sequential-forward-backward: one blocked execution of
      // seven, docs/performance.md).
      if (race.later != dpor::Race::kPending &&
          !dpor::dependent_beyond_status(log_.footprint(race.earlier), log_.footprint(race.later)))
        continue;
      Node& n = stack_[race.earlier];
      const std::vector<ThreadId> initials = log_.initials(race);
      if (optimal_) {
        reverse_optimally(n, race, initials);
        continue;
      }
      bool covered = false;
      for (ThreadId t : initials) covered = covered || n.backtrack[static_cast<std::size_t>(t)];
      if (covered) continue;
      auto enabled = [&](ThreadId t) {
        return std::binary_search(n.enabled.begin(), n.enabled.end(), t);
      };
      // The reversed event's own thread first, awake threads before sleeping ones.
      auto rank = [&](ThreadId t) {
        return (asleep(n, t) ? 2 : 0) + (t == race.later_thread ? 0 : 1);
      };
      ThreadId add = kNoThread;
      for (ThreadId t : initials) {
        if (enabled(t) && (add == kNoThread || rank(t) < rank(add))) add = t;
      }
      auto gated = [&](ThreadId t) {
        return std::find(n.gated.begin(), n.gated.end(), t) != n.gated.end();
      };
      if (add != kNoThread && asleep(n, add)) {
        // Every initial that can run there is asleep: the search from it was trusted to reverse
        // the race, but on some programs it does not. Try every enabled thread instead (sound: it
        // only adds executions). Hunt program 510 (seed 1) needed it until initials() ordered
        // the later event after the sequence's conflicting events; program 1795 of seed 2 (4
        // threads, length 2) still does: 24 of 148 classes lost without it (cause not traced).
        for (ThreadId t : n.enabled) n.backtrack[static_cast<std::size_t>(t)] = 1;
      } else if (add != kNoThread) {
        n.backtrack[static_cast<std::size_t>(add)] = 1;
      } else if (std::any_of(initials.begin(), initials.end(), gated)) {
        // A gated thread would have to start the reversal: not a race of the gated program.
      } else {  // no initial can run there (never expected): try every enabled thread
        for (ThreadId t : n.enabled) n.backtrack[static_cast<std::size_t>(t)] = 1;
      }
    }
  }

  // Optimal dpor (dpor_wakeup.h): the race's reversing sequence goes into the wakeup tree of the
  // node before its first event, unless a thread asleep there starts it or the tree covers it.
  void reverse_optimally(Node& n, const dpor::Race& race, const std::vector<ThreadId>& initials) {
    if (std::any_of(initials.begin(), initials.end(), [&](ThreadId t) {
          return std::find(n.gated.begin(), n.gated.end(), t) != n.gated.end();
        }))
      return;  // a gated thread would have to start the reversal (as in reverse_races)
    for (const SleepEntry& e : n.sleep) {  // the cheap part of the check below, before v
      if (!e.from_top && dpor::sleeper_starts(log_, race, e.thread, e.footprint)) return;
    }
    const Op* later_op = race.later == dpor::Race::kPending ? nullptr : &stack_[race.later].op;
    StepOutlook outlook;
    if (race.later != dpor::Race::kPending) outlook = footprints_->step_outlook(race.later);
    const bool predict = footprints_->touches_fixed() && race.later != dpor::Race::kPending;
    dpor::Sequence v = dpor::reversal(log_, race, later_op, predict ? &outlook : nullptr);
    for (const SleepEntry& e : n.sleep) {
      // Optimal dpor skips a race that a sleeping thread starts: the search from that thread
      // reverses it, helped by the sequences that races with earlier events put in the wakeup
      // trees above. A thread asleep since a split's top part was explored in another subtree,
      // where no race with a top-part event put a sequence anywhere (the top explores every
      // alternative instead): that search may not have reversed this race (random program 5 of
      // the [dpor] tests, split at depth 1, lost 3 of 12 classes once footprints were predicted).
      // A sleeper's footprint is exact (its step as explored), where the sequence may hold a
      // prediction of that same step (a check that may fail, predicted fatal): the sleeper
      // starts the sequence when nothing before its step there conflicts with what it touches
      // (dpor_wakeup.h, sleeper_initial). Judged by the prediction, the sequence went in, and
      // its run found the sleeper still asleep at its step: sleep-set blocked (lastzero_failing,
      // once prefix races were reversed again).
      if (e.from_top) continue;
      if (dpor::sleeper_initial(v, e.thread, e.footprint)) return;  // explored elsewhere
    }
    if (!is_enabled(n, v.front().thread)) {  // never expected: every enabled thread instead
      expand(n);
      return;
    }
    n.wut.insert(std::move(v));
  }

  void record_prefix(std::size_t length, bool cut, bool ended = false) {
    auto prefix = std::make_shared<Prefix>();
    prefix->cut = cut;
    prefix->ended = ended;
    for (std::size_t k = 0; k < length; ++k) prefix->frames.push_back(stack_[k]);
    out_->push_back(std::move(prefix));
  }

  std::optional<int> bound_;
  bool use_symmetry_ = true;          // reduce symmetry where the subject declares groups
  bool optimal_ = false;              // wakeup trees (dpor_wakeup.h) instead of source sets
  std::vector<dpor::Race> deferred_;  // optimal: this execution's races, reversed at its end
  std::size_t cut_depth_ = 0;         // a split's top part: the depth it stops at (0: not one)
  Prefixes* out_ = nullptr;           // ... and where its prefixes go
  std::size_t frozen_ = 0;            // a split's subtree or fixed_: the fixed prefix's length
  std::vector<ThreadId> fixed_;       // make_dpor's fixed prefix: the thread of each first step
  bool from_prefix_ = false;          // a split's subtree (its sleepers are from_top)
  bool cut_ = false;                  // this execution stopped at cut_depth_
  std::vector<Node> stack_;
  dpor::EventLog log_;  // the current execution's events, rebuilt from step 0 each time
  const ThreadView* view_ = nullptr;           // the current execution's, valid until end_execution
  const FootprintView* footprints_ = nullptr;  // view_'s footprints(), fetched at each pick
  const StateView* state_view_ = nullptr;      // view_'s states(): with states_, not nullptr
  std::size_t threads_ = 0;
  std::size_t first_new_ = 0;  // the node where this execution left the previous one
  std::size_t steps_ = 0;      // steps taken in this execution
  bool abandoned_ = false;
  bool hit_ = false;  // abandoned at a state explored before (the state cache)
  bool started_ = false;
  bool taken_over_ = false;  // take_over(): the next execution is the one handed over
  bool exhausted_ = false;
  std::uint64_t classes_ = 0;
  std::uint64_t redundant_ = 0;
  std::uint64_t cached_ = 0;
  dpor::Symmetry symmetry_;  // alike threads once (dpor_symmetry.h)
  // The state cache (dpor_cache.h).
  bool want_states_ = false;
  bool states_decided_ = false;        // at the first step: whether the subject describes its state
  bool states_capable_ = false;        // requested, and the subject describes its state
  bool states_ = false;                // the cache is on now
  std::uint64_t stateless_first_ = 0;  // executions to run stateless before the cache
  std::uint64_t switched_after_ = 0;   // the stateless executions run before the cache, if any
  dpor::StateCache cache_;
  dpor::Roles roles_;
  std::vector<ThreadId> canonical_;      // scratch: the last digest's renaming
  std::vector<dpor::Sleeper> sleepers_;  // scratch: drop_covered's
};

// dpor below a prefix: its classes, with those of the other prefixes, are dpor's classes.
class DporPrefixSubtree : public Subtree {
 public:
  DporPrefixSubtree(std::optional<int> bound, bool symmetry, bool optimal,
                    std::shared_ptr<const Prefix> prefix)
      : bound_(bound), symmetry_(symmetry), optimal_(optimal), prefix_(std::move(prefix)) {}
  std::unique_ptr<SubtreeSearch> search() const override {
    return std::make_unique<DporStrategy>(bound_, symmetry_, optimal_, *prefix_);
  }

 private:
  std::optional<int> bound_;
  bool symmetry_;
  bool optimal_;
  std::shared_ptr<const Prefix> prefix_;
};

// Leaves the top part aims at. Sleep sets make the subtrees uneven (the earlier siblings' threads
// sleep in the later ones), so it takes many: on 1 GPU x 3 drafters, 64 leaves (depth 11) left
// one subtree with 67% of the executions, and two jobs ran 1.06 times as fast as one; 1024
// (1154 leaves, depth 15) leaves the largest with 1.6%, and two jobs run 1.4 times as fast
// (bench/dpor_jobs.sh, docs/performance.md). The top part costs one short execution per leaf.
// But a top part that already reaches the ends of executions is near the bottom of the tree:
// deeper, it would only re-branch what source-DPOR prunes (lazy-2-drafters, 350 classes: 2688
// executions at 1024 leaves, against 410 at 64). There it stops at kMinSubtrees.
constexpr std::size_t kSubtrees = 1024;
constexpr std::size_t kMinSubtrees = 64;

// The top part: its first `depth` decisions in full (every enabled thread not asleep, with sleep
// sets); one execution per leaf, stopped at `depth` or ended above it (complete, fatal or
// sleep-set blocked).
class DporTop : public TopPart {
 public:
  DporTop(std::optional<int> bound, bool symmetry, bool optimal, std::size_t depth)
      : bound_(bound),
        symmetry_(symmetry),
        optimal_(optimal),
        enumerate_(bound, symmetry, depth, &prefixes_) {}
  Strategy& enumerate() override { return enumerate_; }
  // The subtrees add redundant executions where the top part branches on threads a reduced search
  // would not, so the depth depends on the subject alone: every split of one subject explores
  // the same executions, whatever `workers`.
  bool deep_enough(std::uint64_t /*workers*/) const override {
    if (prefixes_.size() >= kSubtrees) return true;
    if (prefixes_.size() >= kMinSubtrees &&
        std::any_of(prefixes_.begin(), prefixes_.end(), [](const auto& p) { return p->ended; }))
      return true;
    // No execution reached the depth: the leaves are whole executions, deeper adds nothing.
    return std::none_of(prefixes_.begin(), prefixes_.end(), [](const auto& p) { return p->cut; });
  }
  Subtrees subtrees() const override {
    Subtrees out;
    for (const auto& p : prefixes_)
      out.push_back(std::make_shared<DporPrefixSubtree>(bound_, symmetry_, optimal_, p));
    return out;
  }

 private:
  std::optional<int> bound_;
  bool symmetry_;
  bool optimal_;
  Prefixes prefixes_;
  DporStrategy enumerate_;
};

class DporSplitter : public Splitter {
 public:
  DporSplitter(std::optional<int> bound, bool symmetry, bool optimal)
      : bound_(bound), symmetry_(symmetry), optimal_(optimal) {}
  std::unique_ptr<TopPart> top_part(std::size_t depth) const override {
    return std::make_unique<DporTop>(bound_, symmetry_, optimal_, depth);
  }
  std::string describe(std::size_t depth, std::size_t subtrees) const override {
    return fmt::format("{}, split at depth {} into {} subtrees",
                       DporStrategy(bound_, symmetry_, false, optimal_).describe(), depth,
                       subtrees);
  }
  // A race met below may add an alternative anywhere above it in the subtree: a running subtree
  // has no part that is settled enough to give away. Many small subtrees instead (kSubtrees).
  bool resplits() const override { return false; }
  bool counts_classes() const override { return true; }

 private:
  std::optional<int> bound_;
  bool symmetry_;
  bool optimal_;
};

}  // namespace

std::unique_ptr<Strategy> make_dpor(std::optional<int> max_preemptions, bool symmetry, bool states,
                                    bool optimal, std::vector<ThreadId> prefix,
                                    std::uint64_t stateless_first) {
  return std::make_unique<DporStrategy>(max_preemptions, symmetry, states, optimal,
                                        std::move(prefix), stateless_first);
}

std::unique_ptr<Splitter> make_dpor_splitter(std::optional<int> max_preemptions, bool symmetry,
                                             bool optimal) {
  return std::make_unique<DporSplitter>(max_preemptions, symmetry, optimal);
}

}  // namespace racelab::sched

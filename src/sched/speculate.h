#pragma once
// A dpor search whose executions run ahead, elsewhere, and are checked before they count: the
// split of a live search over several processes (racelab live --jobs N, src/live/split.h).
//
// Why not subtrees. dpor's tree cannot be cut into independent subtrees once the search is under
// way: optimal dpor puts the sequences that reverse a race into the wakeup tree of the node before
// its first event, so what the search meets below one alternative adds to the alternatives after
// it, and a race met deep in a subtree adds alternatives near the root (dpor.cc, DporSplitter).
// The model's split explores a top part in full instead (every alternative, with sleep sets) and
// pays for it with sleep-set blocked executions; on a live program whose branching comes late
// (train_queue_torch.py hands its batches out after some 40 decisions) that is most of the work.
//
// What this does instead: the one search (the root) runs here, as one process would run it, and
// runs no program itself (the caller runs every request, anywhere). Each of its executions is a
// recording (Recording) of an execution that a worker ran from a search state
// (Resumable::hand_over's text): feeding the recording to the search makes every choice the search
// would make, or it is refused at the first other choice and the search asks for that execution
// from its own state. So the search is the single-process search, execution for execution, whatever
// ran ahead and however fast: its classes, its order, its first failure. What runs ahead is
// speculation: at each alternative the search has left above its next execution
// (Resumable::alternatives), the state it will be in when it gets there, confined to that
// alternative's subtree, is a search of its own (a branch) that asks for its executions too, and so
// on below it. A branch's state is the root's, when it gets there, but for the sequences that the
// root's search until then adds to that alternative's wakeup tree; where those change an execution,
// the root's check refuses that recording and runs the execution from its own state (wasted: one
// execution). Nothing here depends on timing: which recordings exist changes only how many
// executions run, never which ones count.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sched/op.h"
#include "sched/strategy.h"

namespace racelab::sched {

// One decision of a recorded execution.
struct RecordedDecision {
  std::vector<ThreadId> enabled;
  ThreadId previous = kNoThread;
  bool previous_enabled = false;
  std::size_t threads = 0;                 // thread_count() there
  std::vector<std::optional<Op>> pending;  // each thread's pending operation there, if recorded
  ThreadId chosen = kNoThread;             // kNoThread: the strategy abandoned the execution
};

// One executed step: what the footprint view says of it once it ran.
struct RecordedStep {
  std::int64_t result = 0;
  std::vector<Touch> touches;
  std::vector<Touch> may_touch;  // step_outlook
  bool may_fail = false;
};

// One execution as a strategy saw it (ThreadView, FootprintView), from its first decision to its
// end.
struct Recording {
  std::size_t capacity = 0;  // thread_capacity()
  std::vector<int> groups;   // symmetry_group(t), t < capacity
  bool touches_fixed = false;
  std::vector<RecordedDecision> decisions;
  std::vector<RecordedStep> steps;  // the executed steps, in order
  bool ended = false;               // it reached end_execution
  bool ended_by_finding = false;
  bool step_limit_reached = false;
  std::vector<std::string> names;                   // thread_name(t) at the end
  std::vector<char> finished;                       // finished(t) at the end, t < capacity
  std::vector<std::optional<Op>> pending_at_end;    // t < capacity
  std::vector<std::vector<Touch>> pending_touches;  // pending_touches(t) at the end

  // The thread chosen at each decision (the last may be kNoThread).
  std::vector<ThreadId> choices() const;
};

// As one line of JSON, and back (a worker process's file); InputError for text that is not one.
std::string recording_text(const Recording& r);
Recording recording_from(const std::string& text);

// Runs `inner` and records what it saw of each execution (take() after end_execution).
class RecordingStrategy : public Strategy {
 public:
  explicit RecordingStrategy(Strategy& inner) : inner_(inner) {}
  bool begin_execution(std::uint64_t index) override;
  ThreadId pick(const Decision& d) override;
  void end_execution() override;
  Progress progress() const override { return inner_.progress(); }
  Needs needs() const override { return inner_.needs(); }
  std::string describe() const override { return inner_.describe(); }
  Recording take() { return std::move(rec_); }

 private:
  Strategy& inner_;
  Recording rec_;
  const ThreadView* view_ = nullptr;
};

// The root search and its branches (see the top of this file). Single-threaded: the caller runs
// the requests (anywhere, in any order, at once) and hands their recordings back.
class Speculation {
 public:
  // Makes a fresh search; it must be Resumable (dpor without the state cache).
  using Factory = std::function<std::unique_ptr<Strategy>()>;
  explicit Speculation(Factory make);

  // An execution to run: take_over(state) on a fresh strategy ("" for the search's first
  // execution: none), one execution under RecordingStrategy, its recording to arrived().
  struct Request {
    std::uint64_t id = 0;
    std::string state;
    bool root = false;  // the root search waits for it
  };
  // The requests to start now, at most `slots`, the most wanted first (the root's own first).
  std::vector<Request> take(std::size_t slots);
  // Request `id` came back: its recording, or nullopt where it did not run to its end (a hang, a
  // refusal): a branch that asked for it gives up. The root cannot: its own request without a
  // recording, or with one it does not make (the program ran otherwise there: not
  // deterministic), ends its search at that execution (root_lost).
  void arrived(std::uint64_t id, std::optional<Recording> rec);
  // The root's own request that ended its search so (nullopt: none did).
  std::optional<std::uint64_t> root_lost() const { return root_lost_; }
  // Whether the root waits for an execution nobody runs: take() would hand out its request first.
  bool root_needs() const;

  // The root search's executions so far, in its order: the request whose recording each was.
  const std::vector<std::uint64_t>& sequence() const { return sequence_; }
  bool exhausted() const { return exhausted_; }
  Strategy::Classes classes() const { return classes_; }
  // Its classes after its first `executions` executions (a search that stops at a failure).
  Strategy::Classes classes_after(std::uint64_t executions) const {
    if (executions == 0 || classes_after_.empty()) return {};
    return classes_after_[std::min<std::size_t>(executions, classes_after_.size()) - 1];
  }
  std::string describe() const { return describe_; }
  // Requests handed out, and recordings that came back.
  std::uint64_t requested() const { return next_id_; }
  std::uint64_t recordings() const { return recordings_.size(); }
  // The recordings the search did not count, by why: "62 beyond the search's: 20 repeating
  // another's choices, 30 from branches replaced since, 12 from branches the search came to
  // otherwise" (a guessed footprint, a state their key did not hold; for
  // tuning: docs/live.md, "Many processes").
  std::string waste() const;

 private:
  struct Branch {
    std::unique_ptr<Strategy> search;  // moved on to its next execution (the root's first: fresh)
    std::vector<ThreadId> prefix;      // that execution's first choices, as its state fixes them
    std::size_t depth = 0;             // the frozen prefix's length (0: the root)
    bool root = false;
    bool done = false;
    bool stale = false;  // no recording came back since it last found none to go on with
    std::optional<std::uint64_t> waiting;  // a request in flight that may be its execution
    std::optional<std::uint64_t> own;      // ... asked for from its own state
    std::size_t serial = 0;                // its number among every branch made (waste())
  };
  struct Arrived {
    std::uint64_t id;
    Recording rec;
  };
  // The recordings' choices as a trie: one recording stands for each node (the first that came).
  struct TrieNode {
    std::map<ThreadId, std::size_t> next;
    std::optional<std::size_t> rep;  // index into recordings_
  };
  void add_to_trie(std::size_t index);
  bool in_trie(const std::vector<ThreadId>& prefix) const;
  std::optional<std::size_t> feed_from_trie(Strategy& strategy, std::uint64_t index);
  // Feeds `b` its executions as far as the recordings go; true when it went on.
  bool advance(Branch& b);
  void add_branches(Resumable& r);
  void settle();

  Factory make_;
  std::vector<Branch> branches_;  // [0]: the root
  std::vector<Branch> fresh_;     // made by add_branches, joining branches_ in settle
  // Every branch's prefix, and what else decides its executions (its latest).
  std::map<std::vector<ThreadId>, std::string> known_;
  std::vector<Arrived> recordings_;
  std::vector<TrieNode> trie_;
  std::set<std::uint64_t> back_;                              // requests that came back
  std::map<std::uint64_t, std::vector<ThreadId>> in_flight_;  // request id -> its prefix
  std::vector<std::uint64_t> sequence_;
  std::vector<Strategy::Classes> classes_after_;  // classes_ after each of sequence_
  std::uint64_t next_id_ = 0;
  // waste(): each request's branch, the branches replaced by fresh ones, and the recordings whose
  // choices an earlier one had made.
  std::map<std::uint64_t, std::size_t> origin_;
  struct Made {
    bool replaced = false;  // by a fresh branch, its alternative having changed
    bool guessed = false;   // from an alternative with a guessed footprint
  };
  std::vector<Made> made_;  // by Branch::serial
  std::set<std::uint64_t> repeated_;
  bool exhausted_ = false;
  std::optional<std::uint64_t> root_lost_;
  Strategy::Classes classes_;
  std::string describe_;
};

}  // namespace racelab::sched

#pragma once
// The strategies, chosen by name in one place (make_strategy). Each lives in its own file. Those
// that search a tree (dfs, dpor) also say how to split it across jobs and shards (split.h).
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/strategies/split.h"
#include "sched/strategy.h"

namespace racelab::sched {

enum class StrategyKind { kRandom, kPct, kDfs, kDpor, kPos, kSurw, kStates };
struct StrategyParams;

// An option that belongs to one strategy (its row's `options`, factory.cc): a flag, or an unsigned
// number. The strategy's file says what it means; racelab explore registers every row's options
// where they stand in its --help, in table order, and apply_strategy_options hands the given ones
// to the chosen row.
struct StrategyOption {
  const char* flag;  // as the command line spells it: "--stateless"
  const char* help;  // explore's --help text
  bool number;       // takes an unsigned number (--cache-after 0) rather than being a flag
  // Where several options the chosen strategy does not own are given, the error names the one
  // ranked lowest (the order the checks ran in before the table held them).
  int refusal_rank;
};
// The most options one row owns.
inline constexpr std::size_t kMaxOwnOptions = 4;
// The values of the chosen row's own options, by their index in its `options`: 1 for a flag
// given, the number for a number; nullopt where not given (the strategy's default).
using OwnOptions = std::array<std::optional<std::uint64_t>, kMaxOwnOptions>;

// The one table of strategy names (factory.cc): parsing, listing and capabilities read it, so
// nothing outside src/sched/strategies/ branches on a strategy's kind.
struct StrategyInfo {
  StrategyKind kind;
  const char* name;
  // Proves absence when it exhausts its space (dfs within its bound, dpor unbounded): a search of
  // its cut short is inconclusive, a finished one a proof.
  bool proves;
  // Drives live subjects (dpor through the footprints the live runtime records for it:
  // live::Options::footprints).
  bool live;
  // How its executions are divided among jobs and shards (docs/scale.md): nullptr where execution
  // i depends only on i (and the calibration), so that indices are dealt out (Strategy::clone);
  // otherwise what cuts its search tree into subtrees (split.h). Read through make_splitter.
  std::unique_ptr<Splitter> (*splitter)(const StrategyParams& params);
  // Its space is bounded by max_preemptions (dfs): its proof holds within the bound.
  bool bounded;
  // max_preemptions is optional for it (dpor: unbounded unless given).
  bool optional_bound;
  // Its executions depend on the seed (the sampling strategies): another seed explores other
  // executions. dfs and dpor ignore it, so searching again with another seed repeats the search.
  bool seeded;
  // It reads each step's footprint (FootprintView::pending_op, step_touches ...): a live run
  // records them for it (live::Options::footprints), which costs every step.
  bool needs_footprints = false;
  // Its finished search covers every order of the operations racelab sees, with no bound given
  // (dpor, states): a clean live run under it says what that proof covers (proof_covers).
  bool proves_every_order = false;
  // Its search can be handed over to a fresh process and go on there (Strategy::resumable, dpor):
  // racelab live --all-findings needs it, since past a deadlock the process must end.
  bool resumable = false;
  // Its space gets smaller with a lower preemption bound (dfs; dpor given one): the remedy for
  // a search cut short may say "lower max_preemptions". nullptr: never.
  bool (*bound_shrinks)(const StrategyParams& params) = nullptr;
  // What its exhausted search of `n` executions proves, in its own words ("proven (dpor,
  // exhaustive, 12 executions)"); nullptr: "12 executions, exhaustive".
  std::string (*proof_brief)(const StrategyParams& params, std::uint64_t n) = nullptr;
  // What splitting its search across jobs or shards costs, as the rest of the sentence "note:
  // --jobs 2 splits dpor's search, …" (dpor: its state cache belongs to one job); "" where a
  // split costs nothing. nullptr: never anything.
  std::string (*split_cost)(const StrategyParams& params) = nullptr;
  // Its own options (at most kMaxOwnOptions), in --help order, and the check of how they combine
  // (throws InputError: "--cache-after: not with --stateless ..."); nullptr: any combination.
  std::span<const StrategyOption> options = {};
  void (*check_options)(const OwnOptions& own) = nullptr;
};
std::span<const StrategyInfo> strategy_table();

const char* strategy_name(StrategyKind kind);
// Throws InputError listing the valid names.
StrategyKind parse_strategy(const std::string& name);
// The names, in the order help texts and errors list them: "random | pct | dfs | dpor | pos |
// surw | states".
const char* strategy_names();
// The names as a list; `live_only`: those that drive live subjects.
std::vector<std::string> strategy_name_list(bool live_only = false);
// Each name with its kind, in table order, of the rows `keep` accepts (all where null): the one
// word-to-kind mapping a command line's or a scenario file's choice is parsed with.
std::vector<std::pair<std::string, StrategyKind>> strategy_choices(
    bool (*keep)(const StrategyInfo& info) = nullptr);
// "random | pct | dfs | dpor | pos | surw": the strategies of live subjects.
const char* live_strategy_names();
// "random, pct, pos and surw": the strategies a seed changes (the table's `seeded`), for help
// texts; `live_only`: of those, the ones that drive live subjects.
std::string seeded_strategy_names(bool live_only = false);
bool strategy_proves(StrategyKind kind);
// The table's row for `kind`.
const StrategyInfo& strategy_info(StrategyKind kind);
// The capabilities above, asked of the row of `params.kind` (false, the default words or ""
// where the row has no such function).
bool bound_shrinks(const StrategyParams& params);
// The row's proves_every_order, turned off by options that make the search miss classes (dpor's
// --source-sets: issue 35).
bool proves_every_order(const StrategyParams& params);
// Its row proves every order but these options do not (dpor --source-sets): the search ends
// without proving anything (coverage_sentence's misses_classes).
bool misses_classes(const StrategyParams& params);
std::string proof_brief(const StrategyParams& params, std::uint64_t n);
std::string split_cost(const StrategyParams& params);
// Gives `params` the strategy options the command line set, flag and value (1 for a flag), in
// any order: first the rows that own them check how they combine (check_options), then each must
// belong to the chosen strategy, params.kind, else InputError: "--stateless: only for --strategy
// dpor (this run's strategy is pct)" (of several, the one ranked lowest). Unknown flags are a bug.
void apply_strategy_options(StrategyParams& params,
                            std::span<const std::pair<std::string, std::uint64_t>> given);
// One option of params.kind's row, set as the command line would (tests and callers that build
// params themselves); throws std::invalid_argument when the row does not own `flag`.
void set_strategy_option(StrategyParams& params, std::string_view flag, std::uint64_t value = 1);

// The strategy that proves a live subject clean: the one live row that proves every order with
// no bound (dpor). racelab check's proof runs it.
const StrategyInfo& live_prover();
// The search of every continuation of `prefix` (the thread of each first step), for racelab
// replay against a fix: `base`'s parameters, made an unbounded proof that fixes the prefix.
StrategyParams continuation_search(StrategyParams base, std::vector<ThreadId> prefix);

// dpor's state cache runs only where a stateless search does not end within this many
// executions: stateless first, then, if the space is not exhausted, the cache from scratch. The
// cache can cost more executions than stateless dpor where classes rarely meet again (at a hit it
// expands every conflicting node in full, dpor_cache.h): measured on the bundled scenarios, up to
// 4.7 times on those whose stateless search ends within 80 executions (docs/performance.md); where
// it pays, stateless dpor needs 1,452 to millions and the cache 10 to 50 times fewer. A thousand
// stateless executions of the pipeline model take about 10 ms; every bundled scenario then runs
// no more executions than stateless dpor (tests/model/test_dpor_scenarios.cc checks it).
inline constexpr std::uint64_t kDporStatelessFirst = 1000;

struct StrategyParams {
  StrategyKind kind = StrategyKind::kPct;
  std::uint64_t seed = 1;
  int depth = 3;            // pct
  int max_preemptions = 2;  // dfs
  // A bound given explicitly (--max-preemptions, or max_preemptions in a scenario's [explore]
  // whose strategy's bound is optional): a strategy whose row has optional_bound (dpor) is
  // unbounded without it; dfs always uses max_preemptions.
  std::optional<int> explicit_bound;
  // The chosen strategy's own options (its row's `options`: dpor's --no-symmetry, --stateless,
  // --source-sets and --cache-after), set through apply_strategy_options or set_strategy_option;
  // read by the row's functions in factory.cc alone.
  OwnOptions own{};
  // dpor: the thread of each first step, fixed; the search explores what follows them
  // (make_dpor). One job; the other strategies take none (make_strategy refuses one).
  std::vector<ThreadId> prefix;
};

std::unique_ptr<Strategy> make_random(std::uint64_t seed);
// PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte: "A Randomized Scheduler with Probabilistic
// Guarantees of Finding Bugs", ASPLOS 2010).
std::unique_ptr<Strategy> make_pct(std::uint64_t seed, int depth);
// PCT learns the execution length k from its first executions, then keeps it.
inline constexpr std::uint64_t kPctCalibration = 64;
// Depth-first search of every schedule with at most `max_preemptions` preemptions (CHESS-style
// iterative context bounding, Musuvathi & Qadeer, PLDI 2007).
std::unique_ptr<Strategy> make_dfs(int max_preemptions);
// Source-set DPOR with sleep sets (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014): one execution
// per interleaving class, exhaustive with no bound (nullopt); with a bound, a heuristic. Model
// subjects only (they record each step's footprint); a live subject is refused.
// Where the subject declares symmetry groups (Context::spawn_symmetric) and `symmetry` is on, it
// explores one of two alike threads of a group: every state up to renaming them, not every class.
// With `states` (and no bound), on a subject that describes its state (state.h), it keeps a cache
// of the states it has explored in full and does not explore them again (dpor_cache.h): every
// class is explored or reaches such a state; the symmetry reduction is then the digest's.
// With a `prefix` (the thread of each first step), it runs those steps as given and explores
// every class of what follows them (racelab replay against a fix: every continuation of the
// steps that still apply); no race is reversed inside the prefix, and symmetry is off. A prefix
// thread that is not enabled at its step is a StrategyError.
// `stateless_first` (with `states`): run that many executions stateless first, and the cache
// only if they did not exhaust the space (kDporStatelessFirst); 0: the cache from the start.
std::unique_ptr<Strategy> make_dpor(std::optional<int> max_preemptions, bool symmetry = true,
                                    bool states = false, bool optimal = true,
                                    std::vector<ThreadId> prefix = {},
                                    std::uint64_t stateless_first = 0);
// POS, partial-order sampling (Yuan, Yang, Gu: "Partial Order Aware Concurrency Sampling", CAV
// 2018): random priorities per pending event, re-drawn for the events that race with each
// executed one (pos.cc).
std::unique_ptr<Strategy> make_pos(std::uint64_t seed);
// SURW, selectively uniform random walk (Zhao, Wolff, Mathur, Roychoudhury: "Selectively Uniform
// Concurrency Testing", ASPLOS 2025): threads weighted by their remaining events on one resource
// chosen per execution, learned from the first kSurwCalibration executions (surw.cc).
std::unique_ptr<Strategy> make_surw(std::uint64_t seed);
inline constexpr std::uint64_t kSurwCalibration = 8;
// Stateful depth-first search of every reachable state, alike threads renamed (states.cc,
// state.h): exhaustive with no bound, for model subjects that describe their state; one job.
std::unique_ptr<Strategy> make_states();

// How dfs and dpor split their search (dfs.cc, dpor.cc); the table's rows give them (dpor's
// without its symmetry reduction, whatever the params say: factory.cc).
std::unique_ptr<Splitter> make_dfs_splitter(int max_preemptions);
std::unique_ptr<Splitter> make_dpor_splitter(std::optional<int> max_preemptions,
                                             bool symmetry = true, bool optimal = true);
// The strategy's Splitter, or nullptr when it splits by execution index.
std::unique_ptr<Splitter> make_splitter(const StrategyParams& params);
std::unique_ptr<Strategy> make_strategy(const StrategyParams& params);

// A recorded step to replay: the thread's name and the operation's text, as schedule files hold.
struct ReplayStep {
  std::string thread;
  std::string op;
  bool operator==(const ReplayStep&) const = default;
};

enum class OnDivergence { kFail, kRandom };

// Replay as a checked prefix (as in Coyote): follows `steps`, checking at each step that the named
// thread is enabled and about to perform the recorded operation. On a mismatch it throws
// ReplayDivergence (kFail) or continues under `fallback` (kRandom). After the prefix it continues
// under `fallback`, or, when there is none, runs the lowest enabled thread without preempting.
class ReplayDivergence : public StrategyError {
 public:
  ReplayDivergence(std::uint64_t step, std::string expected, std::string got);
  std::uint64_t step;
};

class ReplayStrategy : public Strategy, private Guided {
 public:
  ReplayStrategy(std::vector<ReplayStep> steps, OnDivergence on_divergence,
                 std::unique_ptr<Strategy> fallback = nullptr);
  bool begin_execution(std::uint64_t index) override;
  ThreadId pick(const Decision& d) override;
  const Guided* guided() const override { return this; }
  std::optional<ThreadId> awaited(const Decision& d) const override;
  std::string describe() const override;
  bool diverged() const { return diverged_at_.has_value(); }
  std::optional<std::uint64_t> diverged_at() const { return diverged_at_; }
  // Where and why it diverged (kRandom), as ReplayDivergence says it: "diverged at step k:
  // expected …, got …"; empty when it did not.
  const std::string& divergence() const { return divergence_; }

 private:
  std::vector<ReplayStep> steps_;
  OnDivergence on_divergence_;
  std::unique_ptr<Strategy> fallback_;
  std::optional<std::uint64_t> diverged_at_;
  std::string divergence_;
};

// One step of a model schedule as a live run should meet it: the thread, by name, and the text of
// the operation it should be about to perform. The Python bridge makes them from a model schedule
// and an interposition table (live/python/follow.h).
struct FollowStep {
  std::string thread;
  std::string op;
};

// Forces a model schedule's interleaving on a live run (racelab live python --follow). At each
// decision it runs the thread of the next step not yet met; when that thread's pending operation
// is the step's, the step is met. A step its thread has already performed live (main started
// before the model's order asks for it) is passed over. A live program has operations the model
// does not (one model step can be several live ones): the step's thread keeps running until it
// reaches the step. When that thread cannot run, the previous thread continues if it can, else the
// lowest enabled one; a step whose thread has finished is given up. After the last step it runs
// without preemption.
class FollowStrategy : public Strategy {
 public:
  explicit FollowStrategy(std::vector<FollowStep> steps);
  bool begin_execution(std::uint64_t) override {
    next_ = 0;
    met_ = 0;
    performed_.clear();
    return true;
  }
  ThreadId pick(const Decision& d) override;
  std::string describe() const override;
  std::size_t met() const { return met_; }  // steps met in the last execution

 private:
  ThreadId choose(const Decision& d);
  std::vector<FollowStep> steps_;
  std::vector<int> occurrence_;  // step j is its thread's occurrence_[j]-th of that operation
  std::map<std::pair<std::string, std::string>, int> performed_;  // live, this execution
  std::size_t next_ = 0;
  std::size_t met_ = 0;
};

// Follows a list of thread choices while they are enabled; afterwards (or when a choice is not
// enabled) keeps the previous thread running if it can, else the lowest enabled thread. Shrinking
// uses it to try schedules with fewer preemptions.
class GuidedStrategy : public Strategy {
 public:
  explicit GuidedStrategy(std::vector<ThreadId> choices) : choices_(std::move(choices)) {}
  bool begin_execution(std::uint64_t) override { return true; }
  ThreadId pick(const Decision& d) override;
  std::string describe() const override { return "guided"; }

 private:
  std::vector<ThreadId> choices_;
};

}  // namespace racelab::sched

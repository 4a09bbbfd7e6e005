#include "sched/explore.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include "sched/shrink.h"
#include "util/errors.h"

namespace racelab::sched {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kBudget:
      return "budget";
    case StopReason::kExhausted:
      return "exhausted";
    case StopReason::kTimeLimit:
      return "time_limit";
    case StopReason::kInterrupted:
      return "interrupted";
  }
  return "?";
}

const FoundKind* ExploreResult::find(std::string_view kind) const {
  for (const FoundKind& f : found) {
    if (f.finding.kind == kind) return &f;
  }
  return nullptr;
}

namespace {

void shrink_all(Subject& subject, ExploreResult& out, const ExploreOptions& options) {
  for (FoundKind& fk : out.found) {
    ShrinkResult s = shrink(subject, fk.result.choices(), fk.finding.kind, options.run);
    fk.result = std::move(s.result);
    fk.preemptions = fk.result.preemptions;
    for (const Finding& f : fk.result.findings()) {
      if (f.kind == fk.finding.kind) fk.finding = f;
    }
  }
}

}  // namespace

void check_determinism(Subject& subject, ExploreResult& out, const RunOptions& run) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> v;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') {
        v.push_back(text.substr(start, i - start));
        start = i + 1;
      }
    }
    return v;
  };
  for (const FoundKind& fk : out.found) {
    GuidedStrategy again(fk.result.choices());
    auto second = run_execution(subject, again, 0, run);
    ++out.determinism_checked;
    const auto a = lines(fk.result.trace_text());
    const auto b = lines(second->trace_text());
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
    const bool same_findings = second->found(fk.finding.kind);
    if (k == a.size() && k == b.size() && same_findings) continue;
    out.determinism_failures.push_back(
        k < a.size() || k < b.size()
            ? fmt::format("{}: re-executing the schedule diverged at step {}: first run '{}', "
                          "second run '{}'",
                          fk.finding.kind, k, k < a.size() ? a[k] : "(end)",
                          k < b.size() ? b[k] : "(end)")
            : fmt::format("{}: re-executing the schedule gave the same steps but not the finding",
                          fk.finding.kind));
  }
}

ExploreResult explore(Subject& subject, const ExploreOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  auto strategy = make_strategy(options.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  auto last_progress = t0;
  Coverage coverage;

  for (std::uint64_t i = 0;; ++i) {
    if (i >= options.iterations) {
      // A DFS space of exactly `iterations` executions is covered: asking for the next one says.
      const bool done = strategy_proves(options.strategy.kind) &&
                        (strategy->exhausted() || !strategy->begin_execution(i));
      out.stop = done ? StopReason::kExhausted : StopReason::kBudget;
      break;
    }
    if (options.interrupt != nullptr && options.interrupt->load(std::memory_order_relaxed)) {
      out.stop = StopReason::kInterrupted;
      break;
    }
    if (options.time_limit_s > 0 && elapsed() >= options.time_limit_s) {
      out.stop = StopReason::kTimeLimit;
      break;
    }
    auto run = run_execution(subject, *strategy, i, options.run);
    if (!run) {
      out.stop = StopReason::kExhausted;
      break;
    }
    ++out.executions;
    out.steps += run->exec->steps().size();
    coverage.add(handoff_fingerprint(*run->exec));
    std::vector<Finding> fresh;
    for (const Finding& f : run->findings()) {
      if (out.find(f.kind) == nullptr) fresh.push_back(f);
    }
    if (!fresh.empty()) {
      const std::vector<ThreadId> choices = run->choices();
      for (std::size_t k = 0; k < fresh.size(); ++k) {
        FoundKind fk;
        fk.finding = fresh[k];
        fk.execution = i;
        fk.preemptions = fk.original_preemptions = run->preemptions;
        if (k + 1 == fresh.size()) {
          fk.result = std::move(*run);
        } else {  // several kinds in one execution: each keeps its own copy (a guided re-run)
          GuidedStrategy again(choices);
          fk.result = std::move(*run_execution(subject, again, 0, options.run));
        }
        out.found.push_back(std::move(fk));
      }
    }
    if (options.progress && clock::now() - last_progress > std::chrono::milliseconds(100)) {
      last_progress = clock::now();
      options.progress({out.executions, options.iterations, out.found.size(), elapsed()});
    }
  }
  out.classes = strategy->classes();
  out.interleavings = coverage.summary();
  if (options.shrink) shrink_all(subject, out, options);
  if (options.check_determinism) check_determinism(subject, out, options.run);
  out.seconds = elapsed();
  if (options.progress)
    options.progress({out.executions, options.iterations, out.found.size(), out.seconds});
  return out;
}

namespace {

// The first occurrence of each finding kind, by position in the single-worker order: (major,
// minor, pos) is (execution, 0, finding) for random and PCT, (subtree, execution within it,
// finding) for DFS.
struct Hit {
  std::tuple<std::uint64_t, std::uint64_t, std::size_t> key;
  Finding finding;
  std::uint64_t preemptions = 0;
  std::vector<ThreadId> choices;
};

struct Hits {
  std::map<std::string, Hit> by_kind;

  // Keeps `h` when it comes before what is kept for its kind.
  void offer(const Hit& h) {
    auto it = by_kind.find(h.finding.kind);
    if (it == by_kind.end() || h.key < it->second.key) by_kind[h.finding.kind] = h;
  }
  void add(std::uint64_t major, std::uint64_t minor, const ExecutionResult& run) {
    std::vector<ThreadId> choices;
    const auto& fs = run.findings();
    for (std::size_t pos = 0; pos < fs.size(); ++pos) {
      auto key = std::make_tuple(major, minor, pos);
      auto it = by_kind.find(fs[pos].kind);
      if (it != by_kind.end() && it->second.key <= key) continue;
      if (choices.empty()) choices = run.choices();
      offer(Hit{key, fs[pos], run.preemptions, choices});
    }
  }
  void merge(const Hits& other) {
    for (const auto& [kind, h] : other.by_kind) offer(h);
  }
};

// Stops every worker at the next execution: the budget is no reason (each worker knows its own
// share), an interrupt or the time limit is.
struct StopFlag {
  std::atomic<int> reason{-1};
  void set(StopReason r) {
    int expected = -1;
    reason.compare_exchange_strong(expected, static_cast<int>(r));
  }
  bool raised() const { return reason.load(std::memory_order_relaxed) >= 0; }
};

class Workers {
 public:
  Workers(const ExploreOptions& o, StopFlag& stop)
      : o_(o), stop_(stop), t0_(std::chrono::steady_clock::now()) {}

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  // Called before each execution; false when the run must stop.
  bool go() {
    if (o_.interrupt != nullptr && o_.interrupt->load(std::memory_order_relaxed))
      stop_.set(StopReason::kInterrupted);
    if (o_.time_limit_s > 0 && elapsed() >= o_.time_limit_s) stop_.set(StopReason::kTimeLimit);
    return !stop_.raised();
  }
  // Runs `body(worker)` on jobs threads; the calling thread reports progress meanwhile.
  template <class Body>
  void run(unsigned jobs, Body body, const std::atomic<std::uint64_t>& executions,
           const std::atomic<std::size_t>& kinds) {
    std::vector<std::thread> threads;
    std::exception_ptr error;
    std::mutex error_mutex;
    unsigned running = jobs;
    std::mutex done_mutex;
    std::condition_variable done;
    for (unsigned w = 0; w < jobs; ++w) {
      threads.emplace_back([&, w] {
        try {
          body(w);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          stop_.set(StopReason::kInterrupted);
        }
        std::lock_guard<std::mutex> lock(done_mutex);
        --running;
        done.notify_all();
      });
    }
    {
      std::unique_lock<std::mutex> lock(done_mutex);
      while (!done.wait_for(lock, std::chrono::milliseconds(100), [&] { return running == 0; })) {
        if (o_.progress) o_.progress({executions.load(), o_.iterations, kinds.load(), elapsed()});
      }
    }
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
  }

 private:
  const ExploreOptions& o_;
  StopFlag& stop_;
  std::chrono::steady_clock::time_point t0_;
};

// Found kinds, in single-worker discovery order, re-executed on `subject` from their choices.
void collect_found(Subject& subject, const Hits& hits, const ExploreOptions& o, ExploreResult& out,
                   bool dfs_shard, const std::vector<std::uint64_t>& dfs_offsets) {
  std::vector<const Hit*> order;
  for (const auto& [kind, h] : hits.by_kind) order.push_back(&h);
  std::sort(order.begin(), order.end(), [](const Hit* a, const Hit* b) { return a->key < b->key; });
  for (const Hit* h : order) {
    FoundKind fk;
    fk.finding = h->finding;
    if (dfs_shard) {
      fk.subtree = std::get<0>(h->key);
      fk.execution = std::get<1>(h->key);
    } else if (!dfs_offsets.empty()) {
      fk.execution = dfs_offsets[std::get<0>(h->key)] + std::get<1>(h->key);
    } else {
      fk.execution = std::get<0>(h->key);
    }
    fk.preemptions = fk.original_preemptions = h->preemptions;
    GuidedStrategy again(h->choices);
    fk.result = std::move(*run_execution(subject, again, 0, o.run));
    out.found.push_back(std::move(fk));
  }
}

ExploreResult explore_indices(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  auto strategy = make_strategy(o.strategy);
  ExploreResult out;
  out.strategy = strategy->describe();
  Hits hits;
  Coverage coverage;
  std::atomic<std::uint64_t> executions{0};
  std::atomic<std::uint64_t> steps{0};
  std::atomic<std::size_t> kinds{0};
  // PCT and SURW learn from their first executions: every shard runs them, in order, on one
  // thread.
  const std::uint64_t calibration = std::min(o.iterations, strategy->calibration());
  for (std::uint64_t i = 0; i < calibration; ++i) {
    if (!workers.go()) break;
    auto run = run_execution(*subject0, *strategy, i, o.run);
    if (i % p.shards != p.shard) continue;
    executions.fetch_add(1);
    steps.fetch_add(run->exec->steps().size());
    coverage.add(handoff_fingerprint(*run->exec));
    hits.add(i, 0, *run);
    kinds.store(hits.by_kind.size());
  }
  std::uint64_t first = calibration;
  while (first % p.shards != p.shard) ++first;
  std::atomic<std::uint64_t> next{0};
  constexpr std::uint64_t kChunk = 64;
  std::vector<Hits> local(p.jobs);
  std::vector<Coverage> local_coverage(p.jobs);
  std::mutex kinds_mutex;
  std::set<std::string> kind_names;
  for (const auto& [kind, h] : hits.by_kind) kind_names.insert(kind);
  if (!stop.raised()) {
    workers.run(
        p.jobs,
        [&](unsigned w) {
          auto subject = make();
          auto strat = strategy->clone();
          if (!strat) throw std::logic_error("strategy cannot be split: " + strategy->describe());
          for (;;) {
            const std::uint64_t begin = next.fetch_add(kChunk);
            for (std::uint64_t pos = begin; pos < begin + kChunk; ++pos) {
              const std::uint64_t i = first + pos * p.shards;
              if (i >= o.iterations || !workers.go()) return;
              auto run = run_execution(*subject, *strat, i, o.run);
              executions.fetch_add(1);
              steps.fetch_add(run->exec->steps().size());
              local_coverage[w].add(handoff_fingerprint(*run->exec));
              if (!run->findings().empty()) {
                local[w].add(i, 0, *run);
                std::lock_guard<std::mutex> lock(kinds_mutex);
                for (const Finding& f : run->findings()) kind_names.insert(f.kind);
                kinds.store(kind_names.size());
              }
            }
          }
        },
        executions, kinds);
  }
  for (const Hits& h : local) hits.merge(h);
  for (const Coverage& c : local_coverage) coverage.merge(c);
  out.interleavings = coverage.summary();
  if (p.shards > 1) out.interleaving_counts = std::make_shared<Coverage>(std::move(coverage));
  out.executions = executions.load();
  out.steps = steps.load();
  out.stop = stop.raised() ? static_cast<StopReason>(stop.reason.load()) : StopReason::kBudget;
  collect_found(*subject0, hits, o, out, false, {});
  if (o.shrink) shrink_all(*subject0, out, o);
  if (o.check_determinism) check_determinism(*subject0, out, o.run);
  out.seconds = workers.elapsed();
  if (o.progress) o.progress({out.executions, o.iterations, out.found.size(), out.seconds});
  return out;
}

// Prefixes deep enough to give every worker of every shard several subtrees.
std::vector<DfsPrefix> split_dfs(Subject& subject, const ExploreOptions& o, std::size_t& depth) {
  const std::uint64_t target =
      std::max<std::uint64_t>(8, 4 * o.partition.jobs * o.partition.shards);
  std::vector<DfsPrefix> prefixes;
  std::size_t previous = 0;
  for (depth = 1; depth <= 512; ++depth) {
    prefixes.clear();
    auto enumerate = make_dfs_prefixes(o.strategy.max_preemptions, depth, &prefixes);
    for (std::uint64_t i = 0; run_execution(subject, *enumerate, i, o.run); ++i) {
    }
    if (prefixes.size() >= target) break;
    // Every execution is shorter than the depth: the prefixes are whole executions.
    bool all_short = true;
    for (const auto& pre : prefixes) all_short = all_short && pre.size() < depth;
    if (all_short && prefixes.size() == previous) break;
    previous = prefixes.size();
  }
  return prefixes;
}

ExploreResult explore_dfs_split(const SubjectFactory& make, const ExploreOptions& o) {
  const Partition& p = o.partition;
  StopFlag stop;
  Workers workers(o, stop);
  auto subject0 = make();
  ExploreResult out;
  out.strategy = make_strategy(o.strategy)->describe();
  const std::vector<DfsPrefix> prefixes = split_dfs(*subject0, o, out.split_depth);
  out.subtree_count = prefixes.size();

  struct Sub {
    std::uint64_t index = 0;
    std::vector<std::uint32_t> step_counts;
    std::vector<std::uint64_t> fingerprints;  // per execution, as step_counts
    bool complete = false;
    bool done = false;
    bool skipped = false;
    Hits hits;
  };
  std::vector<Sub> subs;
  for (std::uint64_t j = p.shard; j < prefixes.size(); j += p.shards) subs.push_back(Sub{j});
  std::mutex m;
  std::set<std::string> kind_names;
  std::atomic<std::uint64_t> next{0};
  std::atomic<std::uint64_t> executions{0};
  std::atomic<std::size_t> kinds{0};
  workers.run(
      p.jobs,
      [&](unsigned) {
        auto subject = make();
        for (;;) {
          const std::uint64_t k = next.fetch_add(1);
          if (k >= subs.size() || !workers.go()) return;
          Sub& sub = subs[k];
          if (p.shards == 1) {  // skip what the budget already excludes, once that is known
            std::lock_guard<std::mutex> lock(m);
            std::uint64_t before = 0;
            bool known = true;
            for (std::uint64_t q = 0; q < k; ++q) {
              known = known && subs[q].done;
              before += subs[q].step_counts.size();
            }
            if (known && before >= o.iterations) {
              sub.skipped = sub.done = true;
              continue;
            }
          }
          auto strat = make_dfs_subtree(o.strategy.max_preemptions, prefixes[sub.index]);
          Sub result{sub.index};
          for (std::uint64_t local = 0;; ++local) {
            if (local >= o.iterations || !workers.go()) break;
            auto run = run_execution(*subject, *strat, local, o.run);
            if (!run) {
              result.complete = true;
              break;
            }
            executions.fetch_add(1);
            result.step_counts.push_back(static_cast<std::uint32_t>(run->exec->steps().size()));
            result.fingerprints.push_back(handoff_fingerprint(*run->exec));
            if (!run->findings().empty()) result.hits.add(sub.index, local, *run);
          }
          std::lock_guard<std::mutex> lock(m);
          result.done = true;
          for (const auto& [kind, h] : result.hits.by_kind) kind_names.insert(kind);
          kinds.store(kind_names.size());
          sub = std::move(result);
        }
      },
      executions, kinds);

  Hits hits;
  Coverage coverage;
  bool all_complete = true;
  for (const Sub& s : subs) all_complete = all_complete && s.complete;
  if (p.shards > 1) {
    // A shard cannot place its subtrees in the global order: it reports them; merge does.
    for (const Sub& s : subs) {
      std::uint64_t st = 0;
      for (auto c : s.step_counts) st += c;
      out.subtrees.push_back({s.index, s.step_counts.size(), st, s.complete});
      out.executions += s.step_counts.size();
      out.steps += st;
      hits.merge(s.hits);
      for (auto fp : s.fingerprints) coverage.add(fp);
    }
    out.stop = stop.raised()  ? static_cast<StopReason>(stop.reason.load())
               : all_complete ? StopReason::kExhausted
                              : StopReason::kBudget;
    collect_found(*subject0, hits, o, out, true, {});
    out.interleaving_counts = std::make_shared<Coverage>(coverage);
  } else {
    // Single-worker order: subtree after subtree; the budget cuts it at o.iterations.
    std::vector<std::uint64_t> offsets(prefixes.size(), 0);
    std::uint64_t total = 0;
    for (const Sub& s : subs) {
      offsets[s.index] = total;
      const std::uint64_t room = total < o.iterations ? o.iterations - total : 0;
      const std::uint64_t counted = std::min<std::uint64_t>(room, s.step_counts.size());
      for (std::uint64_t e = 0; e < counted; ++e) {
        out.steps += s.step_counts[e];
        coverage.add(s.fingerprints[e]);
      }
      out.executions += counted;
      for (const auto& [kind, h] : s.hits.by_kind) {
        if (std::get<1>(h.key) < room) hits.offer(h);
      }
      total += s.step_counts.size();
      out.subtrees.push_back({s.index, s.step_counts.size(), 0, s.complete});
    }
    out.stop = stop.raised()                           ? static_cast<StopReason>(stop.reason.load())
               : all_complete && total <= o.iterations ? StopReason::kExhausted
                                                       : StopReason::kBudget;
    collect_found(*subject0, hits, o, out, false, offsets);
  }
  out.interleavings = coverage.summary();
  if (o.shrink) shrink_all(*subject0, out, o);
  if (o.check_determinism) check_determinism(*subject0, out, o.run);
  out.seconds = workers.elapsed();
  if (o.progress) o.progress({out.executions, o.iterations, out.found.size(), out.seconds});
  return out;
}

}  // namespace

ExploreResult explore(const SubjectFactory& make, const ExploreOptions& options) {
  const Partition& p = options.partition;
  if (p.shards == 0 || p.shard >= p.shards || p.jobs == 0) {
    throw std::invalid_argument("explore: invalid partition");
  }
  if (options.strategy.kind == StrategyKind::kDpor && p.shards > 1) {
    throw InputError(
        "dpor does not split across shards (its backtrack sets grow as it runs): run it as one "
        "shard");
  }
  if (!p.split() || options.strategy.kind == StrategyKind::kDpor) {  // dpor: one job (explore.h)
    auto subject = make();
    ExploreResult out = explore(*subject, options);
    if (p.jobs > 1) out.strategy += ", one job: dpor does not split";
    return out;
  }
  if (options.strategy.kind == StrategyKind::kDfs) return explore_dfs_split(make, options);
  return explore_indices(make, options);
}

}  // namespace racelab::sched

#include "run/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "model/pipeline.h"
#include "report/html.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "report/schedule_paths.h"
#include "report/shard_read.h"
#include "run/explore.h"
#include "sched/coverage.h"
#include "sched/explore.h"
#include "sched/loop.h"
#include "sched/schedule.h"
#include "util/document.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::run {

namespace fs = std::filesystem;
results::ScenarioRun merge_exploration(const std::vector<std::string>& dirs) {
  if (dirs.empty()) throw InputError("merge: no shard directories given");
  std::vector<report::ShardReport> reports;
  for (const auto& d : dirs) reports.push_back(report::read_shard_report(d));

  // Everything that must be equal for the shards to be parts of one exploration.
  const report::ShardReport& first = reports.front();
  std::uint64_t shards = 0;
  std::map<std::uint64_t, std::string> seen;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    const report::ShardReport& r = reports[k];
    if (!r.is_shard) {
      throw InputError(
          fmt::format("{}: not a shard (run explore/suite with --shard K/N)", dirs[k]));
    }
    for (std::size_t i = 0; i < r.identity.size(); ++i) {
      const report::ShardIdentity& mine = r.identity[i];
      if (!mine.same_as(first.identity[i])) {
        throw InputError(
            fmt::format("{}: {} {} does not match {}'s {}: these shards are not one exploration",
                        dirs[k], mine.key, mine.text(), dirs[0], first.identity[i].text()));
      }
    }
    const auto n = r.shards.get();
    const auto s = r.shard.get();
    if (k == 0) shards = n;
    if (n != shards) {
      throw InputError(fmt::format("{}: shard of {} does not match {}'s shards of {}", dirs[k], n,
                                   dirs[0], shards));
    }
    if (seen.count(s))
      throw InputError(fmt::format("{}: shard {}/{} is also in {}", dirs[k], s, n, seen[s]));
    seen[s] = dirs[k];
  }
  for (std::uint64_t s = 0; s < shards; ++s) {
    if (!seen.count(s))
      throw InputError(fmt::format("merge: shard {}/{} is missing ({} of {} given)", s, shards,
                                   seen.size(), shards));
  }

  // The scenario, as the shards ran it.
  results::ScenarioRun run;
  const std::string& path = first.scenario_path.get();
  run.scenario = model::load_scenario(path);
  const std::string& hash = first.scenario_hash.get();
  // Shards of `explore --torch V` ran the scenario under V's profile (report.json's "torch").
  if (run.scenario.hash != hash && !run.scenario.live && first.torch) {
    model::Scenario under = run.scenario;
    model::apply_torch(under, *first.torch);
    if (under.hash == hash) run.scenario = std::move(under);
  }
  if (run.scenario.hash != hash) {
    throw InputError(
        fmt::format("{}: the scenario changed since the shards ran (hash {} now, {} then)", path,
                    run.scenario.hash, hash));
  }
  run.options = run::explore_options(run.scenario);
  run.options.strategy.kind = first.strategy.get();
  run.options.strategy.seed = first.seed.get();
  run.options.strategy.depth = first.depth.get();
  run.options.strategy.max_preemptions = first.max_preemptions.get();
  run.options.iterations = first.iterations.get();
  run.result.strategy = first.strategy_description.get();
  // A strategy with a Splitter (dfs, dpor): shards ran subtrees; otherwise execution indices.
  const auto splitter = sched::make_splitter(run.options.strategy);
  const bool by_subtree = splitter != nullptr;
  const bool counts_classes = by_subtree && splitter->counts_classes();
  std::uint64_t redundant = 0;

  // Subtrees: those of all shards, in index order, are the single-worker order (sched::SplitOrder,
  // as one process folds its pieces), cut at the budget.
  sched::SplitOrder order(run.options.iterations);
  std::vector<std::uint64_t> offsets;  // each subtree's first execution in that order
  if (by_subtree) {
    const auto count = first.subtrees.get();
    std::vector<std::int64_t> sizes(count, -1);
    std::vector<char> complete(count, 0);
    for (std::size_t k = 0; k < reports.size(); ++k) {
      const report::ShardReport& r = reports[k];
      if (r.subtrees.get() != count) {
        throw InputError(fmt::format("{}: split into {} subtrees, {} into {}", dirs[k],
                                     r.subtrees_text, dirs[0], count));
      }
      for (const auto& t : r.ran.get()) {
        const auto j = t.index.get();
        if (j >= count || sizes[j] >= 0)
          throw InputError(fmt::format("{}: subtree {} out of range or repeated", dirs[k], j));
        sizes[j] = t.executions.get();
        if (counts_classes) redundant += t.redundant.get();
        complete[j] = t.complete.get();
        run.result.steps += t.steps.get();
      }
    }
    offsets.resize(count);
    for (std::uint64_t j = 0; j < count; ++j) {
      if (sizes[j] < 0) throw InputError(fmt::format("merge: no shard ran DFS subtree {}", j));
      offsets[j] = order.add(static_cast<std::uint64_t>(sizes[j]), complete[j] != 0);
    }
  }

  // The first finding of each kind in the single-worker order: the model's keep policy, each
  // finding offered at its place (an execution index; a subtree's execution placed by `order`),
  // `from` remembering the shard and preemptions before shrinking of each position offered.
  sched::KeepFirstOfEachKind kept;
  std::map<std::pair<std::string, sched::FindingPosition>, std::pair<std::size_t, std::uint64_t>>
      from;
  sched::StopReason stop = sched::StopReason::kBudget;
  for (std::size_t k = 0; k < reports.size(); ++k) {
    const report::ShardReport& r = reports[k];
    if (!by_subtree) {
      run.result.executions += r.executions.get();
      run.result.steps += r.steps.get();
    }
    run.result.seconds = std::max(run.result.seconds, r.seconds.get());
    r.stopped_by.get();
    if (r.stop == sched::StopReason::kInterrupted || r.stop == sched::StopReason::kTimeLimit)
      stop = *r.stop;
    const std::vector<report::ShardFinding>& fs_ = r.findings.get();
    for (std::size_t pos = 0; pos < fs_.size(); ++pos) {
      const report::ShardFinding& f = fs_[pos];
      std::optional<sched::FindingPosition> at =
          sched::FindingPosition{std::nullopt, f.execution.get(), pos};
      if (by_subtree) {
        if (!f.subtree)
          throw InputError(fmt::format("{}: DFS finding without its subtree", dirs[k]));
        const auto j = f.subtree->get();
        // Beyond the budget in the single-worker order (or a subtree the split does not have).
        at = j < offsets.size() ? order.place(*at, offsets[j]) : std::nullopt;
        if (!at) continue;
      }
      sched::Finding finding;
      finding.kind = f.kind.get();
      from.emplace(std::make_pair(finding.kind, *at),
                   std::make_pair(k, f.preemptions_before_shrink.get()));
      kept.offer({*at, std::move(finding), f.preemptions.get(), {}, {}});
    }
  }
  // Interleaving classes: the union of the shards' counts, when every shard has them and no
  // subtree runs past the budget's cut (a shard cannot say which of its executions lie beyond it).
  bool counts_complete = !by_subtree || order.within_cap();
  sched::Coverage& coverage = run.result.coverage;
  for (std::size_t k = 0; k < reports.size() && counts_complete; ++k) {
    if (!reports[k].interleavings) {
      counts_complete = false;
      break;
    }
    const report::ShardInterleavings& cov = *reports[k].interleavings;
    if (cov.saturated.get()) coverage.mark_saturated();
    for (const auto& fp : cov.fingerprints) coverage.add(fp.get().first, fp.get().second);
  }
  run.result.coverage_counted = counts_complete;
  if (by_subtree) {
    run.result.executions = std::min(order.total(), run.options.iterations);
    if (stop == sched::StopReason::kBudget && order.exhausted())
      stop = sched::StopReason::kExhausted;
    // dpor: every execution not abandoned is a class, when none lies beyond the cut.
    if (counts_classes && order.within_cap())
      run.result.classes = sched::Strategy::Classes{order.total() - redundant, redundant};
  }
  run.result.stop = stop;

  // Re-execute each kept finding, in position order, from its shard's schedule.
  std::vector<const sched::KeepFirstOfEachKind::First*> picks;
  for (const auto& [kind, first] : kept.firsts()) picks.push_back(&first);
  std::sort(picks.begin(), picks.end(), [](const auto* a, const auto* b) { return a->at < b->at; });
  model::PipelineModel model(run.scenario);
  for (const auto* pick : picks) {
    const std::string& kind = pick->finding.kind;
    const auto& [shard, before_shrink] = from.at({kind, pick->at});
    const fs::path sched_path = report::schedule_path(
        dirs[shard], {report::ScheduleName::Layout::kScenario, run.scenario.name, kind});
    const sched::Schedule s = report::read_schedule(sched_path.string());
    sched::ReplayStrategy replay(s.steps, sched::OnDivergence::kFail);
    sched::ExecutionResult result = sched::run_replay(model, replay, sched_path.string());
    sched::FoundKind fk;
    fk.execution = pick->at.execution;
    fk.preemptions = pick->preemptions;
    fk.original_preemptions = before_shrink;
    bool matched = false;
    for (const auto& f : result.findings) {
      if (f.kind == kind) {
        fk.finding = f;
        matched = true;
      }
    }
    if (!matched)
      throw InputError(
          fmt::format("{}: replaying it no longer gives {}", sched_path.string(), kind));
    fk.result = std::move(result);
    run.result.found.push_back(std::move(fk));
  }
  if (first.determinism) {  // the shards checked: so does the merged run
    run.options.check_determinism = true;
    sched::check_determinism(model, run.result, run.options.run);
  }
  run::judge(run);
  run.warmup_seconds = first.warmup_seconds.get();
  run.makespan_seconds = first.makespan_seconds.get();
  return run;
}

MergeResult merge_shards(const std::vector<std::string>& dirs, const std::string& out,
                         const std::string& junit, const MergePrinter& print) {
  const bool suites = fs::exists(fs::path(dirs.front()) / "summary.json");
  for (const auto& d : dirs) {
    if (!fs::is_directory(d)) throw InputError(d + ": not a directory");
    if (fs::exists(fs::path(d) / "summary.json") != suites) {
      throw InputError(fmt::format("{}: mixes suite and explore outputs ({} {} summary.json)", d, d,
                                   suites ? "has no" : "has a"));
    }
  }
  MergeResult result;
  result.suite = suites;
  SuiteTotals& totals = result.totals;
  std::vector<results::ScenarioRun> runs;
  std::vector<std::vector<report::FoundOutput>> found;
  std::vector<results::LiveCaseRun> live;
  std::vector<nlohmann::json> entries;
  auto add_run = [&](results::ScenarioRun run) {
    runs.push_back(std::move(run));
    const results::ScenarioRun& r = runs.back();
    const std::string dir = suites ? (fs::path(out) / r.scenario.name).string() : out;
    report::ExploreOutput written = report::write_explore_outputs(r, dir);
    entries.push_back(report::suite_summary_entry(r, written, dir));
    totals.seconds += r.result.seconds;
    totals.add(r.verdict());
    if (print.on_run) print.on_run(r, written);
    found.push_back(std::move(written.found));
  };
  if (suites) {
    // The scenarios in the suite's order, from shard 0's summary (it alone ran the live cases,
    // kept as judged there), wherever shard 0 is among the directories; every shard must have
    // every model scenario.
    std::vector<report::ShardSummary> summaries;
    for (const auto& d : dirs) summaries.push_back(report::read_shard_summary(d));
    const report::ShardSummary* summary = &summaries.front();
    for (const auto& other : summaries) {
      if (other.shard_zero.get()) {
        summary = &other;
        break;
      }
    }
    runs.reserve(summary->scenarios.size());
    live.reserve(summary->scenarios.size());
    for (const auto& entry : summary->scenarios) {
      if (entry.live.get()) {
        live.push_back(report::live_case_from_summary(entry.entry));
        totals.add(live.back().verdict);
        totals.seconds += live.back().seconds;
        entries.push_back(entry.entry);
        if (print.on_live) print.on_live(live.back());
        continue;
      }
      const std::string& name = entry.scenario.get();
      std::vector<std::string> scenario_dirs;
      for (const auto& d : dirs) scenario_dirs.push_back((fs::path(d) / name).string());
      add_run(merge_exploration(scenario_dirs));
    }
  } else {
    add_run(merge_exploration(dirs));
  }
  std::vector<report::HtmlScenario> pages;
  for (std::size_t k = 0; k < runs.size(); ++k) pages.push_back({&runs[k], found[k]});
  ensure_directory(out);
  if (suites) {
    write_file_atomic(
        fs::path(out) / "summary.json",
        document_text(report::suite_summary(entries, false, totals.seconds, sched::Partition{})));
    write_file_atomic(fs::path(out) / "report.html",
                      report::suite_html({.title = "racelab suite (merged)",
                                          .scenarios = pages,
                                          .live = &live,
                                          .totals = totals}));
  } else {
    write_file_atomic(fs::path(out) / "report.html",
                      report::explore_html(pages, "racelab explore (merged)", totals.seconds));
  }
  if (!junit.empty()) write_file_atomic(junit, report::junit_xml(runs, totals.seconds, live));
  result.exit_code =
      suites ? (totals.ok() ? kExitOk : kExitFound) : results::explore_exit_code(runs.front());
  return result;
}

}  // namespace racelab::run

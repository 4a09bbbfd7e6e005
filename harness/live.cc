// racelab live torch | python | alloc: the options (one set shared by the two searches). The
// subcommands run in live_torch.cc and live_python.cc; a search's verdict is printed by
// live_search.cc.
#include "live.h"

#include <fmt/format.h>

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "command.h"
#include "model/settings.h"
#include "sched/strategies/strategies.h"
#include "transformers.h"

namespace racelab::cli {

using namespace livecmd;

namespace {

template <std::size_t N>
std::string joined(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : " | ") + std::string(n);
  return out;
}

// The end of racelab live torch --help: each scenario key and its option here (model/settings.h;
// tests/live/check_settings.py compares it with tools/pipelines/settings.py).
std::string settings_footer() {
  std::string out = "\nScenario settings (docs/scenarios.md) and their options here:\n";
  for (const auto& s : model::settings::kLiveTorchOptions) {
    std::string line =
        fmt::format("  {:<30}{:<22}{}", s.key, s.option.empty() ? "-" : s.option, s.note);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

// The options every live search shares (live torch, live python).
void add_search_options(CLI::App* cmd, LiveArgs& a) {
  // Checked before conversion, in racelab's words (command.h): "-1" never wraps.
  enum_option(cmd, "--strategy", a.strategy,
              sched::strategy_choices([](const sched::StrategyInfo& info) { return info.live; }),
              sched::live_strategy_names())
      ->default_str(sched::strategy_name(a.strategy));
  cmd->add_option("--seed", a.seed, "seed of " + sched::seeded_strategy_names(true))
      ->capture_default_str()
      ->check(integer_check(0));
  cmd->add_option("--depth", a.depth, "pct depth")
      ->capture_default_str()
      ->check(integer_check(1, 64));
  cmd->add_option("--max-preemptions", a.preemptions, "dfs preemption bound")
      ->capture_default_str()
      ->check(integer_check(0, 64));
  cmd->add_option("--executions", a.executions, "executions to run at most")
      ->capture_default_str()
      ->check(integer_check(1));
  cmd->add_option("--time-limit", a.time_limit, "stop after this many seconds, keeping results")
      ->check(seconds_check());
  cmd->add_option("--hang-timeout", a.hang_timeout,
                  "seconds without progress that make a hang (must exceed the longest compile)")
      ->capture_default_str()
      ->check(seconds_check());
  cmd->add_option("--settle-ms", a.settle_ms,
                  "quiet time granted, before a decision, to a thread still inside a blocking call "
                  "whose serving thread waits (the one case quiescence cannot see; 0: none)")
      ->capture_default_str()
      ->check(integer_check(0, 600000));
  cmd->add_option("--cycle-confirm-ms", a.cycle_confirm_ms,
                  "a wait-for cycle through a blocking call that holds still this long is "
                  "reported as a deadlock without waiting for --hang-timeout")
      ->capture_default_str()
      ->check(integer_check(0, 3600000));
  enum_option(cmd, "--expect", a.expect, results::live_expect_table(),
              "clean (exit 1 on any deadlock, hang or exception) | deadlock (exit 1 unless one "
              "is found)")
      ->default_str(results::live_expect_name(a.expect));
  cmd->add_flag("--all-findings", a.all_findings,
                "dpor: search on past every failure to the end, keeping each kind's first "
                "execution and schedule; past a deadlock, in a fresh process (docs/live.md)");
  cmd->add_option("--continue-from", a.continue_from,
                  "the fresh process of an --all-findings search: the handover file it goes on "
                  "from")
      ->group("");
  cmd->add_option("--jobs", a.jobs,
                  "dpor: run the search's executions in N worker processes at once (0: one per "
                  "core); the same executions, classes and kinds as one process (docs/live.md, "
                  "\"Many processes\")")
      ->capture_default_str()
      ->check(integer_check(0, 256));
  cmd->add_option("--split-worker", a.split_worker,
                  "a worker process of a --jobs search: its directory")
      ->group("");
  cmd->add_option("--replay", a.replay, "run the schedule file once (its parameters apply)");
  cmd->add_option("--out", a.out, "output directory")->capture_default_str();
}

void add_live(CLI::App& app, Runner& run) {
  auto live = app.add_subcommand("live", "run live subjects: real code on real threads");
  live->require_subcommand(1);

  auto t = std::make_shared<LiveArgs>();
  auto* torch = live->add_subcommand(
      "torch", "the LibTorch drafter workload under the scheduler (deadlock search and replay)");
  torch->add_option("--drafters", t->cfg.drafters, "drafter threads in all (over --gpus)")
      ->capture_default_str();
  // The scenario format's names (model/settings.h): [warmup] mode, backward, seq_len.
  torch
      ->add_option("--warmup", t->cfg.warmup,
                   joined(model::settings::kLiveWarmupModes) + " ([warmup] mode)")
      ->capture_default_str();
  torch->add_flag("--no-warmup-backward", t->no_warmup_backward,
                  "sequential warmup runs the forward only ([warmup] backward = false)");
  torch->add_option("--warmup-seq-len", t->cfg.warmup_seq_len,
                    "sequential warmup length ([warmup] seq_len; default: the first training "
                    "length)");
  torch->add_option("--device", t->cfg.device, "cpu | cuda")->capture_default_str();
  torch->add_option("--gpus", t->cfg.gpus, "cuda: drafter i runs on cuda:(i % gpus)")
      ->capture_default_str();
  torch
      ->add_option("--attention", t->cfg.attention,
                   joined(model::settings::kWorkloadAttentions) +
                       " (the workload's own: the math around the compiled bias, every variant "
                       "compiled as flex_compiled is; not [pipeline] attention)")
      ->capture_default_str();
  // The Python pipelines' spellings (model/settings.h), and the older ones as aliases.
  torch->add_option("--seq-len", t->shape.seq_len, "training length (default 128)");
  torch->add_option("--steps", t->shape.steps,
                    "training steps per drafter at --seq-len (default 1)");
  torch->add_option("--seq-lens", t->shape.seq_lens,
                    "L1,L2,...: one step per length (the older spelling of --seq-len and --steps)");
  torch->add_option("--heads", t->cfg.heads, "attention heads")->capture_default_str();
  torch->add_option("--head-dim", t->shape.head_dim,
                    "size per head: hidden = heads x head_dim (default: hidden 256)");
  torch->add_option("--hidden", t->shape.hidden, "heads x head_dim (the older spelling)");
  torch->add_option("--chunk", t->cfg.chunk, "chunked attention: queries per chunk")
      ->capture_default_str();
  add_search_options(torch, *t);
  torch->add_option("--overhead", t->overhead_steps, "moved to the benchmark racelab_live_overhead")
      ->group("");
  torch->add_flag("--rr", t->rr,
                  "record the run under rr record --chaos (CPU runs, where rr works; see doctor)");
  torch->footer(settings_footer());
  torch->callback([&run, t] { run = [t] { return run_torch(*t); }; });

  auto p = std::make_shared<LiveArgs>();
  p->out = "racelab-out/live-python";
  auto* py = live->add_subcommand(
      "python", "a Python script in the embedded interpreter, its threads under the scheduler");
  py->add_option("script", p->script, "the script, run as __main__ (not with --replay)");
  py->add_option("args", p->script_args, "the script's arguments (after --)");
  py->add_option("--interpose", p->interpose,
                 "interposition table: torch-2.11, standin, none, or a JSON file "
                 "(data/interpose/)")
      ->capture_default_str();
  py->add_option("--dict", p->dicts,
                 "MODULE.ATTR: a dict cache of compiled wrappers whose lookups and inserts are "
                 "scheduling points (repeatable; added to the table)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  py->add_option("--lock", p->locks,
                 "MODULE.ATTR: a lock to replace with racelab's re-entrant lock (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  py->add_option("--point", p->points,
                 "MODULE.FUNC: a function whose entry is a scheduling point (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  py->add_option("--blocking", p->blockings,
                 "MODULE.FUNC[=SERVED_BY]: a call that waits for a thread racelab does not "
                 "control, served by the thread so named (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  add_search_options(py, *p);
  py->add_option("--follow", p->follow,
                 "force a model schedule (racelab explore's) on the live run, through the "
                 "table's \"follow\" mapping of thread and operation names");
  py->add_option("--alloc", p->alloc,
                 "DIR: record the CUDA caching allocator's history of the (first) execution on "
                 "every device, iterations at optimizer steps or racelab.iteration(); writes "
                 "snap_<script>.cuda<k>.pickle and stats_<script>.cuda<k>.json for alloc report");
  py->add_option("--python", p->python,
                 "ENV: run the script in this virtual environment (its directory, or its "
                 "bin/python; made with the Python racelab embeds), e.g. tools/install-torch.sh's "
                 "/opt/racelab/torch-2.11.0; default $VIRTUAL_ENV where one is activated");
  py->add_flag("--refuse-other-torch", p->refuse_unverified,
               "exit 2, rather than warn, where the imported torch or Python is outside the "
               "versions the interposition table was verified on (its \"verified\"; for CI)");
  py->add_flag("--uncontrolled", p->uncontrolled,
               "run the script once as plain Python would (real threads, nothing interposed; "
               "--time-limit bounds it), e.g. to capture its allocator trace");
  py->callback([&run, p] { run = [p] { return run_python(*p); }; });

  auto al = std::make_shared<AllocArgs>();
  auto* alloc = live->add_subcommand(
      "alloc", "record the CUDA caching allocator's history of the drafter step (CUDA builds)");
  alloc->add_option("--attention", al->cfg.attention, joined(model::settings::kWorkloadAttentions))
      ->capture_default_str();
  alloc->add_option("--iterations", al->cfg.iterations, "training iterations")
      ->capture_default_str();
  alloc->add_option("--seq-lens", al->seq_lens,
                    "comma-separated lengths, cycled (default: random 512..4096 by 64, as the "
                    "fixtures)");
  alloc->add_option("--seed", al->cfg.seed, "seed of the random lengths")->capture_default_str();
  alloc->add_option("--hidden", al->cfg.hidden, "hidden size")->capture_default_str();
  alloc->add_option("--heads", al->cfg.heads, "attention heads")->capture_default_str();
  alloc->add_option("--chunk", al->cfg.chunk, "chunked attention: queries per chunk")
      ->capture_default_str();
  alloc->add_option("--name", al->cfg.name, "file name stem (default live_<attention>_<seed>)");
  alloc->add_option("--out", al->out, "output directory")->capture_default_str();
  alloc->callback([&run, al] { run = [al] { return run_alloc(*al); }; });
}

}  // namespace racelab::cli

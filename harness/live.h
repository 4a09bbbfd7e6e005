#pragma once
// What harness/live*.cc share (private to the command line): the options of racelab live torch |
// python | alloc, and the steps each subcommand's file calls. live.cc registers the options,
// live_torch.cc and live_python.cc run the two kinds of live subject, live_search.cc holds the
// options' helpers, and live_print.h (shared with racelab replay) prints a prepared job's run
// (src/run/live_job.h).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/live.h"
#include "live/search.h"
#include "live/torch/workload.h"
#include "live_print.h"
#include "sched/expectations.h"
#include "sched/strategy.h"

namespace racelab::cli::livecmd {

namespace tw = live::torch_workload;
using live::JobInfo;
using live::Outcome;

// The schedule a --replay names, read and checked (report::read_schedule); nullopt for none.
std::optional<sched::Schedule> recorded_schedule(const std::string& replay);

struct LiveArgs {
  tw::Config cfg;
  tw::ShapeOptions shape;  // live torch: --seq-len, --steps, --head-dim (and --seq-lens, --hidden)
  sched::StrategyKind strategy = sched::StrategyKind::kPct;
  std::uint64_t seed = 1;
  int depth = 3;
  int preemptions = 2;
  std::uint64_t executions = 10;
  double time_limit = 0;
  double hang_timeout = 10;
  int settle_ms = 10;
  int cycle_confirm_ms = 2000;
  results::LiveExpect expect = results::LiveExpect::kClean;
  std::string replay;
  std::string out = "racelab-out/live-torch";
  bool no_warmup_backward = false;
  bool rr = false;
  int overhead_steps = 0;
  // live python
  std::string script;
  std::vector<std::string> script_args;
  std::string interpose = "torch-2.11";
  std::vector<std::string> dicts, locks, points, blockings;  // live python: table entries
  std::string follow;  // a model schedule to force on the live run
  std::string alloc;   // live python --alloc DIR: record the CUDA allocator (the first execution)
  bool uncontrolled = false;       // live python --uncontrolled: one plain run, real threads
  std::string python;              // live python --python ENV (default $VIRTUAL_ENV): a venv
  bool refuse_unverified = false;  // --refuse-other-torch: outside the table's range, exit 2
  bool all_findings = false;       // --all-findings: on past every failure (live/handover.h)
  std::string continue_from;       // --continue-from FILE: a handover (the fresh process's)
  std::shared_ptr<const live::Handover> carried;  // ... as read by check_common
  unsigned jobs = 1;         // --jobs N: dpor's search over N worker processes (live/split.h)
  std::string split_worker;  // --split-worker DIR: a worker process of such a search
};

// The virtual environment a Python run uses: --python ENV, else $VIRTUAL_ENV (an activated
// environment), else "" (the embedded interpreter's own packages).
std::string python_environment(const std::string& given);

struct AllocArgs {
  tw::AllocConfig cfg;
  std::string seq_lens;
  std::string out = "racelab-out/live-alloc";
};

// live_search.cc
live::SearchOptions search_options(const LiveArgs& a);
// InputError for options out of range; reads --continue-from's handover into `carried`.
void check_common(LiveArgs& a);
std::unique_ptr<sched::Strategy> search_strategy(const LiveArgs& a);

// live_torch.cc
int run_torch(LiveArgs a);
int run_alloc(AllocArgs a);

// live_python.cc
int run_python(LiveArgs a);

}  // namespace racelab::cli::livecmd

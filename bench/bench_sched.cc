// Scheduling hot paths: one whole execution of the pipeline model on each backend (the per-step
// cost is time / steps), a strategy decision, writing a schedule file.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "live/live.h"
#include "model/pipeline.h"
#include "model/scenario.h"
#include "report/report.h"
#include "report/schedule_file.h"
#include "sched/context.h"
#include "sched/engine.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"

using namespace racelab;

namespace {

model::Scenario scenario(int devices, int drafters) {
  return model::parse_scenario(
      "name = \"bench\"\n[pipeline]\ndevices = " + std::to_string(devices) +
          "\ndrafters_per_device = " + std::to_string(drafters) +
          "\nsteps = 2\nattention = \"flex_compiled\"\nseq_len = 1024\n[warmup]\nmode = "
          "\"sequential\"\nbackward = "
          "true\n",
      "bench.toml");
}

void execution(benchmark::State& state, sched::Backend backend) {
  const model::Scenario sc =
      scenario(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  model::PipelineModel m(sc);
  auto strategy = sched::make_random(1);
  sched::RunOptions o;
  o.backend = backend;
  std::uint64_t i = 0, steps = 0;
  for (auto _ : state) {
    auto r = sched::run_execution(m, *strategy, i++, o);
    steps += r->exec->steps().size();
  }
  state.counters["steps/exec"] = static_cast<double>(steps) / static_cast<double>(i);
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}

void BM_ExecutionCoroutine(benchmark::State& s) { execution(s, sched::Backend::kCoroutine); }
void BM_ExecutionThreads(benchmark::State& s) { execution(s, sched::Backend::kThreads); }
BENCHMARK(BM_ExecutionCoroutine)->Args({1, 2})->Args({4, 2})->Args({8, 8});
BENCHMARK(BM_ExecutionThreads)->Args({1, 2})->Args({4, 2});

// Two threads that do nothing but scheduling points: on the OS-thread backend every step is two
// controlled switches (engine -> thread -> engine), so time per step / 2 is one switch.
class PingPong : public sched::Subject {
 public:
  std::string name() const override { return "ping-pong"; }
  std::string content_hash() const override { return "ping-pong/1"; }
  void setup(sched::Context& ctx) override {
    label_ = ctx.label("tick");
    for (int t = 0; t < 2; ++t) ctx.spawn(t ? "b" : "a", body(ctx));
  }

 private:
  sched::Task body(sched::Context& ctx) {
    for (int k = 0; k < 500; ++k) co_await ctx.point(label_);
  }
  int label_ = -1;
};

void BM_ControlledSwitch(benchmark::State& state) {
  PingPong subject;
  auto strategy = sched::make_random(1);
  sched::RunOptions o;
  o.backend = state.range(0) ? sched::Backend::kThreads : sched::Backend::kCoroutine;
  std::uint64_t i = 0, switches = 0;
  for (auto _ : state) {
    auto r = sched::run_execution(subject, *strategy, i++, o);
    switches += 2 * r->exec->steps().size();
  }
  state.counters["switches"] = benchmark::Counter(
      static_cast<double>(switches), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ControlledSwitch)->Arg(0)->Arg(1)->ArgName("threads")->UseRealTime();

// The live runtime (src/live): two controlled real threads, 500 points each; every decision is
// two switches (engine -> thread -> engine), through one mutex and a condition variable per thread.
class LivePingPong : public live::Subject {
 public:
  std::string name() const override { return "live-ping-pong"; }
  std::string content_hash() const override { return "live-ping-pong/1"; }
  void setup(live::Runtime& rt) override {
    for (int t = 0; t < 2; ++t) {
      rt.spawn(t ? "b" : "a", [] {
        for (int k = 0; k < 500; ++k) live::point("tick");
      });
    }
  }
};

void BM_LiveSwitch(benchmark::State& state) {
  LivePingPong subject;
  auto strategy = sched::make_random(1);
  live::Options o;
  o.settle = std::chrono::milliseconds(0);
  o.spin = std::chrono::microseconds(state.range(0));  // 0: sleep on the condition variable at once
  std::uint64_t i = 0, switches = 0;
  for (auto _ : state) {
    auto r = live::run(subject, *strategy, i++, o);
    switches += 2 * r->choices.size();
  }
  state.counters["switches"] = benchmark::Counter(
      static_cast<double>(switches), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_LiveSwitch)->Arg(0)->Arg(50)->ArgName("spin_us")->UseRealTime();

void BM_StrategyPick(benchmark::State& state) {
  auto strategy = state.range(0) == 0 ? sched::make_random(1) : sched::make_pct(1, 3);
  const model::Scenario sc = scenario(1, 2);
  model::PipelineModel m(sc);
  auto r = sched::run_execution(m, *strategy, 0, {});  // a real Execution for names and counts
  std::vector<sched::ThreadId> enabled = {0, 1, 2, 3};
  sched::Decision d{enabled, 1, true, 5, r->exec.get()};
  std::uint64_t i = 1;
  strategy->begin_execution(i);
  for (auto _ : state) {
    d.step = (d.step + 1) % 64;
    benchmark::DoNotOptimize(strategy->pick(d));
  }
}
BENCHMARK(BM_StrategyPick)->Arg(0)->Arg(1)->ArgName("pct");

void BM_ScheduleWrite(benchmark::State& state) {
  const model::Scenario sc = scenario(1, 2);
  model::PipelineModel m(sc);
  auto strategy = sched::make_random(1);
  auto r = sched::run_execution(m, *strategy, 0, {});
  sched::Schedule s;
  s.subject_name = sc.name;
  s.subject_hash = sc.hash;
  s.finding_kind = "deadlock";
  s.steps = sched::replay_steps(*r->exec);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = report::schedule_to_json(s);
    bytes += text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["steps"] = static_cast<double>(s.steps.size());
}
BENCHMARK(BM_ScheduleWrite);

}  // namespace

// racelab_live_overhead: what racelab's live runtime costs a real LibTorch training step
// (docs/performance.md, "Overhead on a real LibTorch step").
//
//   racelab_live_overhead --steps N [--device cpu|cuda] [--hidden H --heads K --seq-lens L]
//                         [--attention dense|chunked|fused] [--settle-ms MS] [--out DIR]
//
// One drafter (sequential forward+backward warmup first, so no compile is timed) runs the same N
// steps as plain code (the runtime's threads and primitives, no scheduler), under racelab with a
// settle window of 0 ms, and under racelab with the given settle window, in 3 alternating rounds;
// the first 3 steps of each run warm caches and are not counted. Prints the median per step of
// each mode and its difference from plain code, and writes DIR/overhead.json. No figure is
// asserted: compare the numbers of one run.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "live/torch/workload.h"
#include "util/errors.h"
#include "util/files.h"

namespace tw = racelab::live::torch_workload;
using racelab::InputError;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Args {
  tw::Config cfg;
  std::string seq_lens = "128";
  int steps = 30;
  int settle_ms = 10;
  double hang_timeout = 10;
  std::string out = "racelab-out/live-overhead";
};

int measure(Args a) {
  a.cfg.seq_lens = tw::parse_lengths(a.seq_lens, "--seq-lens");
  if (a.steps < 5) throw InputError("--steps must be at least 5");
  if (a.settle_ms < 0) throw InputError("--settle-ms must not be negative");
  tw::validate(a.cfg);
  racelab::live::Options plain;
  plain.control = false;
  plain.hang_timeout = std::chrono::milliseconds(static_cast<long>(a.hang_timeout * 1000));
  racelab::live::Options bare = plain;
  bare.control = true;
  bare.settle = std::chrono::milliseconds(0);
  racelab::live::Options settled = bare;
  settled.settle = std::chrono::milliseconds(a.settle_ms);
  struct Mode {
    std::string name;
    racelab::live::Options opts;
    std::vector<double> times;
  };
  std::vector<Mode> modes = {{"plain code", plain, {}},
                             {"racelab, settle 0 ms", bare, {}},
                             {fmt::format("racelab, settle {} ms", a.settle_ms), settled, {}}};
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    for (Mode& m : modes) {
      auto t = tw::time_steps(a.cfg, a.steps, m.opts);
      // The first steps of a run warm caches (allocator, cuBLAS heuristics): not counted.
      if (t.size() > 3) m.times.insert(m.times.end(), t.begin() + 3, t.end());
    }
  }
  const double base = median(modes[0].times);
  nlohmann::ordered_json out;
  out["build"] = tw::build_description();
  out["parameters"] = nlohmann::ordered_json::parse(tw::config_json(a.cfg));
  out["steps_per_run"] = a.steps;
  out["rounds"] = rounds;
  fmt::print("overhead on {}: 1 drafter, {} steps x {} rounds at L={}, hidden {}, {} attention\n",
             tw::build_description(), a.steps, rounds, a.cfg.seq_lens.front(), a.cfg.hidden,
             a.cfg.attention);
  for (std::size_t i = 0; i < modes.size(); ++i) {
    const double m = median(modes[i].times);
    const double pct = base > 0 ? (m / base - 1) * 100 : 0;
    fmt::print("  {:<24} median {:9.3f} ms/step{}\n", modes[i].name, m * 1000,
               i == 0 ? std::string() : fmt::format("  ({:+.1f}%)", pct));
    out["modes"][modes[i].name] = {{"median_ms", m * 1000},
                                   {"steps", modes[i].times.size()},
                                   {"overhead_percent", i == 0 ? 0.0 : pct}};
  }
  racelab::ensure_directory(a.out);
  racelab::write_file_atomic(std::filesystem::path(a.out) / "overhead.json", out.dump(2) + "\n");
  fmt::print("report: {}/overhead.json\n", a.out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"racelab's overhead on real LibTorch drafter steps (plain code against racelab)"};
  app.add_option("--steps", a.steps, "timed steps per run (at least 5)")->capture_default_str();
  app.add_option("--device", a.cfg.device, "cpu | cuda")->capture_default_str();
  app.add_option("--attention", a.cfg.attention, "dense | chunked | fused (the workload's)")
      ->capture_default_str();
  app.add_option("--seq-lens", a.seq_lens, "the step's length (the first is used)")
      ->capture_default_str();
  app.add_option("--hidden", a.cfg.hidden, "hidden size")->capture_default_str();
  app.add_option("--heads", a.cfg.heads, "attention heads")->capture_default_str();
  app.add_option("--chunk", a.cfg.chunk, "chunked attention: queries per chunk")
      ->capture_default_str();
  app.add_option("--settle-ms", a.settle_ms, "the settle window of the third mode")
      ->capture_default_str();
  app.add_option("--hang-timeout", a.hang_timeout, "seconds a step may block in a real call")
      ->capture_default_str();
  app.add_option("--out", a.out, "output directory")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return measure(a);
  } catch (const InputError& e) {
    fmt::print(stderr, "racelab_live_overhead: error: {}\n", e.what());
    return 2;
  }
}

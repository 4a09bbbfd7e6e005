// The LibTorch workload on CPU (Debian's libtorch-dev in CI): its attention math, its compile
// structure under the scheduler, and replay of its schedules.
#include <torch/torch.h>

#include "catch.h"
#include "live/live.h"
#include "live/torch/kernels.h"
#include "live/torch/workload.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace live = racelab::live;
namespace tw = racelab::live::torch_workload;
namespace sched = racelab::sched;

namespace {

torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v) {
  const auto s = q.size(2);
  auto mask = torch::ones({s, s}, torch::kBool).tril();
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  return torch::matmul(torch::softmax(scores.masked_fill(~mask, -INFINITY), -1), v);
}

live::Options fast() {
  live::Options o;
  o.hang_timeout = std::chrono::milliseconds(5000);
  o.settle = std::chrono::milliseconds(1);
  return o;
}

struct Tally {
  int executions = 0;
  std::map<std::string, int> kinds;
};

Tally explore(const tw::Config& c, sched::Strategy& s, int n) {
  auto subject = tw::make_drafters(c);
  Tally t;
  for (int i = 0; i < n; ++i) {
    auto r = live::run(*subject, s, static_cast<std::uint64_t>(i), fast());
    if (!r) break;
    ++t.executions;
    std::set<std::string> seen;
    for (const auto& f : r->findings) seen.insert(f.kind);
    for (const auto& k : seen) ++t.kinds[k];
    REQUIRE_FALSE(r->hung);
  }
  return t;
}

}  // namespace

TEST_CASE("The compiled kernels' attention matches autograd on plain attention", "[torch]") {
  torch::manual_seed(3);
  const std::int64_t seq = 48;
  auto fwd = tw::script_forward(seq);
  auto bwd = tw::script_backward(seq);
  auto bias = fwd->bias(8, 4, 12);
  CHECK(bias.sizes() == torch::IntArrayRef({4, 12}));
  CHECK(bias[0][8].item<float>() == 0.0f);
  CHECK(std::isinf(bias[0][9].item<float>()));
  for (const std::string variant : {"dense", "chunked"}) {
    INFO(variant);
    auto q = torch::randn({1, 2, seq, 8}, torch::requires_grad());
    auto k = torch::randn({1, 2, seq, 8}, torch::requires_grad());
    auto v = torch::randn({1, 2, seq, 8}, torch::requires_grad());
    auto ref = reference_attention(q, k, v);
    auto d_out = torch::randn_like(ref);
    auto grads = torch::autograd::grad({ref}, {q, k, v}, {d_out});
    torch::NoGradGuard no_grad;
    auto out = tw::attention_forward(*fwd, q, k, v, variant, 16);
    CHECK(torch::allclose(out, ref, 1e-5, 1e-5));
    auto [dq, dk, dv] =
        tw::attention_backward(*fwd, *bwd, q, k, v, out, d_out, variant == "chunked" ? 16 : seq);
    CHECK(torch::allclose(dq, grads[0], 1e-4, 1e-4));
    CHECK(torch::allclose(dk, grads[1], 1e-4, 1e-4));
    CHECK(torch::allclose(dv, grads[2], 1e-4, 1e-4));
  }
}

TEST_CASE("Lazy compile on CPU: duplicate compiles, but no deadlock", "[torch]") {
  // CPU autograd runs backward on the calling thread, so the lazy backward compile takes
  // compile_lock on the drafter itself: no thread serves two drafters, and no cycle exists.
  tw::Config c;
  c.drafters = 2;
  c.hidden = 32;
  c.heads = 2;
  c.seq_lens = {16};
  auto dfs = sched::make_dfs(2);
  Tally t = explore(c, *dfs, 100000);
  CHECK(dfs->exhausted());
  CHECK(t.executions > 10);
  CHECK(t.kinds.count("deadlock") == 0);
  CHECK(t.kinds.count("hang") == 0);
  CHECK(t.kinds.count("exception") == 0);
  // F5: a drafter that checked the cache before the other stored its kernel compiles again.
  CHECK(t.kinds["duplicate_compile"] > 0);
  CHECK(t.kinds["duplicate_compile"] < t.executions);
  CHECK(t.kinds["compile_after_warmup"] == t.executions);
}

TEST_CASE("A sequential forward+backward warmup leaves no compile to the drafters", "[torch]") {
  tw::Config c;
  c.drafters = 3;
  c.hidden = 32;
  c.heads = 2;
  c.seq_lens = {16};
  c.warmup = "sequential";
  auto pct = sched::make_pct(5, 3);
  Tally t = explore(c, *pct, 60);
  CHECK(t.executions == 60);
  CHECK(t.kinds.empty());

  // Forward-only warmup: the backward still compiles in the drafters.
  c.warmup_backward = false;
  auto pct2 = sched::make_pct(5, 3);
  Tally f = explore(c, *pct2, 20);
  CHECK(f.kinds["compile_after_warmup"] == 20);
  // A warmup at another length: the drafters compile their own length again.
  c.warmup_backward = true;
  c.warmup_seq_len = 24;
  auto pct3 = sched::make_pct(5, 3);
  Tally s = explore(c, *pct3, 20);
  CHECK(s.kinds["compile_after_warmup"] == 20);
}

TEST_CASE("A live LibTorch schedule replays to the same decisions", "[torch]") {
  tw::Config c;
  c.drafters = 2;
  c.hidden = 32;
  c.heads = 2;
  c.seq_lens = {16, 24};
  c.warmup = "lock_first_step";
  auto subject = tw::make_drafters(c);
  auto rnd = sched::make_random(11);
  auto first = live::run(*subject, *rnd, 4, fast());
  REQUIRE(first);
  REQUIRE(first->completed);
  const std::vector<sched::ReplayStep> steps = first->replay_steps();
  for (int k = 0; k < 5; ++k) {
    sched::ReplayStrategy replay(steps, sched::OnDivergence::kFail, nullptr);
    auto again = live::run(*subject, replay, 0, fast());
    REQUIRE((again->replay_steps() == first->replay_steps()));
  }
}

TEST_CASE("Workload parameters are checked with one clear line", "[torch]") {
  tw::Config c;
  c.warmup = "separate_process";
  CHECK_THROWS_AS(tw::validate(c), racelab::InputError);
  c = tw::Config{};
  c.hidden = 30;
  c.heads = 4;
  CHECK_THROWS_WITH(tw::validate(c), "--hidden (30) must be a positive multiple of --heads (4)");
  c = tw::Config{};
  c.seq_lens = {};
  CHECK_THROWS_WITH(tw::validate(c), "--seq-lens needs at least one length");
  c = tw::Config{};
  const tw::Config back = tw::from_config(tw::to_config(c));
  CHECK(tw::config_json(back) == tw::config_json(c));
  racelab::sched::SubjectConfig partial;
  partial.set("drafters", std::int64_t{2});
  CHECK_THROWS_WITH(tw::from_config(partial), "workload parameters: device: missing");
}

TEST_CASE("live torch's shape options: the pipelines' spellings and the older aliases", "[torch]") {
  auto shaped = [](const tw::ShapeOptions& o) {
    tw::Config c;
    tw::apply_shape(c, o);
    return c;
  };
  // Nothing given: the workload's defaults, one step at 128 and hidden 256.
  CHECK(shaped({}).seq_lens == std::vector<int>{128});
  CHECK(shaped({}).hidden == 256);
  CHECK(shaped({.seq_len = "192", .steps = 3}).seq_lens == std::vector<int>{192, 192, 192});
  CHECK(shaped({.steps = 2}).seq_lens == std::vector<int>{128, 128});
  CHECK(shaped({.seq_lens = "128,256"}).seq_lens == std::vector<int>{128, 256});
  CHECK(shaped({.head_dim = 16}).hidden == 64);  // 4 heads
  CHECK(shaped({.hidden = 32}).hidden == 32);
  CHECK_THROWS_AS(shaped({.seq_len = "128", .seq_lens = "128"}), racelab::InputError);
  CHECK_THROWS_AS(shaped({.head_dim = 16, .hidden = 64}), racelab::InputError);
  CHECK_THROWS_AS(shaped({.seq_len = "128,256"}), racelab::InputError);
}

// The LibTorch drafter workload (see workload.h): the drafter step, the compile cache with the
// pipeline's locking, and the CPU compiler (TorchScript).
#include <fmt/format.h>
#include <torch/jit.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>

#include "live/torch/kernels.h"
#include "live/torch/workload.h"
#include "model/settings.h"
#include "sched/schedule.h"
#include "sched/strategies/strategies.h"
#include "util/errors.h"

namespace racelab::live::torch_workload {

namespace settings = model::settings;

namespace detail {
bool fused_available() { return TORCH_VERSION_MAJOR >= 2; }
}  // namespace detail

bool built_with_torch() { return true; }

std::string build_description() {
  std::string out = fmt::format("LibTorch {}", TORCH_VERSION);
#ifdef RACELAB_WITH_CUDA
  out += fmt::format(" (CUDA {}, NVRTC)", cuda_version());
#else
  out += " (CPU)";
#endif
  return out;
}

bool cuda_available() {
#ifdef RACELAB_WITH_CUDA
  return torch::cuda::is_available();
#else
  return false;
#endif
}

namespace {

// ---- The CPU compiler: TorchScript compiles the two functions from source, specialised for the
// sequence length as a compiler specialises for a shape.
class ScriptForward : public ForwardKernel {
 public:
  explicit ScriptForward(std::int64_t seq_len) {
    unit_ = torch::jit::compile(fmt::format(R"(
def causal_bias(q_start: int, sq: int, skv: int):
    # specialised for sequence length {}
    i = torch.arange(q_start, q_start + sq).unsqueeze(1)
    j = torch.arange(0, skv).unsqueeze(0)
    return torch.zeros([sq, skv]).masked_fill(j > i, float("-inf"))
)",
                                            seq_len));
  }
  torch::Tensor bias(std::int64_t q_start, std::int64_t sq, std::int64_t skv) override {
    return unit_->get_function("causal_bias")({q_start, sq, skv}).toTensor();
  }

 private:
  std::shared_ptr<torch::jit::CompilationUnit> unit_;
};

class ScriptBackward : public BackwardKernel {
 public:
  explicit ScriptBackward(std::int64_t seq_len) {
    unit_ = torch::jit::compile(fmt::format(R"(
def row_delta(d_out, out):
    # specialised for sequence length {}
    return (d_out * out).sum(-1, keepdim=True)
)",
                                            seq_len));
  }
  torch::Tensor delta(const torch::Tensor& d_out, const torch::Tensor& out) override {
    return unit_->get_function("row_delta")({d_out, out}).toTensor();
  }

 private:
  std::shared_ptr<torch::jit::CompilationUnit> unit_;
};

std::string device_text(const torch::Device& d) { return d.str(); }

}  // namespace

std::shared_ptr<ForwardKernel> script_forward(std::int64_t seq_len) {
  return std::make_shared<ScriptForward>(seq_len);
}
std::shared_ptr<BackwardKernel> script_backward(std::int64_t seq_len) {
  return std::make_shared<ScriptBackward>(seq_len);
}

namespace {

// ---- One execution's process-wide state: the compile cache and the locks.
struct Pipeline {
  Config cfg;
  Runtime& rt;
  Mutex& compile_lock;
  Mutex* shared_warmup_lock = nullptr;
  std::vector<Mutex*> own_locks;
  std::atomic<bool> drafters_started{false};

  struct Key {
    std::string device;
    std::int64_t seq_len;
    auto operator<=>(const Key&) const = default;
  };
  struct Entry {
    std::shared_ptr<ForwardKernel> forward;
    std::shared_ptr<BackwardKernel> backward;
    int forward_compiles = 0;
    int backward_compiles = 0;
  };
  std::vector<double>* step_times = nullptr;  // time_steps(): each drafter step's wall time
  std::mutex cache_mutex;  // the dict itself (atomic under the GIL in Python): not a point
  std::map<Key, Entry> cache;

  Pipeline(const Config& c, Runtime& r)
      : cfg(c), rt(r), compile_lock(r.recursive_mutex("compile_lock")) {
    if (c.warmup == settings::warmup::kLockFirstStep ||
        c.warmup == settings::warmup::kLockFirstForward)
      shared_warmup_lock = &r.mutex("warmup_lock");
    if (c.warmup == settings::warmup::kPerThreadLock) {
      for (int i = 0; i < c.drafters; ++i)
        own_locks.push_back(&r.mutex(fmt::format("drafter {} lock", i)));
    }
  }

  static std::string worker_name(const torch::Device& d) {
    return "autograd worker " + device_text(d);
  }

  void compile_starts(const std::string& what) {
    rt.note("compile " + what);
    if (drafters_started.load()) {
      rt.report(sched::kinds::kCompileAfterWarmup,
                fmt::format("{} compiles {} after main started the drafters",
                            controlled() ? "a drafter" : "the autograd worker", what));
    }
  }

  // F5: the guard check and the cache snapshot happen before compile_lock is taken; a thread that
  // waited for the lock compiles again what another thread just compiled.
  std::shared_ptr<ForwardKernel> forward_kernel(const torch::Device& d, std::int64_t seq_len) {
    const Key key{device_text(d), seq_len};
    point(fmt::format("guard check forward ({}, L={})", key.device, seq_len));
    {
      std::lock_guard g(cache_mutex);
      auto it = cache.find(key);
      if (it != cache.end() && it->second.forward) return it->second.forward;
    }
    std::lock_guard lock(compile_lock);  // F1
    point(fmt::format("trace forward ({}, L={})", key.device, seq_len));
    // F4: tracing builds the joint graph with autograd.grad, which the device's autograd worker
    // executes on CUDA.
    {
      std::optional<Blocking> away;
      if (d.is_cuda()) away.emplace("torch::autograd::grad (joint graph trace)", worker_name(d));
      torch::AutoGradMode grad_mode(true);  // custom functions run their forward without grad
      auto x = torch::randn({16, 16}, torch::TensorOptions().device(d)).requires_grad_();
      auto y = (x * x).sum();
      auto g = torch::autograd::grad({y}, {x});
      (void)g;
    }
    const std::string what = fmt::format("forward ({}, L={})", key.device, seq_len);
    compile_starts(what);
    auto kernel = compile_forward(d, seq_len);
    std::lock_guard g(cache_mutex);
    Entry& e = cache[key];
    if (++e.forward_compiles > 1)
      rt.report(sched::kinds::kDuplicateCompile,
                fmt::format("{} compiled {} times", what, e.forward_compiles));
    e.forward = kernel;
    return kernel;
  }

  // The forward kernel this step's forward used (the backward recomputes the bias with it).
  std::shared_ptr<ForwardKernel> cached_forward(const torch::Device& d, std::int64_t seq_len) {
    std::lock_guard g(cache_mutex);
    return cache.at(Key{device_text(d), seq_len}).forward;
  }

  std::shared_ptr<BackwardKernel> backward_kernel(const torch::Device& d, std::int64_t seq_len) {
    const Key key{device_text(d), seq_len};
    if (!controlled()) name_this_thread(worker_name(d));
    point(fmt::format("guard check backward ({}, L={})", key.device, seq_len));
    {
      std::lock_guard g(cache_mutex);
      auto it = cache.find(key);
      if (it != cache.end() && it->second.backward) return it->second.backward;
    }
    std::lock_guard lock(compile_lock);  // F2: the lazy backward compile takes the same lock
    const std::string what = fmt::format("backward ({}, L={})", key.device, seq_len);
    compile_starts(what);
    auto kernel = compile_backward(d, seq_len);
    std::lock_guard g(cache_mutex);
    Entry& e = cache[key];
    if (++e.backward_compiles > 1)
      rt.report(sched::kinds::kDuplicateCompile,
                fmt::format("{} compiled {} times", what, e.backward_compiles));
    e.backward = kernel;
    return kernel;
  }

  std::shared_ptr<ForwardKernel> compile_forward([[maybe_unused]] const torch::Device& d,
                                                 std::int64_t seq_len) {
#ifdef RACELAB_WITH_CUDA
    if (d.is_cuda()) return nvrtc_forward(d, seq_len);
#endif
    return std::make_shared<ScriptForward>(seq_len);
  }
  std::shared_ptr<BackwardKernel> compile_backward([[maybe_unused]] const torch::Device& d,
                                                   std::int64_t seq_len) {
#ifdef RACELAB_WITH_CUDA
    if (d.is_cuda()) return nvrtc_backward(d, seq_len);
#endif
    return std::make_shared<ScriptBackward>(seq_len);
  }
};

}  // namespace

// ---- Attention as a custom autograd function: its backward is where the lazy compile happens.
class AttentionFn : public torch::autograd::Function<AttentionFn> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor q,
                               torch::Tensor k, torch::Tensor v, std::int64_t pipeline) {
    auto* p = reinterpret_cast<Pipeline*>(pipeline);
    const std::int64_t seq = q.size(2);
    auto kernel = p->forward_kernel(q.device(), seq);
    torch::Tensor out = attention_forward(*kernel, q, k, v, p->cfg.attention, p->cfg.chunk);
    ctx->save_for_backward({q, k, v, out});
    ctx->saved_data["pipeline"] = pipeline;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto* p = reinterpret_cast<Pipeline*>(ctx->saved_data["pipeline"].toInt());
    auto saved = ctx->get_saved_variables();
    const torch::Tensor& q = saved[0];
    auto kernel = p->backward_kernel(q.device(), q.size(2));
    auto fwd = p->cached_forward(q.device(), q.size(2));
    auto [dq, dk, dv] = attention_backward(
        *fwd, *kernel, q, saved[1], saved[2], saved[3], grads[0],
        p->cfg.attention == settings::workload_attention::kChunked ? p->cfg.chunk : q.size(2));
    return {dq, dk, dv, torch::Tensor()};
  }
};

torch::Tensor attention_forward(ForwardKernel& kernel, const torch::Tensor& q,
                                const torch::Tensor& k, const torch::Tensor& v,
                                const std::string& variant, std::int64_t chunk) {
  const std::int64_t seq = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  auto block = [&](const torch::Tensor& qc, std::int64_t start) {
    auto bias = kernel.bias(start, qc.size(2), seq).to(q.device());
    auto scores = torch::matmul(qc, k.transpose(-2, -1)) * scale + bias;
    return torch::matmul(torch::softmax(scores, -1), v);
  };
  if (variant == "fused") {
#if TORCH_VERSION_MAJOR >= 2
    auto bias = kernel.bias(0, seq, seq).to(q.device());
    return at::scaled_dot_product_attention(q, k, v, bias);
#else
    throw InputError("--attention fused needs LibTorch 2.0 or later");
#endif
  }
  if (variant == "chunked") {
    std::vector<torch::Tensor> parts;
    for (std::int64_t s = 0; s < seq; s += chunk) {
      const std::int64_t e = std::min(seq, s + chunk);
      parts.push_back(block(q.slice(2, s, e), s));
    }
    return torch::cat(parts, 2);
  }
  return block(q, 0);
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_backward(
    ForwardKernel& fwd, BackwardKernel& bwd, const torch::Tensor& q, const torch::Tensor& k,
    const torch::Tensor& v, const torch::Tensor& out, const torch::Tensor& d_out,
    std::int64_t chunk) {
  const std::int64_t seq = q.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  // D = rowsum(dO * O), the softmax-gradient term, from the compiled backward kernel.
  auto delta = bwd.delta(d_out.contiguous(), out.contiguous());
  auto dq = torch::zeros_like(q);
  auto dk = torch::zeros_like(k);
  auto dv = torch::zeros_like(v);
  for (std::int64_t s = 0; s < seq; s += chunk) {
    const std::int64_t e = std::min(seq, s + chunk);
    auto qc = q.slice(2, s, e);
    auto doc = d_out.slice(2, s, e);
    auto bias = fwd.bias(s, e - s, seq).to(q.device());
    auto p = torch::softmax(torch::matmul(qc, k.transpose(-2, -1)) * scale + bias, -1);
    dv += torch::matmul(p.transpose(-2, -1), doc);
    auto dp = torch::matmul(doc, v.transpose(-2, -1));
    auto ds = p * (dp - delta.slice(2, s, e));
    dq.slice(2, s, e).copy_(torch::matmul(ds, k) * scale);
    dk += torch::matmul(ds.transpose(-2, -1), qc) * scale;
  }
  return {dq, dk, dv};
}

namespace {

struct Weights {
  torch::Tensor wq, wk, wv, wo;
};

Weights make_weights(const Config& c, const torch::Device& d) {
  auto opts = torch::TensorOptions().device(d).dtype(torch::kFloat);
  auto w = [&] { return (torch::randn({c.hidden, c.hidden}, opts) * 0.02).requires_grad_(); };
  return {w(), w(), w(), w()};
}

// One forward (and backward) of the drafter step at `seq_len` on `d`.
void drafter_step(Pipeline& p, const Weights& w, const torch::Device& d, std::int64_t seq_len,
                  bool backward, Mutex* forward_lock) {
  const Config& c = p.cfg;
  const std::int64_t dh = c.hidden / c.heads;
  auto x = torch::randn({1, seq_len, c.hidden}, torch::TensorOptions().device(d));
  auto heads = [&](const torch::Tensor& wt) {
    return torch::matmul(x, wt).view({1, seq_len, c.heads, dh}).transpose(1, 2);
  };
  torch::Tensor loss;
  {
    std::unique_lock<Mutex> g;
    if (forward_lock != nullptr) g = std::unique_lock<Mutex>(*forward_lock);
    auto o = AttentionFn::apply(heads(w.wq), heads(w.wk), heads(w.wv),
                                reinterpret_cast<std::int64_t>(&p));
    loss = torch::matmul(o.transpose(1, 2).reshape({1, seq_len, c.hidden}), w.wo).pow(2).mean();
  }
  if (!backward) return;
  point(fmt::format("backward ({}, L={})", device_text(d), seq_len));
  // F3: on CUDA the backward runs on the device's autograd worker; the caller waits for it.
  std::optional<Blocking> away;
  if (d.is_cuda()) away.emplace("backward()", Pipeline::worker_name(d));
  loss.backward();
}

torch::Device device_of(const Config& c, int drafter) {
  if (c.device == "cuda") return torch::Device(torch::kCUDA, static_cast<int>(drafter % c.gpus));
  return torch::Device(torch::kCPU);
}

class Drafters : public Subject {
 public:
  explicit Drafters(Config c) : cfg_(std::move(c)) {}
  std::string name() const override { return sched::kLiveTorchSubject; }
  std::string content_hash() const override {
    return fmt::format("{:016x}",
                       std::hash<std::string>{}(config_json(cfg_) + build_description()));
  }
  std::vector<double>* step_times = nullptr;

  void setup(Runtime& rt) override {
    prewarm();
    auto p = std::make_shared<Pipeline>(cfg_, rt);
    p->step_times = step_times;
    rt.spawn("main", [p] { run_main(*p); });
  }

 private:
  static void run_main(Pipeline& p) {
    const Config& c = p.cfg;
    if (c.warmup == settings::warmup::kSequential) {
      // M3: main warms up device by device before it starts the drafters.
      const int devices = c.device == "cuda" ? std::min(c.gpus, c.drafters) : 1;
      const int len = c.warmup_seq_len > 0 ? c.warmup_seq_len : c.seq_lens.front();
      for (int dev = 0; dev < devices; ++dev) {
        const torch::Device d = device_of(c, dev);
        drafter_step(p, make_weights(c, d), d, len, c.warmup_backward, nullptr);
      }
    }
    std::vector<ThreadId> drafters;
    p.drafters_started.store(true);
    for (int i = 0; i < c.drafters; ++i) {
      drafters.push_back(spawn(fmt::format("drafter {}", i), [&p, i] { run_drafter(p, i); }));
    }
    for (ThreadId t : drafters) join(t);
  }

  static void run_drafter(Pipeline& p, int index) {
    const Config& c = p.cfg;
    const torch::Device d = device_of(c, index);
    const Weights w = make_weights(c, d);
    for (std::size_t s = 0; s < c.seq_lens.size(); ++s) {
      const bool first = s == 0;
      Mutex* step_lock = nullptr;
      Mutex* forward_lock = nullptr;
      if (first && c.warmup == settings::warmup::kLockFirstStep) step_lock = p.shared_warmup_lock;
      if (first && c.warmup == settings::warmup::kPerThreadLock) step_lock = p.own_locks[index];
      if (first && c.warmup == settings::warmup::kLockFirstForward)
        forward_lock = p.shared_warmup_lock;
      std::unique_lock<Mutex> g;
      if (step_lock != nullptr) g = std::unique_lock<Mutex>(*step_lock);
      const auto start = std::chrono::steady_clock::now();
      drafter_step(p, w, d, c.seq_lens[s], true, forward_lock);
      if (p.step_times != nullptr) {
#ifdef RACELAB_WITH_CUDA
        if (d.is_cuda()) torch::cuda::synchronize(d.index());
#endif
        p.step_times->push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
  }

  // Once per process, before the first execution: one plain forward and backward (no compile
  // cache, no instrumented lock) on every CUDA device the drafters use, so that the CUDA context,
  // cuBLAS handles and the autograd engine's device threads exist. Otherwise the first execution
  // (and every replay, which runs first in its process) would see a worker far slower than the
  // executions that follow, and the same schedule would not meet the worker at the same place.
  void prewarm() {
    if (cfg_.device != "cuda" || prewarmed_) return;
    prewarmed_ = true;
    for (int dev = 0; dev < std::min(cfg_.gpus, cfg_.drafters); ++dev) {
      const torch::Device d = device_of(cfg_, dev);
      const Weights w = make_weights(cfg_, d);
      const std::int64_t len = cfg_.seq_lens.front();
      const std::int64_t dh = cfg_.hidden / cfg_.heads;
      auto x = torch::randn({1, len, cfg_.hidden}, torch::TensorOptions().device(d));
      auto heads = [&](const torch::Tensor& wt) {
        return torch::matmul(x, wt).view({1, len, cfg_.heads, dh}).transpose(1, 2);
      };
      auto scores = torch::matmul(heads(w.wq), heads(w.wk).transpose(-2, -1));
      auto o = torch::matmul(torch::softmax(scores, -1), heads(w.wv));
      auto loss =
          torch::matmul(o.transpose(1, 2).reshape({1, len, cfg_.hidden}), w.wo).pow(2).mean();
      torch::autograd::grad({loss}, {w.wq}, {}, /*retain_graph=*/true);
      loss.backward();
      torch::cuda::synchronize(dev);
    }
  }

  Config cfg_;
  bool prewarmed_ = false;
};

}  // namespace

#ifndef RACELAB_WITH_CUDA
AllocOutcome capture_alloc(const AllocConfig&) {
  throw InputError(fmt::format(
      "racelab live alloc records the CUDA caching allocator; this racelab is built on {} (build "
      "against the PyTorch wheel with tools/gpu/build.sh on a GPU machine)",
      build_description()));
}
#endif

std::vector<double> time_steps(const Config& c, int steps, const Options& o) {
  Config one = c;
  one.drafters = 1;
  one.warmup = settings::warmup::kSequential;
  one.warmup_backward = true;
  one.warmup_seq_len = c.seq_lens.front();
  one.seq_lens.assign(static_cast<std::size_t>(std::max(steps, 1)), c.seq_lens.front());
  validate(one);
  Drafters subject(one);
  std::vector<double> times;
  subject.step_times = &times;
  auto strategy = sched::make_random(1);
  auto r = run(subject, *strategy, 0, o);
  if (!r || !r->completed)
    throw std::runtime_error(fmt::format(
        "the timed run did not complete: {}",
        r && !r->findings.empty() ? r->findings.front().message : std::string("no result")));
  return times;
}

std::unique_ptr<Subject> make_drafters(const Config& c) {
  validate(c);
  return std::make_unique<Drafters>(c);
}

}  // namespace racelab::live::torch_workload

// The CUDA side of the LibTorch workload: NVRTC-compiled kernels and the allocator capture.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nvrtc.h>
#include <torch/csrc/cuda/memory_snapshot.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "live/torch/kernels.h"
#include "live/torch/workload.h"
#include "model/settings.h"
#include "util/errors.h"
#include "util/files.h"
#include "util/text.h"

namespace racelab::live::torch_workload {

namespace settings = model::settings;

namespace {

void check_nvrtc(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS)
    throw std::runtime_error(fmt::format("{}: {}", what, nvrtcGetErrorString(r)));
}

void check_cu(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* text = nullptr;
    cuGetErrorString(r, &text);
    throw std::runtime_error(fmt::format("{}: {}", what, text ? text : "unknown CUDA error"));
  }
}

// The kernel source; specialised for one sequence length as a compiler specialises for a shape.
std::string kernel_source(std::int64_t seq_len) {
  return fmt::format(R"(
#define RACELAB_SEQ_LEN {}
extern "C" __global__ void causal_bias(float* out, long long q_start, long long sq, long long skv) {{
  const long long n = sq * skv;
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < n;
       idx += (long long)gridDim.x * blockDim.x) {{
    const long long i = idx / skv, j = idx % skv;
    out[idx] = (j > q_start + i) ? -__int_as_float(0x7f800000) : 0.0f;
  }}
}}
extern "C" __global__ void row_delta(const float* d_out, const float* out, float* delta,
                                     long long rows, long long d) {{
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0.0f;
  for (long long c = 0; c < d; ++c) acc += d_out[r * d + c] * out[r * d + c];
  delta[r] = acc;
}}
)",
                     seq_len);
}

// One compiled module on one device: NVRTC to a cubin for the device's sm_XY, loaded with the
// driver API into the device's primary context.
class Module {
 public:
  Module(const torch::Device& d, std::int64_t seq_len) : device_(d) {
    c10::cuda::CUDAGuard guard(d);
    // Binds the device's primary context to this thread (LibTorch uses the runtime API).
    if (cudaFree(nullptr) != cudaSuccess) throw std::runtime_error("cannot initialise CUDA");
    CUdevice dev;
    check_cu(cuCtxGetDevice(&dev), "cuCtxGetDevice");
    int major = 0, minor = 0;
    check_cu(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
             "cuDeviceGetAttribute");
    check_cu(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
             "cuDeviceGetAttribute");
    const std::string src = kernel_source(seq_len);
    nvrtcProgram prog;
    check_nvrtc(nvrtcCreateProgram(&prog, src.c_str(), "racelab_attention.cu", 0, nullptr, nullptr),
                "nvrtcCreateProgram");
    const std::string arch = fmt::format("--gpu-architecture=sm_{}{}", major, minor);
    const char* opts[] = {arch.c_str(), "-default-device", "--std=c++17"};
    const nvrtcResult compiled = nvrtcCompileProgram(prog, 3, opts);
    if (compiled != NVRTC_SUCCESS) {
      std::size_t n = 0;
      nvrtcGetProgramLogSize(prog, &n);
      std::string log(n, '\0');
      nvrtcGetProgramLog(prog, log.data());
      nvrtcDestroyProgram(&prog);
      throw std::runtime_error(fmt::format("NVRTC failed ({}): {}", arch, log));
    }
    std::size_t size = 0;
    check_nvrtc(nvrtcGetCUBINSize(prog, &size), "nvrtcGetCUBINSize");
    std::string cubin(size, '\0');
    check_nvrtc(nvrtcGetCUBIN(prog, cubin.data()), "nvrtcGetCUBIN");
    nvrtcDestroyProgram(&prog);
    check_cu(cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
    check_cu(cuModuleGetFunction(&bias_, module_, "causal_bias"), "cuModuleGetFunction");
    check_cu(cuModuleGetFunction(&delta_, module_, "row_delta"), "cuModuleGetFunction");
  }
  ~Module() {
    // Kernels may still be queued on the device's streams.
    c10::cuda::CUDAGuard guard(device_);
    cudaDeviceSynchronize();
    cuModuleUnload(module_);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  void launch(CUfunction f, long long work, void** args) {
    c10::cuda::CUDAGuard guard(device_);
    const unsigned threads = 256;
    const unsigned blocks =
        static_cast<unsigned>(std::min<long long>((work + threads - 1) / threads, 65535));
    CUstream stream = at::cuda::getCurrentCUDAStream(device_.index()).stream();
    check_cu(cuLaunchKernel(f, std::max(blocks, 1u), 1, 1, threads, 1, 1, 0, stream, args, nullptr),
             "cuLaunchKernel");
  }
  CUfunction bias_fn() const { return bias_; }
  CUfunction delta_fn() const { return delta_; }
  const torch::Device& device() const { return device_; }

 private:
  torch::Device device_;
  CUmodule module_ = nullptr;
  CUfunction bias_ = nullptr;
  CUfunction delta_ = nullptr;
};

class NvrtcForward : public ForwardKernel {
 public:
  NvrtcForward(const torch::Device& d, std::int64_t seq_len) : m_(d, seq_len) {}
  torch::Tensor bias(std::int64_t q_start, std::int64_t sq, std::int64_t skv) override {
    auto out = torch::empty({sq, skv}, torch::TensorOptions().device(m_.device()));
    void* ptr = out.data_ptr();
    long long a = q_start, b = sq, c = skv;
    void* args[] = {&ptr, &a, &b, &c};
    m_.launch(m_.bias_fn(), sq * skv, args);
    return out;
  }

 private:
  Module m_;
};

class NvrtcBackward : public BackwardKernel {
 public:
  NvrtcBackward(const torch::Device& d, std::int64_t seq_len) : m_(d, seq_len) {}
  torch::Tensor delta(const torch::Tensor& d_out, const torch::Tensor& out) override {
    auto sizes = out.sizes().vec();
    const long long d = sizes.back();
    const long long rows = out.numel() / d;
    sizes.back() = 1;
    auto result = torch::empty(sizes, out.options());
    const void* a = d_out.data_ptr();
    const void* b = out.data_ptr();
    void* r = result.data_ptr();
    long long rr = rows, dd = d;
    void* args[] = {&a, &b, &r, &rr, &dd};
    m_.launch(m_.delta_fn(), rows, args);
    return result;
  }

 private:
  Module m_;
};

}  // namespace

std::string cuda_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

std::shared_ptr<ForwardKernel> nvrtc_forward(const torch::Device& d, std::int64_t seq_len) {
  return std::make_shared<NvrtcForward>(d, seq_len);
}

std::shared_ptr<BackwardKernel> nvrtc_backward(const torch::Device& d, std::int64_t seq_len) {
  return std::make_shared<NvrtcBackward>(d, seq_len);
}

// ---- Allocator capture: the fixtures' drafter step (hidden 2048, 16 heads x 128, bf16, causal
// attention, loss of the float output's squares), with the history recorder on from the first
// allocation.
namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

AllocOutcome capture_alloc(const AllocConfig& c) {
  if (!torch::cuda::is_available())
    throw InputError("racelab live alloc: no CUDA device is present");
  if (c.hidden % c.heads != 0)
    throw InputError(
        fmt::format("--hidden ({}) must be a multiple of --heads ({})", c.hidden, c.heads));
  const torch::Device dev(torch::kCUDA, 0);
  const std::int64_t H = c.heads, D = c.hidden / c.heads, HID = c.hidden;
  const std::int64_t smax = 4096;
  c10::cuda::CUDAGuard guard(dev);
  if (cudaFree(nullptr) != cudaSuccess) throw std::runtime_error("cannot initialise CUDA");
  // As the fixtures were recorded: every action, no call-stack context.
  torch::cuda::_record_memory_history(std::optional<std::string>("all"),
                                      std::optional<std::string>(), "python", 1000000);
  torch::manual_seed(0);
  auto opts = torch::TensorOptions().device(dev).dtype(torch::kBFloat16);
  std::vector<torch::Tensor> w;
  for (int i = 0; i < 4; ++i)
    w.push_back((torch::randn({HID, H * D}, opts) * 0.02).requires_grad_());

  auto attention = [&](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
    if (c.attention == settings::workload_attention::kFused) {
#if TORCH_VERSION_MAJOR >= 2
      return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
#endif
    }
    const std::int64_t S = q.size(2);
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    if (c.attention == settings::workload_attention::kChunked) {
      std::vector<torch::Tensor> parts;
      for (std::int64_t s = 0; s < S; s += c.chunk) {
        const std::int64_t e = std::min(S, s + c.chunk);
        auto mask =
            torch::ones({e - s, k.size(2)}, torch::TensorOptions().device(dev).dtype(torch::kBool))
                .tril(s);
#if TORCH_VERSION_MAJOR >= 2
        parts.push_back(at::scaled_dot_product_attention(q.slice(2, s, e), k, v, mask));
#else
        auto sc = torch::matmul(q.slice(2, s, e), k.transpose(-2, -1)) * scale;
        parts.push_back(torch::matmul(torch::softmax(sc.masked_fill(~mask, -INFINITY), -1), v));
#endif
      }
      return torch::cat(parts, 2);
    }
    // dense: the full scores matrix, as flex_attention's eager fallback materialises it (F7).
    auto mask = torch::ones({S, S}, torch::TensorOptions().device(dev).dtype(torch::kBool)).tril();
    auto sc = (torch::matmul(q, k.transpose(-2, -1)) * scale).to(torch::kFloat);
    return torch::matmul(torch::softmax(sc.masked_fill(~mask, -INFINITY), -1).to(q.dtype()), v);
  };
  auto step = [&](std::int64_t L) {
    auto x = torch::randn({1, L, HID}, opts);
    auto proj = [&](const torch::Tensor& W) {
      return torch::matmul(x, W).view({1, L, H, D}).transpose(1, 2);
    };
    auto o = torch::matmul(
        attention(proj(w[0]), proj(w[1]), proj(w[2])).transpose(1, 2).reshape({1, L, H * D}),
        w[3].t());
    o.to(torch::kFloat).pow(2).mean().backward();
    for (auto& W : w) W.mutable_grad() = torch::Tensor();
  };

  std::vector<int> lengths;
  std::mt19937_64 rng(c.seed);
  for (int i = 0; i < c.iterations; ++i) {
    if (!c.seq_lens.empty()) {
      lengths.push_back(c.seq_lens[static_cast<std::size_t>(i) % c.seq_lens.size()]);
    } else {
      lengths.push_back(512 + 64 * static_cast<int>(rng() % ((smax - 512) / 64 + 1)));
    }
  }
  nlohmann::ordered_json stats;
  const std::int64_t t0 = now_us();
  step(smax);
  torch::cuda::synchronize();
  stats["warmup"] = {{"L", smax}, {"t_start_us", t0}, {"t_end_us", now_us()}};
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json oom = nullptr;
  for (int i = 0; i < c.iterations; ++i) {
    const std::int64_t ts = now_us();
    try {
      step(lengths[i]);
    } catch (const c10::OutOfMemoryError& e) {
      std::string msg = e.what();
      oom = {{"iter", i}, {"L", lengths[i]}, {"message", first_line(msg)}};
      break;
    }
    torch::cuda::synchronize();
    const std::int64_t te = now_us();
    const auto st = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
    const std::size_t all = 0;  // StatType::AGGREGATE
    rows.push_back({{"iter", i},
                    {"L", lengths[i]},
                    {"t_start_us", ts},
                    {"t_end_us", te},
                    {"reserved", st.reserved_bytes[all].current},
                    {"allocated", st.allocated_bytes[all].current},
                    {"segments", st.segment[all].current},
                    {"device_allocs", st.num_device_alloc},
                    {"device_frees", st.num_device_free},
                    {"inactive_split_bytes", st.inactive_split_bytes[all].current},
                    {"alloc_retries", st.num_alloc_retries},
                    {"peak_allocated", st.allocated_bytes[all].peak}});
  }
  const std::string name = c.name.empty() ? fmt::format("live_{}_{}", c.attention, c.seed) : c.name;
  AllocOutcome out;
  out.pickle_path = c.out + "/snap_" + name + ".pickle";
  out.stats_path = c.out + "/stats_" + name + ".json";
  write_file_atomic(out.pickle_path, torch::cuda::_memory_snapshot_pickled());
  torch::cuda::_record_memory_history(std::optional<std::string>(), std::optional<std::string>(),
                                      "python", 0);
  std::size_t free_b = 0, total_b = 0;
  cudaMemGetInfo(&free_b, &total_b);
  const char* conf = std::getenv("PYTORCH_CUDA_ALLOC_CONF");
  stats["variant"] = "live_" + c.attention;
  stats["seed"] = c.seed;
  stats["alloc_conf"] = conf ? conf : "";
  stats["device_total_bytes"] = total_b;
  stats["device_free_bytes_at_end"] = free_b;
  stats["oom"] = oom;
  stats["lengths"] = lengths;
  stats["rows"] = rows;
  stats["recorder"] = "racelab live alloc (LibTorch C++ API: torch::cuda::_record_memory_history)";
  write_file_atomic(out.stats_path, stats.dump() + "\n");
  if (rows.empty()) {
    out.summary = fmt::format("{}: no iteration completed{}", name,
                              oom.is_null() ? "" : " (" + oom["message"].get<std::string>() + ")");
  } else {
    const auto& first = rows.front();
    const auto& last = rows.back();
    out.summary = fmt::format(
        "{}: reserved {} -> {} MiB, segments {} -> {}, device allocs {}, frees {}{}", name,
        first["reserved"].get<std::int64_t>() >> 20, last["reserved"].get<std::int64_t>() >> 20,
        first["segments"].get<std::int64_t>(), last["segments"].get<std::int64_t>(),
        last["device_allocs"].get<std::int64_t>(), last["device_frees"].get<std::int64_t>(),
        oom.is_null() ? "" : ", OOM at iteration " + std::to_string(oom["iter"].get<int>()));
  }
  return out;
}

}  // namespace racelab::live::torch_workload

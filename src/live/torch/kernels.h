#pragma once
// The compiled pieces of the workload's attention and the attention math around them (LibTorch).
//
// A ForwardKernel makes the additive causal bias of a block of queries; a BackwardKernel computes
// the softmax-gradient row term D = rowsum(dO * O). Each is compiled for one (device, sequence
// length): TorchScript on CPU, NVRTC on CUDA.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <tuple>

namespace racelab::live::torch_workload {

class ForwardKernel {
 public:
  virtual ~ForwardKernel() = default;
  // [sq, skv] float: 0 where key j <= query q_start + i, -inf after it.
  virtual torch::Tensor bias(std::int64_t q_start, std::int64_t sq, std::int64_t skv) = 0;
};

class BackwardKernel {
 public:
  virtual ~BackwardKernel() = default;
  // [..., S, 1]: the row sums of d_out * out (both contiguous, same shape).
  virtual torch::Tensor delta(const torch::Tensor& d_out, const torch::Tensor& out) = 0;
};

// Causal attention over [B, H, S, D] float tensors; variant dense, chunked (queries in blocks of
// `chunk`) or fused (scaled_dot_product_attention with the compiled bias).
torch::Tensor attention_forward(ForwardKernel& kernel, const torch::Tensor& q,
                                const torch::Tensor& k, const torch::Tensor& v,
                                const std::string& variant, std::int64_t chunk);
// dQ, dK, dV, recomputing the probabilities a block of `chunk` queries at a time.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> attention_backward(
    ForwardKernel& fwd, BackwardKernel& bwd, const torch::Tensor& q, const torch::Tensor& k,
    const torch::Tensor& v, const torch::Tensor& out, const torch::Tensor& d_out,
    std::int64_t chunk);

// The CPU compilers (TorchScript), exposed for tests.
std::shared_ptr<ForwardKernel> script_forward(std::int64_t seq_len);
std::shared_ptr<BackwardKernel> script_backward(std::int64_t seq_len);

#ifdef RACELAB_WITH_CUDA
std::string cuda_version();
// NVRTC compiles the kernel source for the device's architecture (sm_XY) and loads the cubin.
std::shared_ptr<ForwardKernel> nvrtc_forward(const torch::Device& d, std::int64_t seq_len);
std::shared_ptr<BackwardKernel> nvrtc_backward(const torch::Device& d, std::int64_t seq_len);
#endif

}  // namespace racelab::live::torch_workload

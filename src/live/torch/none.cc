// Stand-in for builds without LibTorch: the command line explains how to get the workload.
#include "live/torch/workload.h"
#include "util/errors.h"

namespace racelab::live::torch_workload {

namespace detail {
bool fused_available() { return false; }
}  // namespace detail

std::string build_description() { return {}; }
bool built_with_torch() { return false; }
bool cuda_available() { return false; }

std::unique_ptr<Subject> make_drafters(const Config& c) {
  validate(c);  // throws: no LibTorch
  return nullptr;
}

std::vector<double> time_steps(const Config& c, int, const Options&) {
  validate(c);  // throws: no LibTorch
  return {};
}

AllocOutcome capture_alloc(const AllocConfig&) {
  throw InputError(
      "racelab live alloc needs a CUDA build of LibTorch: build against the PyTorch wheel with "
      "tools/gpu/build.sh on a GPU machine");
}

}  // namespace racelab::live::torch_workload

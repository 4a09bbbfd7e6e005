// Configuration of the LibTorch workload: checks and JSON, without LibTorch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "live/torch/workload.h"
#include "model/settings.h"
#include "util/errors.h"

namespace racelab::live::torch_workload {

namespace detail {
bool fused_available();  // defined by the LibTorch build (or its stand-in)
}

namespace {

// The names are model/settings.h's: the scenario format's warmup modes (all but the model-only
// one), and the workload's own attention variants, which have no model counterpart.
namespace settings = model::settings;

template <std::size_t N>
bool one_of(const std::string& v, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

}  // namespace

std::vector<int> parse_lengths(const std::string& text, const std::string& flag) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    try {
      std::size_t used = 0;
      const int v = std::stoi(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw InputError(fmt::format("{}: '{}' is not a length (expected e.g. 128,256)", flag, item));
    }
    pos = comma + 1;
  }
  return out;
}

void validate(const Config& c) {
  if (c.drafters < 1 || c.drafters > 64)
    throw InputError(fmt::format("--drafters must be 1..64, got {}", c.drafters));
  if (c.device != "cpu" && c.device != "cuda")
    throw InputError(fmt::format("--device must be cpu or cuda, got '{}'", c.device));
  if (c.gpus < 1) throw InputError(fmt::format("--gpus must be at least 1, got {}", c.gpus));
  if (c.warmup == settings::kModelOnlyWarmup)
    throw InputError(
        "--warmup separate_process is not available live: the C++ workload has no on-disk compile "
        "cache for another process to warm (use the model: racelab explore)");
  if (!one_of(c.warmup, settings::kLiveWarmupModes))
    throw InputError(fmt::format("--warmup must be one of {}, got '{}'",
                                 fmt::join(settings::kLiveWarmupModes, ", "), c.warmup));
  if (!one_of(c.attention, settings::kWorkloadAttentions))
    throw InputError(fmt::format("--attention must be one of {}, got '{}'",
                                 fmt::join(settings::kWorkloadAttentions, ", "), c.attention));
  if (c.seq_lens.empty()) throw InputError("--seq-lens needs at least one length");
  for (int l : c.seq_lens)
    if (l < 1 || l > 65536)
      throw InputError(fmt::format("--seq-lens: lengths must be 1..65536, got {}", l));
  if (c.warmup_seq_len < 0 || c.warmup_seq_len > 65536)
    throw InputError(fmt::format("--warmup-seq-len must be 0..65536, got {}", c.warmup_seq_len));
  if (c.heads < 1 || c.hidden < c.heads || c.hidden % c.heads != 0)
    throw InputError(fmt::format("--hidden ({}) must be a positive multiple of --heads ({})",
                                 c.hidden, c.heads));
  if (c.chunk < 1) throw InputError(fmt::format("--chunk must be positive, got {}", c.chunk));
  if (!built_with_torch())
    throw InputError(
        "this racelab was built without LibTorch: install libtorch-dev (CPU) and rebuild, or build "
        "against the PyTorch wheel with tools/gpu/build.sh");
  if (c.device == "cuda" && !cuda_available())
    throw InputError(
        fmt::format("--device cuda: {}", build_description().find("CUDA") == std::string::npos
                                             ? "this racelab's LibTorch has no CUDA"
                                             : "no CUDA device is present"));
  if (c.attention == settings::workload_attention::kFused && !detail::fused_available())
    throw InputError(fmt::format(
        "--attention fused needs scaled_dot_product_attention (LibTorch 2.0 or later); this is {}",
        build_description()));
}

void apply_shape(Config& c, const ShapeOptions& o) {
  if (!o.seq_lens.empty() && (!o.seq_len.empty() || o.steps != 0))
    throw InputError("--seq-lens is --seq-len and --steps in one (a length per step): give either");
  if (o.hidden != 0 && o.head_dim != 0)
    throw InputError("--hidden is heads x --head-dim: give either");
  if (o.steps < 0) throw InputError(fmt::format("--steps must be positive, got {}", o.steps));
  if (!o.seq_lens.empty()) c.seq_lens = parse_lengths(o.seq_lens, "--seq-lens");
  if (!o.seq_len.empty() || o.steps != 0) {
    const std::vector<int> one = o.seq_len.empty() ? std::vector<int>{c.seq_lens.front()}
                                                   : parse_lengths(o.seq_len, "--seq-len");
    if (one.size() != 1)
      throw InputError(fmt::format(
          "--seq-len takes one length, got '{}' (a length per step: --seq-lens)", o.seq_len));
    c.seq_lens.assign(o.steps == 0 ? 1 : static_cast<std::size_t>(o.steps), one.front());
  }
  if (o.head_dim < 0)
    throw InputError(fmt::format("--head-dim must be positive, got {}", o.head_dim));
  if (o.head_dim != 0) c.hidden = c.heads * o.head_dim;
  if (o.hidden != 0) c.hidden = o.hidden;
}

std::string config_json(const Config& c) {
  nlohmann::ordered_json j;
  j["drafters"] = c.drafters;
  j["device"] = c.device;
  j["gpus"] = c.gpus;
  j["attention"] = c.attention;
  j["warmup"] = c.warmup;
  j["warmup_backward"] = c.warmup_backward;
  j["warmup_seq_len"] = c.warmup_seq_len;
  j["seq_lens"] = c.seq_lens;
  j["hidden"] = c.hidden;
  j["heads"] = c.heads;
  j["chunk"] = c.chunk;
  return j.dump();
}

sched::SubjectConfig to_config(const Config& c) {
  sched::SubjectConfig s;
  s.set("drafters", std::int64_t{c.drafters});
  s.set("device", c.device);
  s.set("gpus", std::int64_t{c.gpus});
  s.set("attention", c.attention);
  s.set("warmup", c.warmup);
  s.set("warmup_backward", c.warmup_backward);
  s.set("warmup_seq_len", std::int64_t{c.warmup_seq_len});
  s.set("seq_lens", std::vector<std::int64_t>(c.seq_lens.begin(), c.seq_lens.end()));
  s.set("hidden", std::int64_t{c.hidden});
  s.set("heads", std::int64_t{c.heads});
  s.set("chunk", std::int64_t{c.chunk});
  return s;
}

std::string recorded_device(const sched::SubjectConfig& live_configuration) {
  const sched::ConfigValue* device = live_configuration.find("device");
  const std::string* text = device != nullptr ? std::get_if<std::string>(device) : nullptr;
  return text != nullptr ? *text : "";
}

namespace {

int int_setting(const sched::SubjectConfig& s, std::string_view key) {
  const std::int64_t v = sched::required(s.integer(key), key);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw InputError(fmt::format("{}: {} is out of range", key, v));
  return static_cast<int>(v);
}

}  // namespace

Config from_config(const sched::SubjectConfig& s) {
  Config c;
  try {
    c.drafters = int_setting(s, "drafters");
    c.device = sched::required(s.text("device"), "device");
    c.gpus = int_setting(s, "gpus");
    c.attention = sched::required(s.text("attention"), "attention");
    c.warmup = sched::required(s.text("warmup"), "warmup");
    c.warmup_backward = sched::required(s.boolean("warmup_backward"), "warmup_backward");
    c.warmup_seq_len = int_setting(s, "warmup_seq_len");
    c.seq_lens.clear();
    for (const std::int64_t n : sched::required(s.integers("seq_lens"), "seq_lens")) {
      if (n < 0 || n > std::numeric_limits<int>::max())
        throw InputError(fmt::format("seq_lens: {} is out of range", n));
      c.seq_lens.push_back(static_cast<int>(n));
    }
    c.hidden = int_setting(s, "hidden");
    c.heads = int_setting(s, "heads");
    c.chunk = int_setting(s, "chunk");
  } catch (const InputError& e) {
    throw InputError(fmt::format("workload parameters: {}", e.what()));
  }
  return c;
}

}  // namespace racelab::live::torch_workload

#include "alloc/attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "alloc/report.h"

namespace racelab::alloc {

bool is_torch_frame(const Frame& f) {
  const std::string& p = f.filename;
  if (p.empty() || p == "??" || p.front() == '<') return true;  // "<frozen ...>", "<string>"
  static const char* const kTorch[] = {"/torch/",     "/torchinductor_", "/triton/",
                                       "/functorch/", "/torchgen/",      "/torchvision/"};
  for (const char* t : kTorch) {
    if (p.find(t) != std::string::npos) return true;
  }
  return p.rfind("torch/", 0) == 0;
}

std::string frame_text(const Frame& f) {
  // The file's last two path parts: enough to tell train.py from models/train.py, short enough
  // for a terminal line.
  std::string file = f.filename;
  const auto last = file.rfind('/');
  if (last != std::string::npos && last > 0) {
    const auto before = file.rfind('/', last - 1);
    if (before != std::string::npos) file = file.substr(before + 1);
  }
  return fmt::format("{}:{} in {}", file, f.line, f.name);
}

const Frame* user_frame(const Stack& stack) {
  for (const Frame& f : stack) {
    if (!is_torch_frame(f)) return &f;
  }
  return nullptr;
}

std::vector<CallSite> call_sites(const std::vector<DeviceAllocCause>& causes,
                                 const std::vector<Stack>& stacks) {
  std::map<std::string, CallSite> by_site;
  for (const DeviceAllocCause& c : causes) {
    std::string where = kNoStack;
    std::vector<std::string> callers;
    if (c.stack >= 0 && static_cast<std::size_t>(c.stack) < stacks.size()) {
      const Stack& s = stacks[static_cast<std::size_t>(c.stack)];
      where = "torch only (no frame outside torch)";
      bool found = false;
      for (const Frame& f : s) {
        if (is_torch_frame(f)) continue;
        if (!found) {
          where = frame_text(f);
          found = true;
        } else if (callers.size() < 2) {
          callers.push_back(frame_text(f));
        }
      }
    }
    CallSite& site = by_site[where];
    if (site.count == 0) {
      site.where = where;
      site.callers = std::move(callers);
    }
    ++site.count;
    site.bytes += c.requested;
  }
  std::vector<CallSite> out;
  for (auto& [_, s] : by_site) out.push_back(std::move(s));
  std::stable_sort(out.begin(), out.end(), [](const CallSite& a, const CallSite& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.bytes > b.bytes;
  });
  return out;
}

const char* cause_kind(const CacheMiss& m) {
  if (m.oversize_excluded) return "oversize blocks excluded";
  if (m.fragmentation()) return "fragmentation";
  return "cache too small";
}

std::string describe_cause(const DeviceAllocCause& c) {
  const CacheMiss& m = c.miss;
  std::string out =
      fmt::format("alloc of {} ({} pool, stream {}): no free block of {}", format_size(c.requested),
                  m.small_pool ? "small" : "large", m.stream, format_size(m.size));
  if (m.free_blocks == 0) {
    out += "; nothing free in that pool";
  } else {
    out += fmt::format(
        "; {} free in {} block{} across {} segment{}, the largest {}: ", format_size(m.free_bytes),
        m.free_blocks, m.free_blocks == 1 ? "" : "s", m.free_segments,
        m.free_segments == 1 ? "" : "s", format_size(m.largest_free));
    if (m.oversize_excluded)
      out += "oversize blocks excluded (max_split_size_mb)";
    else if (m.fragmentation())
      out += "fragmentation";
    else
      out += "the cache held too little";
  }
  out += fmt::format("; {} device allocation{} of {}", c.device_allocs,
                     c.device_allocs == 1 ? "" : "s", format_size(m.alloc_size));
  return out;
}

std::vector<std::string> growth_lines(const StabilityReport& r) {
  constexpr std::size_t kShownAllocs = 3;
  constexpr std::size_t kShownSites = 5;
  std::vector<std::string> out;
  const std::string unit = r.iterations ? "iteration" : "window";
  for (const Growth& g : r.growth) {
    if (g.warm) continue;
    std::size_t fragmented = 0;
    for (const DeviceAllocCause& c : g.causes) fragmented += c.miss.fragmentation() ? 1 : 0;
    out.push_back(fmt::format("growth at {} {}: {} allocation{} went to the device{}", unit,
                              g.label, g.causes.size(), g.causes.size() == 1 ? "" : "s",
                              fragmented ? fmt::format(", {} on fragmentation", fragmented) : ""));
    for (std::size_t k = 0; k < g.causes.size() && k < kShownAllocs; ++k)
      out.push_back("  " + describe_cause(g.causes[k]));
    if (g.causes.size() > kShownAllocs)
      out.push_back(fmt::format("  and {} more", g.causes.size() - kShownAllocs));
    if (!r.frames) {
      out.push_back(std::string("  call sites: ") + kNoFramesHint);
      continue;
    }
    for (std::size_t k = 0; k < g.sites.size() && k < kShownSites; ++k) {
      const CallSite& s = g.sites[k];
      std::string line = fmt::format("  call site: {} ({} allocation{}, {})", s.where, s.count,
                                     s.count == 1 ? "" : "s", format_size(s.bytes));
      for (const std::string& c : s.callers) line += " <- " + c;
      out.push_back(std::move(line));
    }
    if (g.sites.size() > kShownSites)
      out.push_back(fmt::format("  and {} more call sites", g.sites.size() - kShownSites));
  }
  return out;
}

}  // namespace racelab::alloc

#include "alloc/diff.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "util/errors.h"

namespace racelab::alloc {

namespace {

std::string mib_text(std::uint64_t b) { return fmt::format("{} MiB", (b + kMiB / 2) / kMiB); }

std::string signed_mib(std::uint64_t a, std::uint64_t b) {
  return b >= a ? "+" + mib_text(b - a) : "-" + mib_text(a - b);
}

std::string signed_count(std::size_t a, std::size_t b) {
  return b >= a ? fmt::format("+{}", b - a) : fmt::format("-{}", a - b);
}

std::string sizes_text(std::vector<std::uint64_t> sizes) {
  std::map<std::uint64_t, std::size_t> counts;
  for (std::uint64_t s : sizes) ++counts[s];
  std::string out;
  for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
    if (!out.empty()) out += ", ";
    out += it->second > 1 ? fmt::format("{} x {}", it->second, format_size(it->first))
                          : format_size(it->first);
  }
  return out;
}

// Sizes in `from` that `minus` does not have (multiset difference).
std::vector<std::uint64_t> missing(std::vector<std::uint64_t> from,
                                   std::vector<std::uint64_t> minus) {
  std::sort(from.begin(), from.end());
  std::sort(minus.begin(), minus.end());
  std::vector<std::uint64_t> out;
  std::set_difference(from.begin(), from.end(), minus.begin(), minus.end(),
                      std::back_inserter(out));
  return out;
}

std::uint64_t reserved(const std::vector<Segment>& segs) {
  std::uint64_t total = 0;
  for (const Segment& s : segs) total += s.total_size;
  return total;
}

}  // namespace

DiffSide run_side(const StabilityReport& r, const std::vector<Stack>& stacks) {
  DiffSide s;
  s.name = r.name;
  s.segments = r.replay.segments_at ? *r.replay.segments_at : r.replay.segments;
  s.causes = r.replay.causes;
  s.stacks = stacks;
  s.frames = r.frames;
  s.verdict = r.verdict;
  s.growth_at = r.growth_at;
  std::vector<DeviceAllocCause> late;
  for (const Growth& g : r.growth) {
    if (!g.warm) late.insert(late.end(), g.causes.begin(), g.causes.end());
  }
  s.late_sites = call_sites(late, stacks);
  return s;
}

DiffSide iteration_side(const StabilityReport& r, const std::vector<Stack>& stacks,
                        const std::string& label) {
  auto row =
      std::find_if(r.rows.begin(), r.rows.end(), [&](const Row& x) { return x.label == label; });
  if (row == r.rows.end() || !r.replay.segments_at)
    throw InputError(fmt::format("no {} '{}' in {} ({} to {})",
                                 r.iterations ? "iteration" : "window", label, r.name,
                                 r.rows.front().label, r.rows.back().label));
  DiffSide s;
  s.name = fmt::format("{} {} {}", r.name, r.iterations ? "iteration" : "window", label);
  s.segments = *r.replay.segments_at;
  for (const DeviceAllocCause& c : r.replay.causes) {
    if (c.event < row->events_end) s.causes.push_back(c);
  }
  s.stacks = stacks;
  s.frames = r.frames;
  return s;
}

MemoryDiff diff_sides(const DiffSide& a, const DiffSide& b) {
  MemoryDiff d;
  d.a = a.name;
  d.b = b.name;
  d.a_verdict = a.verdict;
  d.b_verdict = b.verdict;
  d.frames = a.frames && b.frames;
  for (const bool small : {false, true}) {
    PoolDiff p;
    p.pool = small ? "small" : "large";
    std::vector<std::uint64_t> sa, sb;
    for (const Segment& s : a.segments) {
      if (s.small_pool == small) sa.push_back(s.total_size);
    }
    for (const Segment& s : b.segments) {
      if (s.small_pool == small) sb.push_back(s.total_size);
    }
    p.segments_a = sa.size();
    p.segments_b = sb.size();
    for (std::uint64_t x : sa) p.reserved_a += x;
    for (std::uint64_t x : sb) p.reserved_b += x;
    p.added = missing(sb, sa);
    p.removed = missing(sa, sb);
    d.pools.push_back(std::move(p));
  }
  // Call sites: every site either side allocated from, with different numbers.
  std::map<std::string, SiteDiff> sites;
  for (const CallSite& s : call_sites(a.causes, a.stacks)) {
    SiteDiff& x = sites[s.where];
    x.where = s.where;
    x.count_a = s.count;
    x.bytes_a = s.bytes;
  }
  for (const CallSite& s : call_sites(b.causes, b.stacks)) {
    SiteDiff& x = sites[s.where];
    x.where = s.where;
    x.count_b = s.count;
    x.bytes_b = s.bytes;
  }
  for (auto& [_, s] : sites) {
    if (s.count_a != s.count_b || s.bytes_a != s.bytes_b) d.sites.push_back(s);
  }
  auto delta = [](const SiteDiff& s) {
    return s.bytes_b >= s.bytes_a ? s.bytes_b - s.bytes_a : s.bytes_a - s.bytes_b;
  };
  auto count_delta = [](const SiteDiff& s) {
    return s.count_b >= s.count_a ? s.count_b - s.count_a : s.count_a - s.count_b;
  };
  std::stable_sort(d.sites.begin(), d.sites.end(), [&](const SiteDiff& x, const SiteDiff& y) {
    if (delta(x) != delta(y)) return delta(x) > delta(y);
    return count_delta(x) > count_delta(y);
  });

  // Who grew: a run that did not settle against one that did; else more reserved; else more
  // segments.
  const std::uint64_t ra = reserved(a.segments), rb = reserved(b.segments);
  const std::size_t na = a.segments.size(), nb = b.segments.size();
  const DiffSide* grower = nullptr;
  const DiffSide* other = nullptr;
  if (!a.growth_at.empty() != !b.growth_at.empty()) {
    grower = a.growth_at.empty() ? &b : &a;
  } else if (ra != rb) {
    grower = rb > ra ? &b : &a;
  } else if (na != nb) {
    grower = nb > na ? &b : &a;
  }
  if (!grower) {
    d.summary = fmt::format("neither grew: both {} segments, {} reserved", na, mib_text(ra));
    return d;
  }
  other = grower == &a ? &b : &a;
  d.grew = grower->name;
  std::string where;
  if (!grower->growth_at.empty()) {
    where = fmt::format("; it grew after its warm phase at {}", fmt::join(grower->growth_at, ", "));
    if (!d.frames && !grower->frames) {
      where += " (no frames recorded: call sites unknown)";
    } else if (!grower->late_sites.empty()) {
      std::vector<std::string> named;
      for (std::size_t k = 0; k < grower->late_sites.size() && k < 3; ++k) {
        const CallSite& s = grower->late_sites[k];
        named.push_back(
            fmt::format("{} ({} allocation{})", s.where, s.count, s.count == 1 ? "" : "s"));
      }
      where += ", from " + fmt::format("{}", fmt::join(named, ", "));
    }
  } else {
    // No verdict to go by (iterations): the call site with the most bytes more on the grower.
    for (const SiteDiff& s : d.sites) {
      const bool more = grower == &b ? s.bytes_b > s.bytes_a : s.bytes_a > s.bytes_b;
      if (!more) continue;
      const std::size_t more_allocs = grower == &b ? s.count_b - std::min(s.count_b, s.count_a)
                                                   : s.count_a - std::min(s.count_a, s.count_b);
      where = fmt::format("; the most from {} ({} device allocation{} more)", s.where, more_allocs,
                          more_allocs == 1 ? "" : "s");
      break;
    }
  }
  const std::uint64_t rg = reserved(grower->segments), ro = reserved(other->segments);
  const std::size_t ng = grower->segments.size(), no = other->segments.size();
  d.summary = fmt::format("{} grew against {}: {} segments, {} reserved against {}, {} ({}, {}){}",
                          grower->name, other->name, ng, mib_text(rg), no, mib_text(ro),
                          signed_count(no, ng), signed_mib(ro, rg), where);
  return d;
}

std::vector<std::string> diff_lines(const MemoryDiff& d) {
  std::vector<std::string> out;
  out.push_back(d.summary);
  auto side = [](const char* letter, const std::string& name, const std::string& verdict) {
    const std::string prefix = std::string(letter) + " ";
    return fmt::format("{}{}{}", name.rfind(prefix, 0) == 0 ? "" : prefix + "= ", name,
                       verdict.empty() ? "" : ": " + verdict);
  };
  out.push_back(side("A", d.a, d.a_verdict));
  out.push_back(side("B", d.b, d.b_verdict));
  for (const PoolDiff& p : d.pools) {
    if (p.segments_a == 0 && p.segments_b == 0) continue;
    std::string line =
        fmt::format("{} pool: {} -> {} segments ({}), {} -> {} reserved ({})", p.pool, p.segments_a,
                    p.segments_b, signed_count(p.segments_a, p.segments_b), mib_text(p.reserved_a),
                    mib_text(p.reserved_b), signed_mib(p.reserved_a, p.reserved_b));
    if (!p.added.empty()) line += "; added in B: " + sizes_text(p.added);
    if (!p.removed.empty()) line += "; only in A: " + sizes_text(p.removed);
    out.push_back(std::move(line));
  }
  if (d.sites.empty()) {
    out.push_back("call sites: the same device allocations from each");
  } else {
    out.push_back(fmt::format("call sites with other device allocations (A -> B){}",
                              d.frames ? "" : std::string(": ") + kNoFramesHint));
    for (std::size_t k = 0; k < d.sites.size() && k < 8; ++k) {
      const SiteDiff& s = d.sites[k];
      out.push_back(fmt::format("  {}: {} -> {} allocations, {} -> {} ({})", s.where, s.count_a,
                                s.count_b, mib_text(s.bytes_a), mib_text(s.bytes_b),
                                signed_mib(s.bytes_a, s.bytes_b)));
    }
    if (d.sites.size() > 8) out.push_back(fmt::format("  and {} more", d.sites.size() - 8));
  }
  return out;
}

nlohmann::ordered_json diff_json(const MemoryDiff& d) {
  nlohmann::ordered_json j;
  j["format"] = "racelab-alloc-diff";
  j["version"] = kAllocDiffVersion;
  j["a"] = d.a;
  j["b"] = d.b;
  j["grew"] = d.grew.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.grew);
  j["summary"] = d.summary;
  j["frames"] = d.frames;
  auto pools = nlohmann::ordered_json::array();
  for (const PoolDiff& p : d.pools) {
    pools.push_back({{"pool", p.pool},
                     {"segments_a", p.segments_a},
                     {"segments_b", p.segments_b},
                     {"reserved_a", p.reserved_a},
                     {"reserved_b", p.reserved_b},
                     {"added", p.added},
                     {"removed", p.removed}});
  }
  j["pools"] = pools;
  auto sites = nlohmann::ordered_json::array();
  for (const SiteDiff& s : d.sites) {
    sites.push_back({{"where", s.where},
                     {"count_a", s.count_a},
                     {"count_b", s.count_b},
                     {"bytes_a", s.bytes_a},
                     {"bytes_b", s.bytes_b}});
  }
  j["call_sites"] = sites;
  return j;
}

}  // namespace racelab::alloc

#include "alloc/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "util/errors.h"
#include "util/files.h"

namespace racelab::alloc {

namespace {

std::uint64_t mib(std::uint64_t b) { return (b + kMiB / 2) / kMiB; }

// A version 2 row's "steps": [{"optimizer", "class", "thread", "thread_number", "first"}].
std::vector<Step> steps_of(const nlohmann::json& row, const std::string& where) {
  if (!row.contains("steps") || !row["steps"].is_array())
    throw InputError(fmt::format("{}: missing list 'steps'", where));
  std::vector<Step> out;
  std::size_t i = 0;
  for (const auto& s : row["steps"]) {
    auto need = [&](const char* key, bool ok, const char* what) {
      if (!s.is_object() || !s.contains(key) || !ok)
        throw InputError(fmt::format("{}: steps[{}]: missing {} '{}'", where, i, what, key));
    };
    need("optimizer",
         s.is_object() && s.contains("optimizer") && s["optimizer"].is_number_integer(), "integer");
    need("class", s.contains("class") && s["class"].is_string(), "string");
    need("thread", s.contains("thread") && s["thread"].is_string(), "string");
    need("thread_number", s.contains("thread_number") && s["thread_number"].is_number_integer(),
         "integer");
    need("first", s.contains("first") && s["first"].is_boolean(), "boolean");
    out.push_back({s["optimizer"].get<std::int64_t>(), s["class"].get<std::string>(),
                   s["thread"].get<std::string>(), s["thread_number"].get<std::int64_t>(),
                   s["first"].get<bool>()});
    ++i;
  }
  return out;
}

}  // namespace

Boundaries boundaries_from_stats(const std::vector<TraceEvent>& trace,
                                 const std::filesystem::path& path,
                                 const std::string& trace_origin) {
  const std::string origin = path.string();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: byte {}: invalid JSON", origin, e.byte));
  }
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array()) {
    throw InputError(
        fmt::format("{}: expected an object with a 'rows' list of iterations", origin));
  }
  Boundaries b;
  b.source = fmt::format("stats JSON {}", path.filename().string());
  b.iterations = true;
  // racelab's capture names its format; from version 2 each row lists its optimizer steps.
  const std::string format =
      j.contains("format") && j["format"].is_string() ? j["format"].get<std::string>() : "";
  const std::int64_t version = j.contains("version") && j["version"].is_number_integer()
                                   ? j["version"].get<std::int64_t>()
                                   : 1;
  if (format == kStatsFormat && version > kStatsVersion) {
    throw InputError(fmt::format(
        "{}: {} version {}: this racelab reads versions up to {}; use the racelab that wrote it",
        origin, kStatsFormat, version, kStatsVersion));
  }
  const bool knows_steps = format == kStatsFormat && version >= 2;
  if (!knows_steps) {
    b.steps_unknown =
        format == kStatsFormat
            ? fmt::format(
                  "{} is a capture of version {}, which did not record which threads and "
                  "optimizers stepped",
                  path.filename().string(), version)
            : fmt::format("{} does not record which threads and optimizers stepped",
                          path.filename().string());
  }
  if (j.contains("warmup") && j["warmup"].is_object() && j["warmup"].contains("L") &&
      j["warmup"]["L"].is_number_integer())
    b.warmup_length = j["warmup"]["L"].get<std::int64_t>();
  std::size_t pos = 0;
  std::size_t k = 0;
  for (const auto& row : j["rows"]) {
    auto num = [&](const char* key) -> std::int64_t {
      if (!row.is_object() || !row.contains(key) || !row[key].is_number_integer()) {
        throw InputError(fmt::format("{}: rows[{}]: missing integer '{}'", origin, k, key));
      }
      return row[key].get<std::int64_t>();
    };
    const std::int64_t t_end = num("t_end_us");
    Window w;
    w.label = row.contains("iter") && row["iter"].is_number_integer()
                  ? fmt::format("{}", row["iter"].get<std::int64_t>())
                  : fmt::format("{}", k);
    // Events up to the end of this iteration that were not in an earlier one.
    while (pos < trace.size() && trace[pos].time_us < num("t_start_us") && k == 0) ++pos;
    w.first = pos;
    while (pos < trace.size() && trace[pos].time_us <= t_end) ++pos;
    w.end = pos;
    Window::Recorded rec;
    rec.reserved = num("reserved");
    rec.allocated = num("allocated");
    rec.segments = num("segments");
    rec.device_allocs = num("device_allocs");
    rec.inactive_split_bytes =
        row.contains("inactive_split_bytes") ? num("inactive_split_bytes") : -1;
    w.recorded = rec;
    if (row.contains("L") && row["L"].is_number_integer()) w.length = row["L"].get<std::int64_t>();
    if (knows_steps) w.steps = steps_of(row, fmt::format("{}: rows[{}]", origin, k));
    b.windows.push_back(std::move(w));
    ++k;
  }
  if (b.windows.empty()) throw InputError(fmt::format("{}: 'rows' is empty", origin));
  std::size_t inside = 0;
  for (const Window& w : b.windows) inside += w.end - w.first;
  if (inside == 0 && !trace.empty()) {
    const auto& rows = j["rows"];
    throw InputError(fmt::format(
        "{}: does not belong to {}: its {} iterations run from {} to {} us, the trace's {} events "
        "from {} to {} us (same epoch clock), so no event falls in any iteration; pass the stats "
        "JSON recorded with this trace",
        origin, trace_origin, b.windows.size(), rows.front()["t_start_us"].get<std::int64_t>(),
        rows.back()["t_end_us"].get<std::int64_t>(), trace.size(), trace.front().time_us,
        trace.back().time_us));
  }
  return b;
}

std::optional<Boundaries> boundaries_from_annotations(const std::vector<TraceEvent>& trace,
                                                      const std::vector<Annotation>& annotations) {
  std::vector<std::pair<std::int64_t, std::string>> ends;  // (time, name) of each END
  std::map<std::string, std::int64_t> open;
  for (const Annotation& a : annotations) {
    if (a.stage == "START") open[a.name] = a.time_us;
    if (a.stage == "END" && open.count(a.name)) {
      ends.emplace_back(a.time_us, a.name);
      open.erase(a.name);
    }
  }
  if (ends.size() < 2) return std::nullopt;
  std::sort(ends.begin(), ends.end());
  Boundaries b;
  b.source = "annotations";
  b.iterations = true;
  b.steps_unknown = "annotations do not record which threads and optimizers stepped";
  std::size_t pos = 0;
  for (const auto& [t, name] : ends) {
    Window w;
    w.label = name;
    w.first = pos;
    while (pos < trace.size() && trace[pos].time_us <= t) ++pos;
    w.end = pos;
    b.windows.push_back(std::move(w));
  }
  return b;
}

Boundaries boundaries_by_window(const std::vector<TraceEvent>& trace, std::size_t per) {
  Boundaries b;
  per = std::max<std::size_t>(per, 1);
  b.source = fmt::format("windows of {} allocations", per);
  b.steps_unknown = "no iterations are known (no stats JSON or annotations)";
  std::size_t first = 0;
  std::size_t allocs = 0;
  std::size_t first_alloc = 0;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (trace[i].action != Action::kAlloc) continue;
    if (allocs % per == 0) first_alloc = allocs;
    ++allocs;
    if (allocs % per == 0) {
      b.windows.push_back({fmt::format("allocs {}-{}", first_alloc + 1, allocs), first, i + 1, {}});
      first = i + 1;
    }
  }
  if (first < trace.size() || b.windows.empty()) {
    b.windows.push_back(
        {fmt::format("allocs {}-{}", allocs - allocs % per + 1, allocs), first, trace.size(), {}});
  }
  return b;
}

namespace {

// Why a window outside the warm phase allocated: a length longer than any served before (a
// larger working set) or not (fragmentation: the cache held enough bytes, not in one piece).
// Without lengths, the most allocated in the window against the most in any before it; with
// several drafters a larger working set may also be their peaks meeting for the first time (on
// the H200, docs/results/warm-phase-h200: the third round of two lock-step drafters).
std::string growth_reason(const Row& row, const Window& w, std::optional<std::int64_t> served,
                          std::uint64_t peak_before, std::size_t drafters) {
  if (w.length) {
    if (!served) return fmt::format("length {}, the first served", *w.length);
    if (*w.length > *served)
      return fmt::format("a new length {}, longer than the {} served before", *w.length, *served);
    return fmt::format("length {}, no longer than the {} served before: fragmentation", *w.length,
                       *served);
  }
  if (row.peak_allocated > peak_before)
    return fmt::format(
        "a larger working set: {} MiB allocated at its peak, above the {} MiB before{}",
        mib(row.peak_allocated), mib(peak_before),
        drafters > 1
            ? fmt::format(" (a new shape, or the {} drafters' peaks meeting for the first time)",
                          drafters)
            : std::string());
  return fmt::format("{} MiB allocated at its peak, no more than the {} MiB before: fragmentation",
                     mib(row.peak_allocated), mib(peak_before));
}

std::string listed(const std::vector<std::string>& items, std::size_t shown,
                   const char* separator) {
  std::string out;
  for (std::size_t k = 0; k < items.size() && k < shown; ++k)
    out += (k ? separator : "") + items[k];
  if (items.size() > shown) out += fmt::format(" and {} more", items.size() - shown);
  return out;
}

// The warm phase, each growth's why, and the verdict.
void judge(StabilityReport& rep, const Boundaries& b, std::optional<std::size_t> settle,
           std::uint64_t warmup_peak, bool expandable) {
  const std::string unit = rep.iterations ? "iteration" : "window";
  std::vector<std::vector<Step>> steps;
  std::vector<std::string> labels;
  for (const Window& w : b.windows) {
    steps.push_back(w.steps);
    labels.push_back(w.label);
  }
  rep.warm = find_warm_phase(steps, labels, unit, b.steps_unknown, settle);
  const std::size_t warm = std::min(rep.warm.rows, rep.rows.size());
  rep.after_warm = rep.rows.size() - warm;
  std::optional<std::int64_t> served = b.warmup_length;  // the longest length served so far
  std::uint64_t peak_before = warmup_peak;               // the most allocated so far
  bool any_growth = false;
  std::vector<std::string> why, warm_why;
  for (std::size_t k = 0; k < rep.rows.size(); ++k) {
    const Row& row = rep.rows[k];
    const Window& w = b.windows[k];
    if (row.device_allocs_in > 0) {
      Growth g{row.label, k < warm, "", k, {}, {}};
      g.reason = g.warm ? (k < rep.warm.reasons.size() ? rep.warm.reasons[k] : std::string())
                        : growth_reason(row, w, served, peak_before, rep.warm.drafters);
      if (g.warm)
        warm_why.push_back(fmt::format("{}: {}", g.label, g.reason));
      else {
        rep.growth_at.push_back(g.label);
        why.push_back(fmt::format("{}: {}", g.label, g.reason));
      }
      rep.growth.push_back(std::move(g));
      rep.stable_from = k;
      any_growth = true;
    }
    if (w.length) served = std::max(served.value_or(0), *w.length);
    peak_before = std::max(peak_before, row.peak_allocated);
  }
  if (!any_growth) rep.stable_from = 0;
  rep.measured = !rep.growth_at.empty() || (rep.warm.ended && rep.after_warm >= kMinMeasured);
  rep.stable = rep.growth_at.empty() && rep.measured;

  const Row& a = rep.rows.front();
  const Row& z = rep.rows.back();
  const std::string what = expandable ? "mapped ranges" : "segments";
  const std::string phase = fmt::format("the warm phase ({})", rep.warm.text);
  if (!rep.growth_at.empty()) {
    rep.verdict = fmt::format(
        "not stable: device allocations at {}{} {} after {}; {} -> {} {}, reserved {} -> {} MiB; "
        "{}",
        unit, rep.growth_at.size() > 1 ? "s" : "", listed(rep.growth_at, 12, ", "), phase,
        a.at_end.segments, z.at_end.segments, what, mib(a.at_end.reserved), mib(z.at_end.reserved),
        listed(why, 4, "; "));
  } else if (!rep.measured) {
    const std::string count =
        rep.warm.ended ? fmt::format("{}, at least {} needed", rep.after_warm, kMinMeasured)
                       : std::string("the run ended in it");
    rep.verdict = fmt::format("not measured: too few {}s after {}: {}; {} {}, reserved {} MiB",
                              unit, phase, count, z.at_end.segments, what, mib(z.at_end.reserved));
  } else {
    rep.verdict = fmt::format(
        "stable from {} {}: no device allocation in the {} {}s after {}; {} {}, reserved {} MiB",
        unit, rep.rows[rep.stable_from].label, rep.after_warm, unit, phase, z.at_end.segments, what,
        mib(z.at_end.reserved));
  }
  if (rep.warm.source == WarmPhase::Source::kCapture && !warm_why.empty())
    rep.verdict += "; grew in the warm phase at " + listed(warm_why, 6, "; ");
}

}  // namespace

const char* stability_name(const StabilityReport& r) {
  return !r.measured ? "not_measured" : r.stable ? "stable" : "unstable";
}

StabilityReport analyse(const std::string& name, const std::vector<TraceEvent>& trace,
                        const Boundaries& boundaries, ReplayOptions options,
                        std::optional<std::size_t> settle, std::optional<std::string> segments_at,
                        const std::vector<Stack>& stacks) {
  StabilityReport rep;
  {
    const Window* w = &boundaries.windows.back();
    if (segments_at) {
      auto it = std::find_if(boundaries.windows.begin(), boundaries.windows.end(),
                             [&](const Window& x) { return x.label == *segments_at; });
      if (it == boundaries.windows.end()) {
        throw InputError(fmt::format("--segments-at: no {} '{}' in {} ({} to {})",
                                     boundaries.iterations ? "iteration" : "window", *segments_at,
                                     name, boundaries.windows.front().label,
                                     boundaries.windows.back().label));
      }
      w = &*it;
    }
    rep.segments_label = w->label;
    options.segments_after = w->end > 0 ? w->end - 1 : 0;
  }
  rep.name = name;
  rep.boundaries_source = boundaries.source;
  rep.iterations = boundaries.iterations;
  // A sample just before the first window (the state warmup left) and at every window's end.
  options.sample_after.clear();
  const std::size_t first = boundaries.windows.front().first;
  const bool have_before = first > 0;
  if (have_before) options.sample_after.push_back(first - 1);
  for (const Window& w : boundaries.windows)
    options.sample_after.push_back(w.end > 0 ? w.end - 1 : 0);
  std::sort(options.sample_after.begin(), options.sample_after.end());
  rep.replay = replay_trace(trace, options);
  const auto& samples = rep.replay.samples;

  Sample before;  // zeros when the windows start at the first event
  std::size_t si = 0;
  if (have_before && !samples.empty()) before = samples[si++];
  const std::uint64_t warmup_peak = before.window_peak_allocated;  // before the first window
  const bool expandable = options.config.expandable_segments;
  for (const Window& w : boundaries.windows) {
    Row row;
    row.label = w.label;
    row.events_end = w.end;
    row.at_end = si < samples.size() ? samples[si++] : before;
    if (w.end == 0) row.at_end = Sample{};
    row.device_allocs_in = row.at_end.device_allocs - before.device_allocs;
    row.device_frees_in = row.at_end.device_frees - before.device_frees;
    row.peak_allocated = row.at_end.window_peak_allocated;
    row.fragmentation = row.at_end.free_cached == 0
                            ? 0.0
                            : 1.0 - static_cast<double>(row.at_end.largest_free) /
                                        static_cast<double>(row.at_end.free_cached);
    if (expandable) row.at_end.segments = static_cast<std::int64_t>(row.at_end.mapped_segments);
    row.recorded = w.recorded;
    if (w.recorded) {
      ++rep.recorded_rows;
      const auto& r = *w.recorded;
      const std::int64_t stat_segments = expandable ? 0 : row.at_end.segments;
      row.matches_recorded = r.reserved == static_cast<std::int64_t>(row.at_end.reserved) &&
                             r.allocated == static_cast<std::int64_t>(row.at_end.allocated) &&
                             (r.segments == stat_segments || r.segments == row.at_end.segments) &&
                             r.device_allocs == row.at_end.device_allocs;
      if (row.matches_recorded) ++rep.recorded_matches;
    }
    rep.peak_reserved = std::max(rep.peak_reserved, row.at_end.peak_reserved);
    before = row.at_end;
    rep.rows.push_back(std::move(row));
  }

  judge(rep, boundaries, settle, warmup_peak, expandable);
  // Attribution: each growth after the warm phase gets the allocations of its window that went
  // to the device, and their call sites.
  for (const TraceEvent& e : trace) {
    if (e.stack >= 0) {
      rep.frames = true;
      break;
    }
  }
  for (Growth& g : rep.growth) {
    if (g.warm) continue;
    const Window& w = boundaries.windows[g.row];
    for (const DeviceAllocCause& c : rep.replay.causes) {
      if (c.event >= w.first && c.event < w.end) g.causes.push_back(c);
    }
    g.sites = call_sites(g.causes, stacks);
  }
  rep.replay.samples.clear();
  return rep;
}

namespace {

std::string first_difference(const StabilityReport& r) {
  for (const Row& row : r.rows) {
    if (!row.recorded || row.matches_recorded) continue;
    const auto& rec = *row.recorded;
    return fmt::format(
        "iteration {}: stats reserved {} MiB, allocated {} MiB, {} segments, {} device "
        "allocations; replayed {} MiB, {} MiB, {}, {}",
        row.label, mib(static_cast<std::uint64_t>(rec.reserved)),
        mib(static_cast<std::uint64_t>(rec.allocated)), rec.segments, rec.device_allocs,
        mib(row.at_end.reserved), mib(row.at_end.allocated), row.at_end.segments,
        row.at_end.device_allocs);
  }
  return "";
}

}  // namespace

std::vector<std::string> check_stats_agreement(const std::vector<const StabilityReport*>& devices,
                                               const std::string& stats_origin,
                                               const std::string& trace_origin) {
  std::vector<std::string> warnings;
  bool any = false;
  for (const StabilityReport* r : devices) any = any || r->recorded_matches > 0;
  if (!any && !devices.empty() && devices.front()->recorded_rows > 0) {
    const StabilityReport& r = *devices.front();
    throw InputError(fmt::format(
        "{}: does not belong to {}: none of its {} iterations agrees with the replayed trace "
        "({}); pass the stats JSON recorded with this trace",
        stats_origin, trace_origin, r.recorded_rows, first_difference(r)));
  }
  for (const StabilityReport* r : devices) {
    if (r->recorded_rows == 0 || r->recorded_matches == r->recorded_rows) continue;
    warnings.push_back(fmt::format(
        "warning: {} agrees with {} at only {}/{} iterations (first difference at {}): the "
        "verdict follows the replayed trace",
        stats_origin, r->name, r->recorded_matches, r->recorded_rows, first_difference(*r)));
  }
  return warnings;
}

nlohmann::ordered_json report_json(const StabilityReport& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["boundaries"] = r.boundaries_source;
  j["stable"] = r.stable;
  j["stability"] = stability_name(r);
  j["verdict"] = r.verdict;
  j["stable_from"] =
      r.stable ? nlohmann::ordered_json(r.stable_from) : nlohmann::ordered_json(nullptr);
  j["growth_at"] = r.growth_at;
  const char* source = r.warm.source == WarmPhase::Source::kCapture  ? "capture"
                       : r.warm.source == WarmPhase::Source::kSettle ? "settle"
                                                                     : "assumed";
  j["warm_phase"] = {{"source", source},      {"iterations", std::min(r.warm.rows, r.rows.size())},
                     {"ended", r.warm.ended}, {"drafters", r.warm.drafters},
                     {"text", r.warm.text},   {"description", r.warm.description}};
  j["after_warm"] = r.after_warm;
  auto growth = nlohmann::ordered_json::array();
  for (const Growth& g : r.growth) {
    nlohmann::ordered_json entry = {{"label", g.label}, {"warm", g.warm}, {"reason", g.reason}};
    if (!g.warm) {
      auto allocs = nlohmann::ordered_json::array();
      for (const DeviceAllocCause& c : g.causes) {
        allocs.push_back({{"event", c.event},
                          {"requested", c.requested},
                          {"size", c.miss.size},
                          {"pool", c.miss.small_pool ? "small" : "large"},
                          {"stream", c.miss.stream},
                          {"device_allocs", c.device_allocs},
                          {"device_alloc_size", c.miss.alloc_size},
                          {"free_bytes", c.miss.free_bytes},
                          {"free_blocks", c.miss.free_blocks},
                          {"free_segments", c.miss.free_segments},
                          {"largest_free", c.miss.largest_free},
                          {"why", cause_kind(c.miss)},
                          {"text", describe_cause(c)}});
      }
      auto sites = nlohmann::ordered_json::array();
      for (const CallSite& s : g.sites) {
        sites.push_back(
            {{"where", s.where}, {"callers", s.callers}, {"count", s.count}, {"bytes", s.bytes}});
      }
      entry["allocations"] = allocs;
      entry["call_sites"] = sites;
    }
    growth.push_back(entry);
  }
  j["growth"] = growth;
  j["frames"] = r.frames;
  j["peak_reserved"] = r.peak_reserved;
  j["recorded_rows"] = r.recorded_rows;
  j["recorded_matches"] = r.recorded_matches;
  j["allocations"] = r.replay.allocs;
  j["allocations_same_placement"] = r.replay.allocs_same;
  auto rows = nlohmann::ordered_json::array();
  for (const Row& row : r.rows) {
    const Sample& s = row.at_end;
    rows.push_back({{"label", row.label},
                    {"reserved", s.reserved},
                    {"allocated", s.allocated},
                    {"segments", s.segments},
                    {"device_allocs", s.device_allocs},
                    {"device_allocs_in", row.device_allocs_in},
                    {"device_frees_in", row.device_frees_in},
                    {"inactive_split_bytes", s.inactive_split_bytes},
                    {"largest_free", s.largest_free},
                    {"free_cached", s.free_cached},
                    {"fragmentation", row.fragmentation},
                    {"peak_allocated", row.peak_allocated},
                    {"retries", s.retries},
                    {"ooms", s.ooms},
                    {"matches_recorded", row.matches_recorded}});
  }
  j["rows"] = rows;
  return j;
}

std::string rows_csv(const StabilityReport& r) {
  std::string out =
      "label,reserved,allocated,segments,device_allocs,device_allocs_in,device_frees_in,"
      "inactive_split_bytes,largest_free,free_cached,fragmentation,retries,ooms,matches_recorded\n";
  for (const Row& row : r.rows) {
    const Sample& s = row.at_end;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{:.4f},{},{},{}\n", row.label, s.reserved,
                       s.allocated, s.segments, s.device_allocs, row.device_allocs_in,
                       row.device_frees_in, s.inactive_split_bytes, s.largest_free, s.free_cached,
                       row.fragmentation, s.retries, s.ooms, row.matches_recorded ? 1 : 0);
  }
  return out;
}

}  // namespace racelab::alloc

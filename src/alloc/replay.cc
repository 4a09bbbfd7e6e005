#include "alloc/replay.h"

#include <fmt/format.h>

#include <algorithm>

#include "alloc/addr_map.h"

namespace racelab::alloc {

namespace {

constexpr std::size_t kMaxMismatches = 5;

// The real trace's new-segment addresses, in order: every segment_alloc, and every segment_map
// outside the address space of a live expandable segment (one is released when its last page is
// unmapped).
std::vector<std::uint64_t> real_segment_bases(const std::vector<TraceEvent>& trace,
                                              const Config& c) {
  struct Range {
    std::uint64_t start, end, mapped;
  };
  const std::uint64_t va = c.device_total + c.device_total / 8;
  std::vector<Range> live;
  std::vector<std::uint64_t> bases;
  auto find = [&](std::uint64_t addr) {
    return std::find_if(live.begin(), live.end(),
                        [&](const Range& r) { return addr >= r.start && addr < r.end; });
  };
  for (const TraceEvent& e : trace) {
    if (e.action == Action::kSegmentAlloc) {
      bases.push_back(e.addr);
    } else if (e.action == Action::kSegmentMap) {
      auto it = find(e.addr);
      if (it == live.end()) {
        bases.push_back(e.addr);
        live.push_back({e.addr, e.addr + va, 0});
        it = std::prev(live.end());
      }
      it->mapped += e.size;
    } else if (e.action == Action::kSegmentUnmap) {
      auto it = find(e.addr);
      if (it != live.end()) {
        it->mapped -= std::min(it->mapped, e.size);
        if (it->mapped == 0) live.erase(it);
      }
    }
  }
  return bases;
}

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

std::string describe_event(const SegmentEvent& e) {
  return fmt::format("{} {} ({})", action_name(e.action), hex(e.addr), format_bytes(e.size));
}

}  // namespace

ReplayResult replay_trace(const std::vector<TraceEvent>& trace, const ReplayOptions& opt) {
  ReplayResult r;
  r.events = trace.size();
  const std::vector<std::uint64_t> bases =
      opt.real_addresses ? real_segment_bases(trace, opt.config) : std::vector<std::uint64_t>{};
  std::size_t next_base = 0;
  CachingAllocator m(opt.config, [&](std::uint64_t) -> std::optional<std::uint64_t> {
    if (next_base >= bases.size()) return std::nullopt;
    return bases[next_base++];
  });

  AddrMap<Block*> live;  // real address -> model block
  std::vector<SegmentEvent> real_segments;
  std::vector<SegmentEvent> model_segments;
  std::size_t model_events_seen = 0;
  std::size_t sample_pos = 0;
  std::uint64_t window_peak_reserved = 0, window_peak_allocated = 0;  // since the last sample

  // Moves the model's new events into model_segments (and the model trace).
  auto drain = [&](std::int64_t time_us, std::int64_t stream) {
    const auto& ev = m.segment_events();
    for (; model_events_seen < ev.size(); ++model_events_seen) {
      const SegmentEvent& s = ev[model_events_seen];
      if (s.action != Action::kOom) model_segments.push_back(s);
      if (opt.keep_trace) r.model_trace.push_back({s.action, s.addr, s.size, stream, time_us});
    }
  };

  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEvent& e = trace[i];
    if (opt.empty_cache_at) {
      if (opt.empty_cache_at->count(i)) {
        m.empty_cache();
        r.empty_cache_at.insert(i);
        drain(e.time_us, e.stream);
      }
    } else if ((e.action == Action::kSegmentFree || e.action == Action::kSegmentUnmap) &&
               model_segments.size() <= real_segments.size()) {
      std::vector<SegmentEvent> run;
      for (std::size_t j = i; j < trace.size() && (trace[j].action == Action::kSegmentFree ||
                                                   trace[j].action == Action::kSegmentUnmap);
           ++j) {
        run.push_back({trace[j].action, trace[j].addr, trace[j].size});
      }
      if (m.predict_empty_cache() == run) {
        m.empty_cache();
        r.empty_cache_at.insert(i);
        drain(e.time_us, e.stream);
      }
    }

    switch (e.action) {
      case Action::kAlloc: {
        ++r.allocs;
        const std::int64_t device_allocs_before = m.stats().num_device_alloc;
        const auto res = m.malloc(e.size, e.stream);
        drain(e.time_us, e.stream);
        if (m.stats().num_device_alloc > device_allocs_before) {
          r.causes.push_back({i, e.size, m.stats().num_device_alloc - device_allocs_before,
                              m.last_miss(), e.stack});
        }
        if (!res.block) {
          if (r.model_ooms++ == 0) r.first_oom_event = i;
          if (r.oom_messages.size() < kMaxMismatches) r.oom_messages.push_back(res.oom_message);
          if (r.alloc_mismatches.size() < kMaxMismatches) {
            r.alloc_mismatches.push_back(
                {i, fmt::format("alloc of {} bytes at {}: out of memory in the model", e.size,
                                hex(e.addr))});
          }
          break;
        }
        live.put(e.addr, res.block);
        if (opt.keep_trace)
          r.model_trace.push_back(
              {Action::kAlloc, res.block->ptr, e.size, e.stream, e.time_us, e.stack});
        if (res.block->ptr == e.addr) {
          ++r.allocs_same;
        } else if (r.alloc_mismatches.size() < kMaxMismatches) {
          r.alloc_mismatches.push_back({i, fmt::format("alloc of {} bytes: real {}, model {}",
                                                       e.size, hex(e.addr), hex(res.block->ptr))});
        }
        break;
      }
      case Action::kFreeRequested: {
        Block** found = live.find(e.addr);
        if (found == nullptr) {
          ++r.unmatched_frees;
          break;
        }
        if ((*found)->allocated) {
          m.free_request(*found);
          if (opt.keep_trace) {
            r.model_trace.push_back(
                {Action::kFreeRequested, (*found)->ptr, e.size, e.stream, e.time_us});
          }
        }
        break;
      }
      case Action::kFreeCompleted: {
        Block** found = live.find(e.addr);
        if (found == nullptr) break;
        Block* b = *found;
        live.erase(e.addr);
        const std::uint64_t ptr = b->ptr;
        m.free_complete(b);
        drain(e.time_us, e.stream);
        if (opt.keep_trace)
          r.model_trace.push_back({Action::kFreeCompleted, ptr, e.size, e.stream, e.time_us});
        break;
      }
      case Action::kSegmentAlloc:
      case Action::kSegmentFree:
      case Action::kSegmentMap:
      case Action::kSegmentUnmap:
        real_segments.push_back({e.action, e.addr, e.size});
        break;
      case Action::kOom:
        ++r.real_ooms;
        break;
      case Action::kSnapshot:
      case Action::kUserDefined:
        break;
    }

    if (!opt.sample_after.empty()) {
      const Stats& st = m.stats();
      window_peak_reserved = std::max(
          window_peak_reserved, static_cast<std::uint64_t>(st.reserved_bytes[kAggregate].current));
      window_peak_allocated =
          std::max(window_peak_allocated,
                   static_cast<std::uint64_t>(st.allocated_bytes[kAggregate].current));
    }
    while (sample_pos < opt.sample_after.size() && opt.sample_after[sample_pos] <= i) {
      const Stats& st = m.stats();
      Sample s;
      s.event = i;
      s.time_us = e.time_us;
      s.reserved = static_cast<std::uint64_t>(st.reserved_bytes[kAggregate].current);
      s.allocated = static_cast<std::uint64_t>(st.allocated_bytes[kAggregate].current);
      s.active = static_cast<std::uint64_t>(st.active_bytes[kAggregate].current);
      s.segments = st.segment[kAggregate].current;
      s.mapped_segments = m.mapped_segment_count();
      s.device_allocs = st.num_device_alloc;
      s.device_frees = st.num_device_free;
      s.inactive_split_bytes =
          static_cast<std::uint64_t>(st.inactive_split_bytes[kAggregate].current);
      s.largest_free = m.largest_free_block();
      s.free_cached = m.free_cached_bytes();
      s.retries = st.num_alloc_retries;
      s.ooms = st.num_ooms;
      s.peak_reserved = static_cast<std::uint64_t>(st.reserved_bytes[kAggregate].peak);
      s.window_peak_reserved = window_peak_reserved;
      s.window_peak_allocated = window_peak_allocated;
      window_peak_reserved = s.reserved;
      window_peak_allocated = s.allocated;
      r.samples.push_back(s);
      ++sample_pos;
    }
    if (opt.segments_after && *opt.segments_after == i) r.segments_at = m.segments(opt.device);
    if (opt.progress && (i % 65536 == 0 || i + 1 == trace.size()))
      opt.progress(i + 1, trace.size());
  }

  r.real_segment_events = real_segments.size();
  r.model_segment_events = model_segments.size();
  const std::size_t n = std::max(real_segments.size(), model_segments.size());
  for (std::size_t k = 0; k < n; ++k) {
    const bool have_real = k < real_segments.size();
    const bool have_model = k < model_segments.size();
    if (have_real && have_model && real_segments[k] == model_segments[k]) {
      ++r.segment_events_same;
    } else if (r.segment_mismatches.size() < kMaxMismatches) {
      r.segment_mismatches.push_back(
          {k, fmt::format("segment event {}: real {}, model {}", k + 1,
                          have_real ? describe_event(real_segments[k]) : "none",
                          have_model ? describe_event(model_segments[k]) : "none")});
    }
  }
  r.stats = m.stats();
  r.peak_reserved = static_cast<std::uint64_t>(r.stats.reserved_bytes[kAggregate].peak);
  r.peak_segments = r.stats.segment[kAggregate].peak;
  r.final_mapped_segments = m.mapped_segment_count();
  r.segments = m.segments(opt.device);
  r.model_events = m.segment_events();
  return r;
}

PickleRef model_snapshot_value(const Snapshot& source, const std::vector<DeviceReplay>& devices) {
  auto root = PickleValue::new_dict();
  auto segments = PickleValue::list();
  std::size_t traces = source.traces.size();
  for (const DeviceReplay& d : devices) {
    traces = std::max(traces, d.device + 1);
    const PickleRef device_segments = segments_value(d.result->segments);
    for (const auto& seg : device_segments->items) segments->items.push_back(seg);
  }
  root->set("segments", segments);
  auto device_traces = PickleValue::list();
  for (std::size_t dev = 0; dev < traces; ++dev)
    device_traces->items.push_back(PickleValue::list());
  for (const DeviceReplay& d : devices) {
    auto& events = *device_traces->items[d.device];
    events.items.reserve(d.result->model_trace.size());
    for (const TraceEvent& e : d.result->model_trace) {
      auto ev = PickleValue::new_dict();
      ev->set("action", PickleValue::str(action_name(e.action)));
      ev->set("addr", PickleValue::integer(static_cast<std::int64_t>(e.addr)));
      ev->set("size", PickleValue::integer(static_cast<std::int64_t>(e.size)));
      ev->set("stream", PickleValue::integer(e.stream));
      ev->set("time_us", PickleValue::integer(e.time_us));
      ev->set("compile_context", PickleValue::str("N/A"));
      ev->set("user_metadata", PickleValue::str(""));
      events.items.push_back(ev);
    }
  }
  root->set("device_traces", device_traces);
  // The source's settings and annotations, shared (the tree is only written from here on).
  PickleRef settings = PickleValue::new_dict();
  PickleRef annotations = PickleValue::list();
  if (source.root) {
    for (const auto& [k, v] : source.root->dict) {
      if (k->is_str() && k->s == "allocator_settings") settings = v;
      if (k->is_str() && k->s == "external_annotations") annotations = v;
    }
  }
  root->set("allocator_settings", settings);
  root->set("external_annotations", annotations);
  return root;
}

}  // namespace racelab::alloc

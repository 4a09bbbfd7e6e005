#include "alloc/snapshot.h"

#include <fmt/format.h>

#include <unordered_map>

#include "alloc/pickle_input.h"
#include "alloc/snapshot_events.h"
#include "util/errors.h"
#include "util/files.h"

namespace racelab::alloc {

namespace {

std::optional<Action> parse_action(const std::string& s) {
  static const std::pair<const char*, Action> kNames[] = {
      {"alloc", Action::kAlloc},
      {"free_requested", Action::kFreeRequested},
      {"free_completed", Action::kFreeCompleted},
      {"segment_alloc", Action::kSegmentAlloc},
      {"segment_free", Action::kSegmentFree},
      {"segment_map", Action::kSegmentMap},
      {"segment_unmap", Action::kSegmentUnmap},
      {"oom", Action::kOom},
      {"snapshot", Action::kSnapshot},
      {"user_defined", Action::kUserDefined},
  };
  for (const auto& [n, a] : kNames) {
    if (s == n) return a;
  }
  return std::nullopt;
}

// Where an event is, spelt out only for a message.
struct Where {
  const std::string& origin;
  std::size_t dev, k;
  std::string str() const { return fmt::format("{}: device_traces[{}][{}]", origin, dev, k); }
};

std::int64_t int_field(const PickleValue& d, const char* key, const std::string& where,
                       bool required = true) {
  const PickleValue* v = d.get(key);
  if (!v) {
    if (!required) return 0;
    throw InputError(fmt::format("{}: missing key '{}'", where, key));
  }
  if (v->type != PickleType::kInt) {
    throw InputError(
        fmt::format("{}: '{}' must be an int, got {}", where, key, type_name(v->type)));
  }
  return v->i;
}

std::string str_field(const PickleValue& d, const char* key, const std::string& where,
                      bool required = true) {
  const PickleValue* v = d.get(key);
  if (!v) {
    if (!required) return {};
    throw InputError(fmt::format("{}: missing key '{}'", where, key));
  }
  if (v->type != PickleType::kStr) {
    throw InputError(fmt::format("{}: '{}' must be a str, got {}", where, key, type_name(v->type)));
  }
  return v->s;
}

// An event's int field: as int_field, the message built only when it is needed.
std::int64_t event_int(const PickleValue& d, const char* key, const Where& where, bool required) {
  const PickleValue* v = d.get(key);
  if (v && v->type == PickleType::kInt) return v->i;
  if (!v && !required) return 0;
  return int_field(d, key, where.str(), required);
}

}  // namespace

bool EventReader::add(const PickleValue& e, std::size_t dev, std::size_t k,
                      std::vector<TraceEvent>& out) {
  const Where where{origin_, dev, k};
  if (!e.is_dict()) {
    throw InputError(fmt::format("{}: expected a dict, got {}", where.str(), type_name(e.type)));
  }
  const PickleValue* act = e.get("action");
  if (!act || !act->is_str()) str_field(e, "action", where.str());  // throws
  const auto action = parse_action(act->s);
  if (!action) return false;
  TraceEvent ev;
  ev.action = *action;
  const bool needs_addr = *action != Action::kSnapshot && *action != Action::kUserDefined;
  const std::int64_t addr = event_int(e, "addr", where, needs_addr);
  const std::int64_t size = event_int(e, "size", where, needs_addr);
  if (addr < 0 || size < 0) {
    throw InputError(fmt::format("{}: 'addr' and 'size' must not be negative", where.str()));
  }
  ev.addr = static_cast<std::uint64_t>(addr);
  ev.size = static_cast<std::uint64_t>(size);
  ev.stream = event_int(e, "stream", where, false);
  ev.time_us = event_int(e, "time_us", where, false);
  if (*action == Action::kAlloc) {
    if (const PickleValue* frames = e.get("frames")) ev.stack = intern(*frames);
  }
  out.push_back(ev);
  return true;
}

// Frames are read leniently: a frame without a usable filename, line or name keeps what it has
// (memory_viz itself shows '??' for them).
std::int32_t EventReader::intern(const PickleValue& frames) {
  if (!frames.is_list() || frames.items.empty()) return -1;
  Stack stack;
  stack.reserve(frames.items.size());
  std::string key;
  for (const PickleRef& f : frames.items) {
    if (!f || !f->is_dict()) continue;
    Frame fr;
    if (const PickleValue* v = f->get("filename"); v && v->is_str()) fr.filename = v->s;
    if (const PickleValue* v = f->get("line"); v && v->is_int()) fr.line = v->i;
    if (const PickleValue* v = f->get("name"); v && v->is_str()) fr.name = v->s;
    key += fr.filename;
    key += '\0';
    key += std::to_string(fr.line);
    key += '\0';
    key += fr.name;
    key += '\n';
    stack.push_back(std::move(fr));
  }
  if (stack.empty()) return -1;
  auto [it, added] = index_.try_emplace(std::move(key), static_cast<std::int32_t>(stacks_.size()));
  if (added) stacks_.push_back(std::move(stack));
  return it->second;
}

Snapshot assemble_snapshot(PickleRef root, EventReader& events, StreamedLists& streamed) {
  const std::string& origin = events.origin();
  Snapshot snap;
  if (!root || !root->is_dict()) {
    throw InputError(
        fmt::format("{}: expected a memory snapshot (a dict with 'segments' and "
                    "'device_traces'), got {}",
                    origin, root ? type_name(root->type) : "nothing"));
  }
  const PickleValue* traces = root->get("device_traces");
  if (!traces || !traces->is_list()) {
    throw InputError(
        fmt::format("{}: no 'device_traces' list: record the snapshot with "
                    "torch.cuda.memory._record_memory_history() enabled before the allocations",
                    origin));
  }
  const PickleValue* segments = root->get("segments");
  if (segments && segments->is_list()) snap.segment_count = segments->items.size();
  std::unordered_map<const PickleValue*, std::size_t> streamed_at;  // a streamed list's device
  for (std::size_t dev = 0; dev < traces->items.size(); ++dev) {
    const PickleValue& t = *traces->items[dev];
    if (!t.is_list()) {
      throw InputError(fmt::format("{}: device_traces[{}] must be a list, got {}", origin, dev,
                                   type_name(t.type)));
    }
    auto& out = snap.traces.emplace_back();
    if (auto it = streamed.find(&t); it != streamed.end()) {
      // Moved, not copied (a copy would hold the trace twice); a list listed again is copied.
      auto [first, fresh] = streamed_at.try_emplace(&t, dev);
      out = fresh ? std::move(it->second.events) : snap.traces[first->second];
      snap.ignored_events += it->second.ignored;
      continue;
    }
    out.reserve(t.items.size());
    for (std::size_t k = 0; k < t.items.size(); ++k) {
      if (!events.add(*t.items[k], dev, k, out)) ++snap.ignored_events;
    }
  }
  // Stacks numbered in order of first use, as reading the devices in order numbers them.
  std::vector<Stack> interned = events.take_stacks();
  std::vector<std::int32_t> renumbered(interned.size(), -1);
  for (auto& trace : snap.traces) {
    for (TraceEvent& e : trace) {
      if (e.stack < 0) continue;
      std::int32_t& n = renumbered[static_cast<std::size_t>(e.stack)];
      if (n < 0) {
        n = static_cast<std::int32_t>(snap.stacks.size());
        snap.stacks.push_back(std::move(interned[static_cast<std::size_t>(e.stack)]));
      }
      e.stack = n;
    }
  }
  if (const PickleValue* ann = root->get("external_annotations"); ann && ann->is_list()) {
    for (std::size_t k = 0; k < ann->items.size(); ++k) {
      const PickleValue& a = *ann->items[k];
      if (!a.is_dict()) continue;
      const std::string where = fmt::format("{}: external_annotations[{}]", origin, k);
      Annotation an;
      an.stage = str_field(a, "stage", where, false);
      an.name = str_field(a, "name", where, false);
      an.device = int_field(a, "device", where, false);
      an.time_us = int_field(a, "time_us", where, false);
      snap.annotations.push_back(std::move(an));
    }
  }
  snap.root = std::move(root);
  return snap;
}

Snapshot snapshot_from_value(PickleRef root, const std::string& origin) {
  EventReader events(origin);
  StreamedLists none;
  return assemble_snapshot(std::move(root), events, none);
}

namespace {

// Whether the file is JSON: its first byte that is not white space is '{'.
bool is_json(const std::filesystem::path& path, const std::string& origin) {
  PickleInput in(path, origin);
  while (in.remaining() > 0) {
    const char c = static_cast<char>(in.byte());
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return c == '{';
  }
  return false;
}

Snapshot read_tree(const std::filesystem::path& path, const std::string& origin) {
  return snapshot_from_value(read_pickle(read_file(path), origin), origin);
}

}  // namespace

Snapshot read_snapshot(const std::filesystem::path& path, SnapshotReader reader) {
  const std::string origin = path.string();
  if (is_json(path, origin)) {
    const std::string data = read_file(path);
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(data);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}: byte {}: invalid JSON: {}", origin, e.byte, e.what()));
    }
    return snapshot_from_value(from_json(j, origin), origin);
  }
  if (reader == SnapshotReader::kTree) return read_tree(path, origin);
  try {
    return stream_snapshot(path, origin);
  } catch (const NotStreamable&) {
    return read_tree(path, origin);
  }
}

PickleRef segments_value(const std::vector<Segment>& segments) {
  auto integer = [](std::uint64_t v) { return PickleValue::integer(static_cast<std::int64_t>(v)); };
  auto out = PickleValue::list();
  for (const Segment& s : segments) {
    auto blocks = PickleValue::list();
    for (const SegmentBlock& b : s.blocks) {
      auto blk = PickleValue::new_dict();
      blk->set("address", integer(b.address));
      blk->set("size", integer(b.size));
      blk->set("requested_size", integer(b.requested_size));
      blk->set("state", PickleValue::str(block_state_name(b.state)));
      blk->set("frames", PickleValue::list());
      blocks->items.push_back(blk);
    }
    auto seg = PickleValue::new_dict();
    seg->set("device", PickleValue::integer(s.device));
    seg->set("address", integer(s.address));
    seg->set("total_size", integer(s.total_size));
    seg->set("allocated_size", integer(s.allocated_size));
    seg->set("active_size", integer(s.active_size));
    seg->set("requested_size", integer(s.requested_size));
    seg->set("stream", PickleValue::integer(s.stream));
    seg->set("segment_type", PickleValue::str(s.segment_type()));
    seg->set("segment_pool_id",
             PickleValue::tuple({PickleValue::integer(0), PickleValue::integer(0)}));
    seg->set("is_expandable", PickleValue::boolean(s.is_expandable));
    seg->set("frames", PickleValue::list());
    seg->set("blocks", blocks);
    out->items.push_back(seg);
  }
  return out;
}

void write_snapshot_value(const std::filesystem::path& path, const PickleValue& root) {
  if (path.extension() == ".json") {
    write_file_atomic(path, to_json(root, path.string()).dump(1) + "\n");
  } else {
    write_file_atomic(path, write_pickle(root));
  }
}

}  // namespace racelab::alloc

// The streaming snapshot reader: a memory_viz pickle read by chunks, each trace event turned into a
// TraceEvent as soon as it is appended to its device's list, its containers then dropped (unless a
// later memo read needs them: pickle_memo.h). What stays in memory is the typed trace and the
// rest of the snapshot (segments, settings, annotations), not the file nor the events' values.
//
// Where the device lists are is recognised from the stack as CPython writes a snapshot: the first
// container is the root dict; the list pushed as the value of its key 'device_traces' is the
// device list of lists; a list pushed as an item of that is a device's trace. Each of these is a
// guess made when the container is created, confirmed at STOP: a streamed device list must be
// found, in the finished value, only as an item of root['device_traces']. A file where a guess
// fails, or that changes an event after it was appended, is valid pickle that this reader cannot
// stream: it throws NotStreamable, and read_snapshot() reads that file whole.
#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <unordered_set>

#include "alloc/pickle_input.h"
#include "alloc/pickle_machine.h"
#include "alloc/pickle_memo.h"
#include "alloc/snapshot_events.h"

namespace racelab::alloc {

namespace {

// Containers above a trace event: the root, device_traces and the device's list.
constexpr int kEventDepth = 3;

class SnapshotStream : public PickleMachine {
 public:
  SnapshotStream(PickleInput& in, const std::string& origin, const MemoLiveness& live,
                 EventReader& events)
      : PickleMachine(in, origin, &live),
        events_(events),
        // An alloc event takes some 16 bytes of file at the least ('}', its keys as memo reads,
        // addr and size, SETITEMS): a file of other dicts does not reserve beyond that; smaller
        // events (snapshot, user_defined) only make the vector grow.
        dicts_(std::min<std::uint64_t>(live.dicts, in.size() / 16)) {}

  StreamedLists& lists() { return lists_; }

 protected:
  void created(const PickleRef& c) override {
    const auto& st = stack();
    const auto& mk = marks();
    const std::size_t i = st.size();  // where c goes
    if (!root_) {
      if (i == 0 && mk.empty() && c->is_dict()) root_ = c;
      return;
    }
    // Only empty lists: one made whole by MARK ... LIST keeps its items as values.
    if (c->type != PickleType::kList || !c->items.empty()) return;
    if (!device_traces_) {
      // root's value for the key 'device_traces': a value slot of root's items (SETITEMS after a
      // MARK at 1, or one SETITEM), just after that key.
      if (i >= 2 && i % 2 == 0 && st[0] == root_ && st[i - 1]->is_str() &&
          st[i - 1]->s == "device_traces" && (mk.empty() || (mk.size() == 1 && mk[0] == 1))) {
        device_traces_ = c;
        device_traces_at_ = i;
      }
      return;
    }
    const std::size_t d = device_traces_at_;
    if (i <= d || st[d] != device_traces_) return;
    const bool batched = !mk.empty() && mk.back() == d + 1;
    const bool single = i == d + 1 && (mk.empty() || mk.back() <= d);
    if (!batched && !single) return;
    StreamedList& l = lists_[c.get()];
    if (reserved_ < 16 * dicts_) {  // address space only: pages are resident once written
      try {
        l.events.reserve(dicts_);
        reserved_ += dicts_;
      } catch (const std::bad_alloc&) {  // more than the address space allows: grow instead
      }
    }
    kept_.push_back(c);  // keeps its address from being reused by another container
    device_.emplace(c.get(), device_traces_->items.size() + (i - (d + 1)));
  }

  void append(PickleValue& list, std::vector<PickleRef>& items, std::uint64_t at) override {
    auto it = lists_.find(&list);
    if (it == lists_.end()) {
      PickleMachine::append(list, items, at);
      return;
    }
    StreamedList& l = it->second;
    const std::size_t dev = device_.at(&list);
    for (PickleRef& item : items) {
      if (item->is_list() || item->is_dict()) freeze(*item, at);
      if (!events_.add(*item, dev, l.items, l.events)) ++l.ignored;
      ++l.items;
      item.reset();  // the event's values go now, unless the memo still needs them
    }
  }

  void changing(const PickleValue& c, std::uint64_t at) override {
    if (c.frozen) {
      throw NotStreamable(fmt::format(
          "byte {}: a trace event's container is changed after the event was read", at));
    }
  }

  void finished(const PickleRef& root, std::uint64_t at) override {
    check_structure(root, at);
    // Every streamed device list reachable from the root must be an item of
    // root['device_traces']: anywhere else its events would be missing.
    const PickleValue* chosen = root->is_dict() ? root->get("device_traces") : nullptr;
    std::vector<const PickleValue*> todo{root.get()};
    std::unordered_set<const PickleValue*> seen{root.get()};
    auto visit = [&](const PickleValue* parent, const PickleValue* c) {
      if (!(c->is_list() || c->is_dict())) return;
      if (lists_.count(c) && parent != chosen) {
        throw NotStreamable("a device's trace list is found outside 'device_traces'");
      }
      if (seen.insert(c).second) todo.push_back(c);
    };
    while (!todo.empty()) {
      const PickleValue* c = todo.back();
      todo.pop_back();
      for (const auto& item : c->items) visit(c, item.get());
      for (const auto& [k, v] : c->dict) {
        visit(c, k.get());
        visit(c, v.get());
      }
    }
  }

 private:
  // Checks an event's containers as check_structure() would at its place in the tree (no
  // cycle, nesting within kMaxPickleDepth), and freezes them. Containers frozen before (shared
  // frames) are not walked again: their height is known.
  void freeze(PickleValue& event, std::uint64_t at) {
    struct Step {
      PickleValue* c;
      std::size_t next;
    };
    auto child = [](PickleValue* o, std::size_t k) -> PickleValue* {
      if (o->is_dict())
        return k % 2 == 0 ? o->dict[k / 2].first.get() : o->dict[k / 2].second.get();
      return o->items[k].get();
    };
    auto count = [](const PickleValue* o) {
      return o->is_dict() ? o->dict.size() * 2 : o->items.size();
    };
    auto guessed = [&](const PickleValue* c) {
      return c == root_.get() || c == device_traces_.get() || lists_.count(c) > 0;
    };
    if (event.frozen) return;
    if (guessed(&event)) throw NotStreamable("a trace event is the snapshot or a device list");
    std::vector<Step> path{{&event, 0}};
    event.height = -1;  // on the path
    while (!path.empty()) {
      Step& s = path.back();
      if (s.next == count(s.c)) {
        std::int16_t h = 1;
        for (std::size_t k = 0; k < count(s.c); ++k) {
          const PickleValue* ch = child(s.c, k);
          if (ch->is_list() || ch->is_dict()) h = std::max<std::int16_t>(h, ch->height + 1);
        }
        s.c->height = h;
        s.c->frozen = true;
        path.pop_back();
        continue;
      }
      PickleValue* ch = child(s.c, s.next++);
      if (!(ch->is_list() || ch->is_dict()) || ch->frozen) continue;
      if (ch->height == -1) fail(at, "an acyclic structure", "a container that contains itself");
      if (guessed(ch)) throw NotStreamable("a trace event contains the snapshot or a device list");
      if (static_cast<int>(path.size()) + kEventDepth >= kMaxPickleDepth) {
        fail(at, fmt::format("nesting at most {} deep", kMaxPickleDepth), "deeper nesting");
      }
      ch->height = -1;
      path.push_back({ch, 0});
    }
    if (event.height + kEventDepth > kMaxPickleDepth) {
      fail(at, fmt::format("nesting at most {} deep", kMaxPickleDepth), "deeper nesting");
    }
  }

  EventReader& events_;
  PickleRef root_, device_traces_;
  std::size_t device_traces_at_ = 0;
  StreamedLists lists_;
  std::uint64_t dicts_;                                         // MemoLiveness::dicts
  std::uint64_t reserved_ = 0;                                  // events reserved so far
  std::unordered_map<const PickleValue*, std::size_t> device_;  // a streamed list's device
  std::vector<PickleRef> kept_;
};

}  // namespace

Snapshot stream_snapshot(const std::filesystem::path& path, const std::string& origin) {
  MemoLiveness live;
  {
    PickleInput in(path, origin);
    live = scan_memo(in);
  }
  PickleInput in(path, origin);
  EventReader events(origin);
  SnapshotStream machine(in, origin, live, events);
  PickleRef root = machine.run();
  return assemble_snapshot(std::move(root), events, machine.lists());
}

}  // namespace racelab::alloc

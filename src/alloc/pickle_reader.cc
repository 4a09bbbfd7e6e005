// The pickle stack machine (pickle_machine.h) and read_pickle().
#include <fmt/format.h>

#include <bit>
#include <unordered_map>
#include <unordered_set>

#include "alloc/pickle.h"
#include "alloc/pickle_machine.h"
#include "util/errors.h"

namespace racelab::alloc {

PickleMachine::PickleMachine(PickleInput& in, const std::string& origin, const MemoLiveness* live)
    : in_(in), origin_(origin), live_(live) {}

PickleMachine::~PickleMachine() {
  if (stopped_) return;  // the structure was checked: ordinary destruction is safe
  // A read that failed may leave containers that contain themselves: break every cycle that can
  // still be reached, so that nothing leaks. (Without a MemoLiveness the memo holds every
  // container that a cycle can pass through: a container can only contain itself by a memo read.)
  std::vector<PickleValue*> todo;
  std::unordered_set<PickleValue*> seen;
  auto visit = [&](const PickleRef& p) {
    if (p && (p->is_list() || p->is_dict()) && seen.insert(p.get()).second) todo.push_back(p.get());
  };
  for (const auto& p : stack_) visit(p);
  for (const auto& [k, p] : memo_) visit(p);
  std::vector<PickleRef> keep;  // alive until every cycle is broken
  while (!todo.empty()) {
    PickleValue* c = todo.back();
    todo.pop_back();
    for (auto& item : c->items) visit(item);
    for (auto& [k, v] : c->dict) {
      visit(k);
      visit(v);
    }
    for (auto& item : c->items) keep.push_back(std::move(item));
    for (auto& [k, v] : c->dict) {
      keep.push_back(std::move(k));
      keep.push_back(std::move(v));
    }
    c->items.clear();
    c->dict.clear();
  }
}

PickleRef PickleMachine::run() {
  if (in_.size() == 0) fail(0, "a pickle (opcode PROTO)", "an empty file");
  for (;;) {
    const std::uint64_t at = in_.pos();
    const std::uint8_t op = u8("an opcode");
    switch (op) {
      case 0x80: {  // PROTO
        const std::uint8_t v = u8("a protocol number");
        if (v < 2 || v > 5) fail(at + 1, "protocol 2 to 5", fmt::format("protocol {}", v));
        break;
      }
      case 0x95: {  // FRAME: an 8-byte length; frames are not needed to read the stream
        const std::uint64_t n = le(8, "a frame length");
        if (n > in_.remaining()) too_long(at + 1, n);
        break;
      }
      case '.': {  // STOP
        if (stack_.size() != 1 || !marks_.empty()) {
          fail(at, "exactly one value on the stack at STOP",
               fmt::format("{} values and {} marks", stack_.size(), marks_.size()));
        }
        PickleRef root = stack_.back();
        finished(root, at);
        stopped_ = true;
        return root;
      }
      case '(':
        marks_.push_back(stack_.size());
        break;
      case '}':
        push(container(PickleValue::new_dict()));
        break;
      case ']':
        push(container(PickleValue::list()));
        break;
      case ')':
        push(container(PickleValue::tuple()));
        break;
      case 'd': {  // DICT from mark
        auto items = pop_mark(at);
        if (items.size() % 2) fail(at, "key/value pairs after MARK", "an odd count");
        auto dct = PickleValue::new_dict();
        for (std::size_t k = 0; k < items.size(); k += 2)
          add_item(*dct, items[k], items[k + 1], at);
        push(container(dct));
        break;
      }
      case 'l': {
        auto lst = PickleValue::list();
        lst->items = pop_mark(at);
        push(container(lst));
        break;
      }
      case 't': {
        auto tup = PickleValue::tuple();
        tup->items = pop_mark(at);
        push(container(tup));
        break;
      }
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        const std::size_t n = op - 0x84;
        need_stack(at, n);
        auto tup = PickleValue::tuple();
        tup->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        push(container(tup));
        break;
      }
      case 's': {  // SETITEM
        need_stack(at, 3);
        PickleRef v = pop();
        PickleRef k = pop();
        add_item(*target(PickleType::kDict, at, "SETITEM"), k, v, at);
        break;
      }
      case 'u': {  // SETITEMS
        auto items = pop_mark(at);
        if (items.size() % 2) fail(at, "key/value pairs after MARK", "an odd count");
        need_stack(at, 1);
        PickleValue* dct = target(PickleType::kDict, at, "SETITEMS");
        for (std::size_t k = 0; k < items.size(); k += 2)
          add_item(*dct, items[k], items[k + 1], at);
        break;
      }
      case 'a': {  // APPEND
        need_stack(at, 2);
        std::vector<PickleRef> one{pop()};
        append(*target(PickleType::kList, at, "APPEND"), one, at);
        break;
      }
      case 'e': {  // APPENDS
        auto items = pop_mark(at);
        need_stack(at, 1);
        append(*target(PickleType::kList, at, "APPENDS"), items, at);
        break;
      }
      case 'J':
        push(PickleValue::integer(static_cast<std::int32_t>(le(4, "a 4-byte int"))));
        break;
      case 'K':
        push(PickleValue::integer(u8("a 1-byte int")));
        break;
      case 'M':
        push(PickleValue::integer(static_cast<std::int64_t>(le(2, "a 2-byte int"))));
        break;
      case 0x8a:
        push(PickleValue::integer(long_int(at, u8("a LONG1 length"))));
        break;
      case 0x8b:
        push(PickleValue::integer(long_int(at, le(4, "a LONG4 length"))));
        break;
      case 'G': {
        const std::uint64_t bits = be8("an 8-byte float");
        push(PickleValue::real(std::bit_cast<double>(bits)));
        break;
      }
      case 'N':
        push(PickleValue::none());
        break;
      case 0x88:
        push(PickleValue::boolean(true));
        break;
      case 0x89:
        push(PickleValue::boolean(false));
        break;
      case 0x8c:
        push(PickleValue::str(bytes(at, u8("a string length"))));
        break;
      case 'X':
        push(PickleValue::str(bytes(at, le(4, "a string length"))));
        break;
      case 0x8d:
        push(PickleValue::str(bytes(at, le(8, "a string length"))));
        break;
      case 'U':
        push(PickleValue::str(bytes(at, u8("a string length"))));
        break;
      case 'T':
        push(PickleValue::str(bytes(at, le(4, "a string length"))));
        break;
      case 'C':
        push(PickleValue::bytes(bytes(at, u8("a bytes length"))));
        break;
      case 'B':
        push(PickleValue::bytes(bytes(at, le(4, "a bytes length"))));
        break;
      case 0x8e:
        push(PickleValue::bytes(bytes(at, le(8, "a bytes length"))));
        break;
      case 0x96:  // BYTEARRAY8 (protocol 5): read as bytes, which is how racelab keeps them
        push(PickleValue::bytes(bytes(at, le(8, "a bytearray length"))));
        break;
      case 0x97:  // NEXT_BUFFER, READONLY_BUFFER (protocol 5): out-of-band data, not in a file
      case 0x98:
        fail(at, "a pickle whose data is in the file",
             "an out-of-band buffer (protocol 5 NEXT_BUFFER/READONLY_BUFFER: the data was passed "
             "beside the pickle, with buffer_callback)");
      case 0x94:  // MEMOIZE
        need_stack(at, 1);
        memo_put(keys_.next());
        break;
      case 'q':
        need_stack(at, 1);
        memo_put(u8("a memo index"));
        break;
      case 'r':
        need_stack(at, 1);
        memo_put(le(4, "a memo index"));
        break;
      case 'h':
        push(memo_get(at, u8("a memo index")));
        break;
      case 'j':
        push(memo_get(at, le(4, "a memo index")));
        break;
      case '0':
        need_stack(at, 1);
        pop();
        break;
      case '1':
        pop_mark(at);
        break;
      case '2':
        need_stack(at, 1);
        push(stack_.back());
        break;
      default:
        fail(at,
             "an opcode of a plain-data pickle (dict, list, tuple, str, int, float, bool, None)",
             fmt::format("opcode 0x{:02x}{}", op,
                         op >= 0x20 && op < 0x7f ? fmt::format(" '{}'", char(op)) : ""));
    }
  }
}

void PickleMachine::fail(std::uint64_t at, std::string_view expected, std::string_view got) const {
  throw InputError(fmt::format("{}: byte {}: expected {}, got {}", origin_, at, expected, got));
}

void PickleMachine::too_long(std::uint64_t at, std::uint64_t n) const {
  fail(at, fmt::format("at most {} bytes (the rest of the file)", in_.remaining()),
       fmt::format("a length of {}", n));
}

std::uint8_t PickleMachine::u8(std::string_view what) {
  if (in_.remaining() == 0) fail(in_.pos(), what, "the end of the file");
  return in_.byte();
}

std::uint64_t PickleMachine::le(int n, std::string_view what) {
  if (in_.remaining() < static_cast<std::uint64_t>(n)) fail(in_.pos(), what, "the end of the file");
  std::uint64_t v = 0;
  for (int k = 0; k < n; ++k) v |= std::uint64_t(in_.byte()) << (8 * k);
  return v;
}

std::uint64_t PickleMachine::be8(std::string_view what) {
  if (in_.remaining() < 8) fail(in_.pos(), what, "the end of the file");
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v = (v << 8) | in_.byte();
  return v;
}

std::string PickleMachine::bytes(std::uint64_t at, std::uint64_t n) {
  if (n > in_.remaining()) too_long(at + 1, n);
  std::string s;
  in_.take(n, s);
  return s;
}

std::int64_t PickleMachine::long_int(std::uint64_t at, std::uint64_t n) {
  if (n > in_.remaining()) too_long(at + 1, n);
  if (n > 8) fail(at, "an integer of at most 8 bytes", fmt::format("{} bytes", n));
  if (n == 0) return 0;
  std::uint64_t v = 0;
  for (std::uint64_t k = 0; k < n; ++k) v |= std::uint64_t(in_.byte()) << (8 * k);
  if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t(0) << (8 * n);  // sign-extend
  return static_cast<std::int64_t>(v);
}

PickleRef PickleMachine::container(PickleRef p) {
  created(p);
  return p;
}

PickleRef PickleMachine::pop() {
  PickleRef p = std::move(stack_.back());
  stack_.pop_back();
  return p;
}

void PickleMachine::need_stack(std::uint64_t at, std::size_t n) {
  const std::size_t base = marks_.empty() ? 0 : marks_.back();
  if (stack_.size() < base + n) {
    fail(at, fmt::format("{} value(s) on the stack", n), fmt::format("{}", stack_.size() - base));
  }
}

std::vector<PickleRef> PickleMachine::pop_mark(std::uint64_t at) {
  if (marks_.empty()) fail(at, "a MARK before this opcode", "none");
  const std::size_t m = marks_.back();
  marks_.pop_back();
  std::vector<PickleRef> items(
      std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
      std::make_move_iterator(stack_.end()));
  stack_.resize(m);
  return items;
}

PickleValue* PickleMachine::target(PickleType t, std::uint64_t at, std::string_view op) {
  PickleValue* p = top();
  if (p->type != t) fail(at, fmt::format("a {} under {}", type_name(t), op), type_name(p->type));
  changing(*p, at);
  return p;
}

void PickleMachine::append(PickleValue& list, std::vector<PickleRef>& items, std::uint64_t) {
  list.items.insert(list.items.end(), std::make_move_iterator(items.begin()),
                    std::make_move_iterator(items.end()));
}

void PickleMachine::add_item(PickleValue& dct, const PickleRef& k, const PickleRef& v,
                             std::uint64_t at) {
  if (k->type == PickleType::kList || k->type == PickleType::kDict) {
    fail(at, "a hashable dict key", type_name(k->type));
  }
  dct.dict.emplace_back(k, v);
}

void PickleMachine::memo_put(std::uint64_t key) {
  keys_.add(key);
  if (!live_ || live_->is_referenced(key)) memo_[key] = stack_.back();
}

PickleRef PickleMachine::memo_get(std::uint64_t at, std::uint64_t key) {
  auto it = memo_.find(key);
  if (it == memo_.end()) fail(at, "a memo index stored earlier", fmt::format("index {}", key));
  PickleRef value = it->second;
  if (live_) {
    const std::uint64_t n = reads_++;
    if (n >= live_->last_read.size()) {
      fail(at, "at most 4294967295 memo reads, all seen by the first pass",
           fmt::format("read {}", n + 1));
    }
    if (live_->last_read[n]) memo_.erase(it);
  }
  return value;
}

void PickleMachine::check_structure(const PickleRef& root, std::uint64_t at, int max_depth) const {
  std::unordered_map<const PickleValue*, int> state;  // 1 on the path, 2 done
  struct Frame {
    const PickleValue* obj;
    std::size_t next;
  };
  std::vector<Frame> path;
  auto child = [](const PickleValue* o, std::size_t k) -> const PickleValue* {
    if (o->type == PickleType::kDict) {
      return k % 2 == 0 ? o->dict[k / 2].first.get() : o->dict[k / 2].second.get();
    }
    return o->items[k].get();
  };
  auto count = [](const PickleValue* o) {
    return o->type == PickleType::kDict ? o->dict.size() * 2 : o->items.size();
  };
  path.push_back({root.get(), 0});
  state[root.get()] = 1;
  while (!path.empty()) {
    Frame& f = path.back();
    if (f.next == count(f.obj)) {
      state[f.obj] = 2;
      path.pop_back();
      continue;
    }
    const PickleValue* c = child(f.obj, f.next++);
    if (c->type != PickleType::kList && c->type != PickleType::kTuple &&
        c->type != PickleType::kDict)
      continue;
    auto [it, fresh] = state.try_emplace(c, 1);
    if (!fresh) {
      if (it->second == 1) fail(at, "an acyclic structure", "a container that contains itself");
      continue;
    }
    if (static_cast<int>(path.size()) >= max_depth) {
      fail(at, fmt::format("nesting at most {} deep", kMaxPickleDepth), "deeper nesting");
    }
    path.push_back({c, 0});
  }
}

PickleRef read_pickle(std::string_view data, const std::string& origin) {
  PickleInput in(data);
  PickleMachine machine(in, origin);
  return machine.run();
}

}  // namespace racelab::alloc

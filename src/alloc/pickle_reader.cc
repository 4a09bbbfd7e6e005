// The pickle reader: a stack machine over the opcodes of a plain-data pickle (what
// torch.cuda.memory._dump_snapshot writes), strict and bounded as pickle.h describes.
#include <fmt/format.h>

#include <bit>
#include <unordered_map>

#include "alloc/pickle.h"
#include "util/errors.h"

namespace racelab::alloc {

namespace {

class Reader {
 public:
  Reader(std::string_view data, const std::string& origin) : d_(data), origin_(origin) {}

  ~Reader() {
    // Break any reference cycles a hostile file built, so that nothing leaks.
    for (auto& c : containers_) {
      c->items.clear();
      c->dict.clear();
    }
  }

  PickleRef run() {
    if (d_.empty()) fail(0, "a pickle (opcode PROTO)", "an empty file");
    for (;;) {
      const std::size_t at = pos_;
      const std::uint8_t op = u8("an opcode");
      switch (op) {
        case 0x80: {  // PROTO
          const std::uint8_t v = u8("a protocol number");
          if (v < 2 || v > 5) fail(at + 1, "protocol 2 to 5", fmt::format("protocol {}", v));
          break;
        }
        case 0x95: {  // FRAME: an 8-byte length; frames are not needed to read the stream
          const std::uint64_t n = le(8, "a frame length");
          if (n > remaining()) too_long(at + 1, n);
          break;
        }
        case '.': {  // STOP
          if (stack_.size() != 1 || !marks_.empty()) {
            fail(at, "exactly one value on the stack at STOP",
                 fmt::format("{} values and {} marks", stack_.size(), marks_.size()));
          }
          PickleRef root = stack_.back();
          check_structure(root, at);
          containers_.clear();  // structure is acyclic: ordinary destruction is safe
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
          auto dct = container(PickleValue::new_dict());
          for (std::size_t k = 0; k < items.size(); k += 2)
            add_item(*dct, items[k], items[k + 1], at);
          push(dct);
          break;
        }
        case 'l': {
          auto lst = container(PickleValue::list());
          lst->items = pop_mark(at);
          push(lst);
          break;
        }
        case 't': {
          auto tup = container(PickleValue::tuple());
          tup->items = pop_mark(at);
          push(tup);
          break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          const std::size_t n = op - 0x84;
          need_stack(at, n);
          auto tup = container(PickleValue::tuple());
          tup->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          push(tup);
          break;
        }
        case 's': {  // SETITEM
          need_stack(at, 3);
          PickleRef v = pop();
          PickleRef k = pop();
          add_item(*expect(top(), PickleType::kDict, at, "SETITEM"), k, v, at);
          break;
        }
        case 'u': {  // SETITEMS
          auto items = pop_mark(at);
          if (items.size() % 2) fail(at, "key/value pairs after MARK", "an odd count");
          need_stack(at, 1);
          PickleValue* dct = expect(top(), PickleType::kDict, at, "SETITEMS");
          for (std::size_t k = 0; k < items.size(); k += 2)
            add_item(*dct, items[k], items[k + 1], at);
          break;
        }
        case 'a': {  // APPEND
          need_stack(at, 2);
          PickleRef v = pop();
          expect(top(), PickleType::kList, at, "APPEND")->items.push_back(std::move(v));
          break;
        }
        case 'e': {  // APPENDS
          auto items = pop_mark(at);
          need_stack(at, 1);
          auto& dst = expect(top(), PickleType::kList, at, "APPENDS")->items;
          dst.insert(dst.end(), items.begin(), items.end());
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
          push(bytes_obj(at, u8("a bytes length")));
          break;
        case 'B':
          push(bytes_obj(at, le(4, "a bytes length")));
          break;
        case 0x8e:
          push(bytes_obj(at, le(8, "a bytes length")));
          break;
        case 0x96:  // BYTEARRAY8 (protocol 5): read as bytes, which is how racelab keeps them
          push(bytes_obj(at, le(8, "a bytearray length")));
          break;
        case 0x97:  // NEXT_BUFFER, READONLY_BUFFER (protocol 5): out-of-band data, not in a file
        case 0x98:
          fail(at, "a pickle whose data is in the file",
               "an out-of-band buffer (protocol 5 NEXT_BUFFER/READONLY_BUFFER: the data was passed "
               "beside the pickle, with buffer_callback)");
        case 0x94:  // MEMOIZE
          need_stack(at, 1);
          memo_[memo_.size()] = stack_.back();
          break;
        case 'q': {
          need_stack(at, 1);
          const std::uint64_t idx = u8("a memo index");
          memo_[idx] = stack_.back();
          break;
        }
        case 'r': {
          need_stack(at, 1);
          const std::uint64_t idx = le(4, "a memo index");
          memo_[idx] = stack_.back();
          break;
        }
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

 private:
  [[noreturn]] void fail(std::size_t at, std::string_view expected, std::string_view got) const {
    throw InputError(fmt::format("{}: byte {}: expected {}, got {}", origin_, at, expected, got));
  }
  [[noreturn]] void too_long(std::size_t at, std::uint64_t n) const {
    fail(at, fmt::format("at most {} bytes (the rest of the file)", remaining()),
         fmt::format("a length of {}", n));
  }
  std::size_t remaining() const { return d_.size() - pos_; }

  std::uint8_t u8(std::string_view what) {
    if (pos_ >= d_.size()) fail(pos_, what, "the end of the file");
    return static_cast<std::uint8_t>(d_[pos_++]);
  }
  std::uint64_t le(int n, std::string_view what) {
    if (remaining() < static_cast<std::size_t>(n)) fail(pos_, what, "the end of the file");
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k)
      v |= std::uint64_t(static_cast<std::uint8_t>(d_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }
  std::uint64_t be8(std::string_view what) {
    if (remaining() < 8) fail(pos_, what, "the end of the file");
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<std::uint8_t>(d_[pos_ + k]);
    pos_ += 8;
    return v;
  }
  std::string bytes(std::size_t at, std::uint64_t n) {
    if (n > remaining()) too_long(at + 1, n);
    std::string s(d_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  PickleRef bytes_obj(std::size_t at, std::uint64_t n) { return PickleValue::bytes(bytes(at, n)); }
  std::int64_t long_int(std::size_t at, std::uint64_t n) {
    if (n > remaining()) too_long(at + 1, n);
    if (n > 8) fail(at, "an integer of at most 8 bytes", fmt::format("{} bytes", n));
    if (n == 0) return 0;
    std::uint64_t v = 0;
    for (std::uint64_t k = 0; k < n; ++k)
      v |= std::uint64_t(static_cast<std::uint8_t>(d_[pos_ + k])) << (8 * k);
    pos_ += n;
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t(0) << (8 * n);  // sign-extend
    return static_cast<std::int64_t>(v);
  }

  // Every container is remembered, so that the destructor can break cycles a hostile file built.
  PickleRef container(PickleRef p) {
    containers_.push_back(p);
    return p;
  }
  void push(PickleRef p) { stack_.push_back(std::move(p)); }
  PickleRef pop() {
    PickleRef p = std::move(stack_.back());
    stack_.pop_back();
    return p;
  }
  PickleValue* top() { return stack_.back().get(); }
  void need_stack(std::size_t at, std::size_t n) {
    const std::size_t base = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < base + n) {
      fail(at, fmt::format("{} value(s) on the stack", n), fmt::format("{}", stack_.size() - base));
    }
  }
  std::vector<PickleRef> pop_mark(std::size_t at) {
    if (marks_.empty()) fail(at, "a MARK before this opcode", "none");
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<PickleRef> items(
        std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(m)),
        std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }
  PickleValue* expect(PickleValue* p, PickleType t, std::size_t at, std::string_view op) {
    if (p->type != t) fail(at, fmt::format("a {} under {}", type_name(t), op), type_name(p->type));
    return p;
  }
  void add_item(PickleValue& dct, const PickleRef& k, const PickleRef& v, std::size_t at) {
    if (k->type == PickleType::kList || k->type == PickleType::kDict) {
      fail(at, "a hashable dict key", type_name(k->type));
    }
    dct.dict.emplace_back(k, v);
  }
  PickleRef memo_get(std::size_t at, std::uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) fail(at, "a memo index stored earlier", fmt::format("index {}", idx));
    return it->second;
  }

  // Rejects self-containing containers and nesting deeper than kMaxPickleDepth (iteratively: a
  // hostile file must not be able to exhaust the C++ stack).
  void check_structure(const PickleRef& root, std::size_t at) const {
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
      if (static_cast<int>(path.size()) >= kMaxPickleDepth) {
        fail(at, fmt::format("nesting at most {} deep", kMaxPickleDepth), "deeper nesting");
      }
      path.push_back({c, 0});
    }
  }

  std::string_view d_;
  const std::string& origin_;
  std::size_t pos_ = 0;
  std::vector<PickleRef> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, PickleRef> memo_;
  std::vector<PickleRef> containers_;
};

}  // namespace

PickleRef read_pickle(std::string_view data, const std::string& origin) {
  Reader r(data, origin);
  return r.run();
}

}  // namespace racelab::alloc

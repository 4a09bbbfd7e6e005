// The pickle writer: protocol 4 with the opcodes, memo and batching CPython's pickler uses, so
// that racelab's snapshots are the bytes PyTorch would have written.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "alloc/pickle.h"
#include "util/errors.h"

namespace racelab::alloc {

namespace {

class Writer {
 public:
  std::string run(const PickleValue& root) {
    out_ += '\x80';
    out_ += '\x04';
    write(root, 0);
    out_ += '.';
    return std::move(out_);
  }

 private:
  void op(std::uint8_t c) { out_ += static_cast<char>(c); }
  void le(std::uint64_t v, int n) {
    for (int k = 0; k < n; ++k) out_ += static_cast<char>((v >> (8 * k)) & 0xff);
  }
  void memoize() {
    op(0x94);
    ++memo_count_;
  }

  void write_str(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) {
      if (it->second < 256) {
        op('h');
        le(it->second, 1);
      } else {
        op('j');
        le(it->second, 4);
      }
      return;
    }
    if (s.size() < 256) {
      op(0x8c);
      le(s.size(), 1);
    } else {
      op('X');
      le(s.size(), 4);
    }
    out_ += s;
    strings_.emplace(s, memo_count_);
    memoize();
  }

  void write_int(std::int64_t v) {
    if (v >= 0 && v < 256) {
      op('K');
      le(static_cast<std::uint64_t>(v), 1);
    } else if (v >= 0 && v < 65536) {
      op('M');
      le(static_cast<std::uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      op('J');
      le(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
    } else {
      // Minimal two's-complement little-endian bytes, as CPython's encode_long.
      int n = 1;
      while (n < 8) {
        const std::int64_t lo = -(std::int64_t(1) << (8 * n - 1));
        const std::int64_t hi = (std::int64_t(1) << (8 * n - 1)) - 1;
        if (v >= lo && v <= hi) break;
        ++n;
      }
      op(0x8a);
      le(static_cast<std::uint64_t>(n), 1);
      le(static_cast<std::uint64_t>(v), n);
    }
  }

  void write(const PickleValue& o, int depth) {
    if (depth > kMaxPickleDepth)
      throw InputError(fmt::format("pickle: nesting deeper than {}", kMaxPickleDepth));
    switch (o.type) {
      case PickleType::kNone:
        op('N');
        break;
      case PickleType::kBool:
        op(o.b ? 0x88 : 0x89);
        break;
      case PickleType::kInt:
        write_int(o.i);
        break;
      case PickleType::kFloat: {
        op('G');
        const auto bits = std::bit_cast<std::uint64_t>(o.f);
        for (int k = 7; k >= 0; --k) out_ += static_cast<char>((bits >> (8 * k)) & 0xff);
        break;
      }
      case PickleType::kStr:
        write_str(o.s);
        break;
      case PickleType::kBytes:
        op('B');
        le(o.s.size(), 4);
        out_ += o.s;
        memoize();
        break;
      case PickleType::kList: {
        op(']');
        memoize();
        batched(o.items.size(), 'a', 'e', [&](std::size_t k) { write(*o.items[k], depth + 1); });
        break;
      }
      case PickleType::kTuple: {
        const std::size_t n = o.items.size();
        if (n == 0) {
          op(')');
          break;
        }
        if (n > 3) op('(');
        for (const auto& it : o.items) write(*it, depth + 1);
        op(n > 3 ? 't' : static_cast<std::uint8_t>(0x84 + n));
        memoize();
        break;
      }
      case PickleType::kDict: {
        op('}');
        memoize();
        batched(o.dict.size(), 's', 'u', [&](std::size_t k) {
          write(*o.dict[k].first, depth + 1);
          write(*o.dict[k].second, depth + 1);
        });
        break;
      }
    }
  }

  // CPython's batching: one item -> the single opcode, otherwise MARK ... BATCH per 1000 items.
  template <class F>
  void batched(std::size_t n, std::uint8_t single, std::uint8_t many, F item) {
    for (std::size_t start = 0; start < n; start += 1000) {
      const std::size_t end = std::min(n, start + 1000);
      if (end - start == 1) {
        item(start);
        op(single);
        continue;
      }
      op('(');
      for (std::size_t k = start; k < end; ++k) item(k);
      op(many);
    }
  }

  std::string out_;
  std::unordered_map<std::string, std::uint32_t> strings_;
  std::uint32_t memo_count_ = 0;
};

}  // namespace

std::string write_pickle(const PickleValue& root) { return Writer().run(root); }

}  // namespace racelab::alloc

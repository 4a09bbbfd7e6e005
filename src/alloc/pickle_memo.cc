// scan_memo: the streaming reader's first pass (pickle_memo.h says why there are two).
#include "alloc/pickle_memo.h"

#include <limits>
#include <utility>

namespace racelab::alloc {

namespace {

// Reads a little-endian argument; false at the end of the input.
bool le(PickleInput& in, int n, std::uint64_t& v) {
  if (in.remaining() < static_cast<std::uint64_t>(n)) return false;
  v = 0;
  for (int k = 0; k < n; ++k) v |= std::uint64_t(in.byte()) << (8 * k);
  return true;
}

bool skip(PickleInput& in, std::uint64_t n) {
  if (n > in.remaining()) return false;
  in.skip(n);
  return true;
}

}  // namespace

MemoLiveness scan_memo(PickleInput& in) {
  MemoLiveness live;
  MemoKeys keys;
  // The read number of each key's latest read so far (reads are numbered from 1; 0: none yet),
  // by key while keys are dense, else in `far`.
  std::vector<std::uint32_t> latest;
  std::unordered_map<std::uint64_t, std::uint64_t> far;
  auto read = [&](std::uint64_t key) {
    const std::uint64_t n = live.last_read.size();
    if (n == std::numeric_limits<std::uint32_t>::max()) return false;  // the second pass says so
    std::uint64_t previous = 0;
    if (key < keys.next() && key < (std::uint64_t{1} << 32)) {
      if (key >= latest.size()) latest.resize(keys.next(), 0);
      previous = latest[key];
      latest[key] = static_cast<std::uint32_t>(n + 1);
      if (key >= live.referenced.size()) live.referenced.resize(keys.next(), false);
      live.referenced[key] = true;
    } else {
      auto [it, fresh] = far.try_emplace(key, n + 1);
      if (!fresh) previous = std::exchange(it->second, n + 1);
      live.referenced_far.insert(key);
    }
    if (previous != 0) live.last_read[previous - 1] = false;
    live.last_read.push_back(true);
    return true;
  };
  std::uint64_t v = 0;
  while (in.remaining() > 0) {
    const std::uint8_t op = in.byte();
    bool ok = true;
    switch (op) {
      case '.':  // STOP
        return live;
      case 0x80:  // PROTO
      case 'K':
        ok = skip(in, 1);
        break;
      case 0x95:  // FRAME: its length only; the opcodes inside are read as usual
        ok = skip(in, 8);
        break;
      case 'J':
        ok = skip(in, 4);
        break;
      case 'M':
        ok = skip(in, 2);
        break;
      case 'G':
        ok = skip(in, 8);
        break;
      case 0x8a:  // LONG1
      case 0x8c:  // SHORT_BINUNICODE
      case 'U':
      case 'C':
        ok = le(in, 1, v) && skip(in, v);
        break;
      case 0x8b:  // LONG4
      case 'X':
      case 'T':
      case 'B':
        ok = le(in, 4, v) && skip(in, v);
        break;
      case 0x8d:  // BINUNICODE8
      case 0x8e:  // BINBYTES8
      case 0x96:  // BYTEARRAY8
        ok = le(in, 8, v) && skip(in, v);
        break;
      case 0x94:  // MEMOIZE
        keys.add(keys.next());
        break;
      case 'q':
        ok = le(in, 1, v);
        if (ok) keys.add(v);
        break;
      case 'r':
        ok = le(in, 4, v);
        if (ok) keys.add(v);
        break;
      case 'h':
        ok = le(in, 1, v) && read(v);
        break;
      case 'j':
        ok = le(in, 4, v) && read(v);
        break;
      case '}':
      case 'd':
        ++live.dicts;
        break;
      case '(':
      case ']':
      case ')':
      case 'l':
      case 't':
      case 0x85:
      case 0x86:
      case 0x87:
      case 's':
      case 'u':
      case 'a':
      case 'e':
      case 'N':
      case 0x88:
      case 0x89:
      case '0':
      case '1':
      case '2':
        break;
      default:  // an opcode the reader refuses: it says so at this byte
        return live;
    }
    if (!ok) return live;
  }
  return live;
}

}  // namespace racelab::alloc

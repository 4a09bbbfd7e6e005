#pragma once
// The pickle memo's keys and, for the streaming reader, their liveness.
//
// A pickler memoises every object it writes (CPython: every str, dict, list and tuple) and writes
// a later occurrence of the same object as a reference (BINGET). An unpickler that keeps the whole
// memo keeps everything it read, which is what bounded memory cannot afford; one that drops an
// entry too early cannot resolve a later reference. What torch's snapshots reference again
// (measured on the H200 traces with frames, tests/data/alloc/train-queue-frames-h200): key and
// action strings, the shared frame dicts, and each allocation's frames list, which that block's
// free_requested and free_completed events reference up to the end of the trace (1.5 MB further
// on in a 1.6 MB file). No rule by kind is safe, so the streaming reader reads the file twice:
// scan_memo() notes which keys are ever read and which read is a key's last, and the second pass
// keeps exactly the entries that some later read needs, each until its last read.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "alloc/pickle_input.h"

namespace racelab::alloc {

// The keys stored so far, as Python's dict counts them: MEMOIZE stores under len(memo), BINPUT
// under its argument, and a key stored twice counts once. Keys below `dense` are all stored (the
// only case CPython writes); others are kept one by one.
class MemoKeys {
 public:
  std::uint64_t next() const { return dense_ + sparse_.size(); }  // MEMOIZE's key
  void add(std::uint64_t key) {
    if (key < dense_) return;
    if (key == dense_) {
      ++dense_;
      while (sparse_.erase(dense_)) ++dense_;
      return;
    }
    sparse_.insert(key);
  }

 private:
  std::uint64_t dense_ = 0;
  std::unordered_set<std::uint64_t> sparse_;
};

// What the first pass learnt: the keys some memo read (BINGET, LONG_BINGET) names, and for the
// n-th read whether it is its key's last.
struct MemoLiveness {
  std::vector<bool> referenced;                      // by key, for keys below referenced.size()
  std::unordered_set<std::uint64_t> referenced_far;  // the others (only hand-made files have any)
  std::vector<bool> last_read;                       // by read number
  // Dicts the stream creates: at least the events of every device, so that a device's events can
  // be reserved at once (memory not touched is not resident) rather than grown by copies, each
  // of which would hold the old and the new array at once.
  std::uint64_t dicts = 0;
  bool is_referenced(std::uint64_t key) const {
    return key < referenced.size() ? bool(referenced[key]) : referenced_far.count(key) > 0;
  }
};

// Scans the opcodes from `in`'s position to STOP without building anything. A malformed stream
// ends the scan quietly: the reading pass reports it, at its byte.
MemoLiveness scan_memo(PickleInput& in);

}  // namespace racelab::alloc

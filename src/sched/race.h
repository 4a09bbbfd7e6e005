#pragma once
// The data-race check both the model's Execution and the live runtime apply to shared variables
// (FastTrack-style: the last write as an epoch, the reads since it one per thread). Two accesses
// race when neither happens before the other and at least one is a write.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace racelab::sched {

struct RaceAccess {
  std::int32_t who = -1;    // thread (or agent) index; -1: none yet
  std::uint32_t epoch = 0;  // that thread's own vector-clock entry at the access
  std::int64_t at = -1;     // step or event number, for the report
};

struct RaceState {
  RaceAccess last_write;
  std::vector<RaceAccess> reads;  // the last read of each thread since the last write
};

// Records an access by `who` at `at`. `seen(x)` is who's vector-clock entry for thread x;
// `race(previous, previous_was_write)` is called for the first earlier access it races with
// (the last write, else one read for a write).
template <class Seen, class Race>
void record_access(RaceState& v, std::int32_t who, std::int64_t at, bool write, Seen seen,
                   Race race) {
  auto racy = [&](const RaceAccess& a) {
    return a.who >= 0 && a.who != who && seen(a.who) < a.epoch;
  };
  if (racy(v.last_write)) race(v.last_write, true);
  const RaceAccess now{who, seen(who), at};
  if (write) {
    auto r = std::find_if(v.reads.begin(), v.reads.end(), racy);
    if (r != v.reads.end()) race(*r, false);
    v.reads.clear();
    v.last_write = now;
    return;
  }
  auto it = std::find_if(v.reads.begin(), v.reads.end(),
                         [&](const RaceAccess& a) { return a.who == who; });
  if (it != v.reads.end()) {
    *it = now;
  } else {
    v.reads.push_back(now);
  }
}

}  // namespace racelab::sched

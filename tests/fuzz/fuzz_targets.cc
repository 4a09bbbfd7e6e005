#include "fuzz_targets.h"

#include <stdexcept>
#include <string>
#include <string_view>

#include "alloc/pickle.h"
#include "alloc/replay.h"
#include "alloc/snapshot.h"
#include "model/scenario.h"
#include "report/schedule_file.h"
#include "sched/schedule.h"
#include "util/errors.h"

namespace racelab::fuzz {

namespace {

std::string_view view(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace

void pickle(const std::uint8_t* data, std::size_t size) {
  try {
    alloc::PickleRef v = alloc::read_pickle(view(data, size), "fuzz.pickle");
    // What racelab writes it reads back identically.
    const std::string again = alloc::write_pickle(*v);
    if (alloc::write_pickle(*alloc::read_pickle(again, "again")) != again) {
      throw std::logic_error("pickle round trip changed the value");
    }
    alloc::Snapshot s = alloc::snapshot_from_value(v, "fuzz.pickle");
    // Replay a short trace too: the model must survive any sequence of events.
    for (const auto& trace : s.traces) {
      if (trace.size() > 2000) continue;
      alloc::ReplayOptions o;
      o.config.device_total = 1ULL << 32;
      o.config.device_other = 0;
      alloc::replay_trace(trace, o);
    }
  } catch (const InputError&) {
  }
}

void scenario(const std::uint8_t* data, std::size_t size) {
  try {
    model::parse_scenario(view(data, size), "fuzz.toml");
  } catch (const InputError&) {
  }
}

void schedule(const std::uint8_t* data, std::size_t size) {
  try {
    const sched::Schedule s = report::parse_schedule(view(data, size), "fuzz.json");
    if (report::parse_schedule(report::schedule_to_json(s), "again").steps.size() !=
        s.steps.size()) {
      throw std::logic_error("schedule round trip changed the steps");
    }
  } catch (const InputError&) {
  }
}

}  // namespace racelab::fuzz

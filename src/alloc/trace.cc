// PyTorch's names for trace actions (reading them is snapshot.cc's parse_action).
#include "alloc/trace.h"

namespace racelab::alloc {

const char* action_name(Action a) {
  switch (a) {
    case Action::kAlloc:
      return "alloc";
    case Action::kFreeRequested:
      return "free_requested";
    case Action::kFreeCompleted:
      return "free_completed";
    case Action::kSegmentAlloc:
      return "segment_alloc";
    case Action::kSegmentFree:
      return "segment_free";
    case Action::kSegmentMap:
      return "segment_map";
    case Action::kSegmentUnmap:
      return "segment_unmap";
    case Action::kOom:
      return "oom";
    case Action::kSnapshot:
      return "snapshot";
    case Action::kUserDefined:
      return "user_defined";
  }
  return "?";
}

}  // namespace racelab::alloc

#include "nicsim/core/observer.h"

namespace nicsim {

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::kQueueFull:
      return "queue_full";
    case DropReason::kOverlimit:
      return "overlimit";
    case DropReason::kOvermemory:
      return "overmemory";
    case DropReason::kCodel:
      return "codel";
    case DropReason::kTooBig:
      return "too_big";
    case DropReason::kRingFull:
      return "ring_full";
    case DropReason::kMalformed:
      return "malformed";
    case DropReason::kWireLoss:
      return "wire_loss";
    case DropReason::kAqm:
      return "aqm";
  }
  return "unknown";
}

}  // namespace nicsim

#include "nicsim/campaign/wall_clock.h"

#include <chrono>

namespace nicsim::campaign {

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace nicsim::campaign

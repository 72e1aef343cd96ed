#include "nicsim/core/time.h"

#include <cinttypes>
#include <cstdio>
#include <ostream>

namespace nicsim {

std::ostream& operator<<(std::ostream& os, Duration d) {
  // Exact: integer nanoseconds, shown in the largest unit that keeps them readable.
  const int64_t ns = d.count_ns();
  const int64_t mag = ns < 0 ? -ns : ns;
  char buf[48];
  if (mag >= 1'000'000'000) {
    std::snprintf(buf, sizeof buf, "%.9gs", d.to_seconds());
  } else if (mag >= 1'000'000) {
    std::snprintf(buf, sizeof buf, "%.6gms", d.to_ms());
  } else if (mag >= 1'000) {
    std::snprintf(buf, sizeof buf, "%.3fus", d.to_us());
  } else {
    std::snprintf(buf, sizeof buf, "%" PRId64 "ns", ns);
  }
  return os << buf << " (" << ns << "ns)";
}

std::ostream& operator<<(std::ostream& os, Time t) { return os << "t=" << t.since_epoch(); }

}  // namespace nicsim

#include "nicsim/live/live_clock.h"

#include <cstdint>
#include <cstring>
#include <ctime>

namespace nicsim::live {
namespace {

int64_t read(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int64_t mono_ns() { return read(CLOCK_MONOTONIC); }

int64_t realtime_minus_mono_ns() {
  // The realtime read is bracketed by two monotonic ones and put at their midpoint; a thread
  // preempted between the reads widens the bracket (tens of µs on a loaded machine, seen as a
  // negative one-way delay on loopback), so the narrowest of a few tries is kept.
  int64_t best_width = INT64_MAX;
  int64_t best = 0;
  for (int i = 0; i < 4 && best_width > 1000; ++i) {
    const int64_t m0 = read(CLOCK_MONOTONIC);
    const int64_t r = read(CLOCK_REALTIME);
    const int64_t m1 = read(CLOCK_MONOTONIC);
    if (m1 - m0 < best_width) {
      best_width = m1 - m0;
      best = r - (m0 + (m1 - m0) / 2);
    }
  }
  return best;
}

int64_t receive_time_ns(const msghdr& m) {
  // The CMSG_* macros use C casts (-Wold-style-cast); this walks the same layout: cmsghdr,
  // data, each aligned to size_t (as nicsim/emu/packet_port.cc does).
  constexpr size_t kAlign = sizeof(size_t);
  auto align = [](size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); };
  const auto* base = static_cast<const char*>(m.msg_control);
  size_t off = 0;
  while (base != nullptr && off + sizeof(cmsghdr) <= m.msg_controllen) {
    cmsghdr h{};
    std::memcpy(&h, base + off, sizeof h);
    if (h.cmsg_len < sizeof(cmsghdr) || off + h.cmsg_len > m.msg_controllen) {
      break;
    }
    if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_TIMESTAMPNS &&
        h.cmsg_len >= align(sizeof(cmsghdr)) + sizeof(timespec)) {
      timespec ts{};
      std::memcpy(&ts, base + off + align(sizeof(cmsghdr)), sizeof ts);
      const int64_t real = static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
      return real - realtime_minus_mono_ns();
    }
    off += align(h.cmsg_len);
  }
  return mono_ns();
}

}  // namespace nicsim::live

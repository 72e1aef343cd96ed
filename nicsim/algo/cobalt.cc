#include "nicsim/algo/cobalt.h"

namespace nicsim::algo {

const std::array<uint32_t, kCobaltInvSqrtCache>& cobalt_inv_sqrt_cache() {
  static const std::array<uint32_t, kCobaltInvSqrtCache> cache = [] {
    std::array<uint32_t, kCobaltInvSqrtCache> c{};
    // Each count's value continues from the previous count's, four steps each (more accurate
    // than the single step used above the cache).
    uint32_t x = ~0u;
    c[0] = x;
    for (uint32_t count = 1; count < kCobaltInvSqrtCache; ++count) {
      for (int i = 0; i < 4; ++i) {
        x = cobalt_newton(count, x);
      }
      c[count] = x;
    }
    return c;
  }();
  return cache;
}

bool cobalt_queue_full(CobaltVars& v, const CobaltParams& p, int64_t now) {
  bool up = false;
  if (now - v.blue_timer > static_cast<int64_t>(p.target)) {
    up = v.p_drop == 0;
    v.p_drop += p.p_inc;
    if (v.p_drop < p.p_inc) {
      v.p_drop = ~0u;  // saturate at ~1.0
    }
    v.blue_timer = now;
  }
  v.dropping = true;
  v.drop_next = now;
  if (v.count == 0) {
    v.count = 1;
  }
  return up;
}

bool cobalt_queue_empty(CobaltVars& v, const CobaltParams& p, int64_t now) {
  bool down = false;
  if (v.p_drop != 0 && now - v.blue_timer > static_cast<int64_t>(p.target)) {
    v.p_drop = v.p_drop < p.p_dec ? 0 : v.p_drop - p.p_dec;
    v.blue_timer = now;
    down = v.p_drop == 0;
  }
  v.dropping = false;
  if (v.count != 0 && now - v.drop_next >= 0) {
    --v.count;
    cobalt_invsqrt(v);
    v.drop_next = cobalt_control(v.drop_next, p.interval, v.rec_inv_sqrt);
  }
  return down;
}

}  // namespace nicsim::algo

#include "nicsim/algo/intel_itr.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {

Validation IntelItr::Params::validate() const {
  if (link_mbps < 1) {
    return ParamError{"link_mbps", "must be >= 1, got " + std::to_string(link_mbps)};
  }
  if (hz < 1 || hz > 1'000'000) {
    return ParamError{"hz", "must be in [1, 1000000], got " + std::to_string(hz)};
  }
  return std::nullopt;
}

IntelItr::IntelItr(const Params& params) : params_(require_valid(params)) {}

const char* to_string(IntelItr::Latency l) {
  switch (l) {
    case IntelItr::Latency::kLowest:
      return "lowest_latency";
    case IntelItr::Latency::kLow:
      return "low_latency";
    case IntelItr::Latency::kBulk:
      return "bulk_latency";
  }
  return "?";
}

// igb_update_itr: the class transitions, thresholds as in the driver.
IntelItr::Latency IntelItr::igb_update(Latency current, Counts c) {
  const uint32_t packets = c.packets;
  const uint32_t bytes = c.bytes;
  if (packets == 0) {
    return current;  // no packets: unchanged
  }
  const uint32_t per_packet = bytes / packets;
  switch (current) {
    case Latency::kLowest:
      if (per_packet > 8000) {  // TSO and jumbo frames
        return Latency::kBulk;
      }
      if (packets < 5 && bytes > 512) {
        return Latency::kLow;
      }
      return current;
    case Latency::kLow:  // 50 us, 20,000 ints/s
      if (bytes > 10000) {
        if (per_packet > 8000 || packets < 10 || per_packet > 1200) {
          return Latency::kBulk;
        }
        if (packets > 35) {
          return Latency::kLowest;
        }
        return current;
      }
      if (per_packet > 2000) {
        return Latency::kBulk;
      }
      if (packets <= 2 && bytes < 512) {
        return Latency::kLowest;
      }
      return current;
    case Latency::kBulk:  // 250 us, 4,000 ints/s
      if (bytes > 25000) {
        return packets > 35 ? Latency::kLow : current;
      }
      return bytes < 1500 ? Latency::kLow : current;
  }
  return current;
}

int64_t IntelItr::igb_itr_of(Latency l) {
  switch (l) {
    case Latency::kLowest:
      return kIgb70k;
    case Latency::kLow:
      return kIgb20k;
    case Latency::kBulk:
      return kIgb4k;
  }
  return kIgb20k;
}

bool IntelItr::update_igb(const Sample& s) {
  int64_t new_val = state_.igb_itr_val;
  if (params_.link_mbps != 1000) {
    new_val = kIgb4k;  // non-gigabit: 4,000 ints/s fixed
  } else {
    state_.tx_range = igb_update(state_.tx_range, s.tx);  // igb_set_itr: TX first, then RX
    state_.rx_range = igb_update(state_.rx_range, s.rx);
    Latency current = std::max(state_.rx_range, state_.tx_range);
    if (current == Latency::kLowest && params_.mode == Mode::kIgbConservative) {
      current = Latency::kLow;  // conservative mode (itr 3) eliminates lowest_latency
    }
    new_val = igb_itr_of(current);
  }
  if (new_val == state_.igb_itr_val) {
    return false;
  }
  const int64_t old = state_.igb_itr_val;
  if (new_val > old) {
    // "bias the interrupt rate towards Bulk": as written it is never below new_val.
    new_val = std::max((new_val * old) / (new_val + (old >> 2)), new_val);
  }
  state_.igb_itr_val = new_val;
  return true;
}

// The piecewise size term of ixgbe_update_itr, 256 times the microseconds at 10G.
static uint32_t ixgbe_size_term(uint32_t avg_wire_size) {
  if (avg_wire_size <= 60) {
    return 5120;  // 50k ints/s
  }
  if (avg_wire_size <= 316) {
    return avg_wire_size * 40 + 2720;  // 50k to 16k ints/s
  }
  if (avg_wire_size <= 1084) {
    return avg_wire_size * 15 + 11452;  // 16k to 9.2k ints/s
  }
  if (avg_wire_size < 1968) {
    return avg_wire_size * 5 + 22420;  // 9.2k to 8k ints/s
  }
  return 32256;  // plateau at 8k ints/s
}

uint32_t IntelItr::ixgbe_update(uint32_t ring_itr, int64_t& next_update, int64_t jiffies,
                                int64_t q_itr, Counts c, int64_t link_mbps) {
  uint32_t itr = kIxgbeMinUsecs | kIxgbeLatency;
  const uint32_t current_usecs = static_cast<uint32_t>(q_itr >> 2);
  const bool stale = jiffies > next_update;  // time_after(jiffies, next_update)
  next_update = jiffies + 1;
  if (stale) {
    return itr;
  }
  if (c.packets == 0) {
    itr = std::min(current_usecs + kIxgbeMinInc, kIxgbeMaxUsecs);
    return itr + (ring_itr & kIxgbeLatency);
  }
  bool size_it = false;
  if (c.packets < 4 && c.bytes < 9000) {
    itr = kIxgbeLatency;  // likely latency driven
    size_it = true;
  } else if (c.packets < 48) {
    return std::min(current_usecs + kIxgbeMinInc, kIxgbeMaxUsecs);
  } else if (c.packets < 96) {
    return current_usecs;  // "goldilocks"
  } else if (c.packets < 256) {
    return std::max(static_cast<uint32_t>(q_itr >> 3), kIxgbeMinUsecs);
  } else {
    itr = 0;  // IXGBE_ITR_ADAPTIVE_BULK
    size_it = true;
  }
  if (!size_it) {
    return itr;
  }
  uint32_t size = ixgbe_size_term(c.bytes / c.packets);
  if ((itr & kIxgbeLatency) != 0) {
    size >>= 1;
  }
  if (link_mbps == 2500 || link_mbps == 1000 || link_mbps == 10) {
    size = std::min<uint32_t>(size, 8064);
    itr += ((size + kIxgbeMinInc * 64 - 1) / (kIxgbeMinInc * 64)) * kIxgbeMinInc;
  } else {  // 10G, 100M and the default
    itr += ((size + kIxgbeMinInc * 256 - 1) / (kIxgbeMinInc * 256)) * kIxgbeMinInc;
  }
  return itr;
}

bool IntelItr::update_ixgbe(const Sample& s) {
  const int64_t jiffies = s.time.ns_since_epoch() / (1'000'000'000 / params_.hz);
  state_.tx_itr = ixgbe_update(state_.tx_itr, state_.tx_next_update, jiffies, state_.ixgbe_itr,
                               s.tx, params_.link_mbps);
  state_.rx_itr = ixgbe_update(state_.rx_itr, state_.rx_next_update, jiffies, state_.ixgbe_itr,
                               s.rx, params_.link_mbps);
  const int64_t new_itr =
      static_cast<int64_t>(std::min(state_.rx_itr, state_.tx_itr) & ~kIxgbeLatency) << 2;
  if (new_itr == state_.ixgbe_itr) {
    return false;
  }
  state_.ixgbe_itr = new_itr;
  return true;
}

bool IntelItr::update(const Sample& s) {
  ++stats_.updates;
  const bool changed = params_.mode == Mode::kIxgbe ? update_ixgbe(s) : update_igb(s);
  stats_.changes += changed ? 1 : 0;
  return changed;
}

Duration IntelItr::interval() const {
  if (params_.mode == Mode::kIxgbe) {
    // 82599/X540 EITR: bits 3..11 in 2 us steps.
    return Duration::us((state_.ixgbe_itr >> 3) * 2);
  }
  // igb EITR: bits 2..14 (E1000_ITR_MASK 0x7FFC) in microseconds.
  return Duration::us((state_.igb_itr_val & 0x7FFC) >> 2);
}

}  // namespace nicsim::algo

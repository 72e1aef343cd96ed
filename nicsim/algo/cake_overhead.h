#pragma once
// CakeOverhead — CAKE's per-packet size compensation for the shaper: what a packet costs on
// the bottleneck link rather than its skb->len (cake_calc_overhead / cake_overhead in Linux
// net/sched/sch_cake.c, torvalds/linux commit 0280f429dc21; tc-cake(8) "OVERHEAD
// COMPENSATION PARAMETERS"). Behaviour ported, no code copied.
//
//   len' = len - network_offset      (only once `overhead` is set: the MAC header is
//                                     replaced by the configured per-packet overhead)
//   len' = max(len' + overhead, mpu)
//   ATM (AAL5):  ceil(len' / 48) * 53      one 53-byte cell per 48 bytes or part thereof
//   PTM (64/65): len' + ceil(len' / 64)    one byte per 64 or part (conservative, as Linux)
//
// A GSO packet is costed per segment: every segment but the last at its full size.
// Also keeps the min/max network-layer and adjusted sizes tc -s prints.

#include <algorithm>
#include <cstdint>

#include "nicsim/core/gso.h"
#include "nicsim/core/packet.h"

namespace nicsim::algo {

enum class CakeAtm : uint8_t { kNone, kAtm, kPtm };  // CAKE_ATM_NONE / _ATM / _PTM

class CakeOverhead {
 public:
  // skb_network_offset of an Ethernet frame: the 14-byte MAC header Packet::len includes.
  static constexpr uint32_t kNetworkOffset = 14;

  CakeOverhead(bool overhead_set, int32_t overhead, uint32_t mpu, CakeAtm atm)
      : overhead_set_(overhead_set), overhead_(overhead), mpu_(mpu), atm_(atm) {}

  // cake_calc_overhead for one frame of `len` bytes (skb->len).
  uint32_t adjust(uint32_t len) {
    if (overhead_set_) {
      len -= std::min(len, kNetworkOffset);
    }
    max_netlen_ = std::max(max_netlen_, len);
    min_netlen_ = std::min(min_netlen_, len);
    int64_t adj = static_cast<int64_t>(len) + overhead_;
    adj = std::max<int64_t>(adj, mpu_);
    adj = std::max<int64_t>(adj, 0);
    uint32_t out = static_cast<uint32_t>(adj);
    if (atm_ == CakeAtm::kAtm) {
      out = (out + 47) / 48 * 53;
    } else if (atm_ == CakeAtm::kPtm) {
      out += (out + 63) / 64;
    }
    max_adjlen_ = std::max(max_adjlen_, out);
    min_adjlen_ = std::min(min_adjlen_, out);
    return out;
  }

  // cake_overhead: a packet's cost, segment by segment for a GSO packet.
  uint32_t adjust(const Packet& p) {
    if (p.gso_segs <= 1) {
      return adjust(p.len);
    }
    const uint32_t full = adjust(gso_segment_len(p, 0));
    const uint32_t last = adjust(gso_segment_len(p, p.gso_segs - 1u));
    return full * (p.gso_segs - 1u) + last;
  }

  uint32_t max_netlen() const { return max_netlen_; }
  uint32_t min_netlen() const { return min_netlen_; }  // UINT32_MAX until a packet is seen
  uint32_t max_adjlen() const { return max_adjlen_; }
  uint32_t min_adjlen() const { return min_adjlen_; }
  // tc -s "average network hdr offset" (a constant here: every frame is Ethernet).
  uint32_t avg_netoff() const { return seen() ? kNetworkOffset : 0; }
  bool seen() const { return max_adjlen_ != 0 || min_adjlen_ != UINT32_MAX; }

 private:
  bool overhead_set_;
  int32_t overhead_;
  uint32_t mpu_;
  CakeAtm atm_;
  uint32_t max_netlen_ = 0;
  uint32_t min_netlen_ = UINT32_MAX;
  uint32_t max_adjlen_ = 0;
  uint32_t min_adjlen_ = UINT32_MAX;
};

}  // namespace nicsim::algo

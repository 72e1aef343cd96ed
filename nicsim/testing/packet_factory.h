#pragma once
// Test helper: builds packets with unique ids.

#include <cstdint>

#include "nicsim/core/packet.h"

namespace nicsim::testing {

class PacketFactory {
 public:
  Packet make(uint32_t len, uint32_t flow_hash = 0, uint8_t priority = 0, uint8_t tos = 0) {
    Packet p;
    p.id = ++last_id_;
    p.len = len;
    p.flow_hash = flow_hash;
    p.flow_id = flow_hash;
    p.priority = priority;
    p.tos = tos;
    return p;
  }
  uint64_t last_id() const { return last_id_; }

 private:
  uint64_t last_id_ = 0;
};

}  // namespace nicsim::testing

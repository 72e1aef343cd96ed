#pragma once
// StageTimes — where packets spent their time, per direction, summed hop by hop over the path.
//
// A packet's stage stamps (core::Packet::stage_ts) describe the hop it is on: the sending NIC
// stamps qdisc, ring and wire entry, the receiving NIC the wire's last bit and its delivery to
// the stack. A router that forwards the packet adds that hop's stage times (hop()) before its
// egress NIC restamps them, plus the router's own forwarding wait ("forward": delivery to the
// stack until the egress send); the destination host adds the last hop and counts the packet
// (delivered()). A stage's mean is its total over every hop divided by the packets that
// reached their destination: the mean per-path sum (hops of packets lost later on the path are
// included, a small bias under loss). Without routers this is exactly the per-hop mean.

#include <array>
#include <cstdint>
#include <vector>

#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"
#include "nicsim/report/results.h"

namespace nicsim::sim {

class StageTimes {
 public:
  // Counts the router's forwarding stage in result() (networks with routers).
  explicit StageTimes(bool with_forward) : with_forward_(with_forward) {}

  // A router forwards `p` at `now`: the hop it completed, and the router's own wait.
  void hop(const Packet& p, report::Direction dir, Time now) {
    Acc* a = acc_[static_cast<size_t>(dir)].data();
    add_hop(p, a, false);
    a[kForward].add(p.stamp_at(Stage::kRxDeliver), now, false);
  }
  // The destination host received `p`: its last hop, counted.
  void delivered(const Packet& p, report::Direction dir) {
    Acc* a = acc_[static_cast<size_t>(dir)].data();
    add_hop(p, a, true);
    ++a[kForward].packets;  // it completed every hop's forwarding
  }
  // The mean per-path stage times of one direction (qdisc, ring, wire, rx[, forward]).
  std::vector<report::StageTime> result(report::Direction dir) const;

 private:
  enum : size_t { kQdisc, kRing, kWire, kRx, kForward, kStages };
  struct Acc {
    Duration total;
    uint64_t packets = 0;
    void add(Time from, Time to, bool count) {
      if (to >= from) {
        total += to - from;
        packets += count ? 1 : 0;
      }
    }
  };
  static void add_hop(const Packet& p, Acc* a, bool count) {
    a[kQdisc].add(p.stamp_at(Stage::kQdiscIn), p.stamp_at(Stage::kRingIn), count);
    a[kRing].add(p.stamp_at(Stage::kRingIn), p.stamp_at(Stage::kWireStart), count);
    a[kWire].add(p.stamp_at(Stage::kWireStart), p.stamp_at(Stage::kWireEnd), count);
    a[kRx].add(p.stamp_at(Stage::kWireEnd), p.stamp_at(Stage::kRxDeliver), count);
  }
  bool with_forward_;
  std::array<std::array<Acc, kStages>, 2> acc_{};
};

}  // namespace nicsim::sim

#pragma once
// Nic — the contract every NIC/driver model offers to the back-ends (sim and emu).
//
// A NIC model is a deterministic state machine over `Time now`: the host hands it packets to
// send (into the qdisc), it reads frames from its incoming Wire, it writes frames to its
// outgoing Wire, and it hands received frames and TX completions to its host through a
// NicSink. It keeps its own Agenda of future actions; the back-end calls advance(now) whenever
// now >= next_event() and after every input re-reads next_event(). Costs of driver work run on
// the host's Cpu (shared with the host's other work).
//
// Two families implement it: PlatformNic (PCIe or SoC MAC: qdisc → TX ring + BQL + doorbell →
// wire; RX ring + interrupt coalescing + NAPI) and UsbNic (usbnet / FreeBSD uether: bulk-OUT
// transfers, device FIFOs, bulk-IN aggregation, host-controller completion latency).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/core/element.h"
#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/wire.h"

namespace nicsim::model {

// A transmitted frame whose descriptor was cleaned: the socket's bytes are released (what TCP
// Small Queues waits for, driver-mechanisms §7.1) and the sender learns its timing.
struct TxRelease {
  uint64_t packet_id = 0;  // the id of the packet the stack handed to send()
  uint32_t flow_id = 0;
  uint32_t bytes = 0;      // skb->len of this frame (a GSO segment's own length)
  bool last_segment = true;  // the last frame of a software-segmented GSO packet
};

class NicSink {
 public:
  virtual ~NicSink() = default;
  // A received frame reached the host stack.
  virtual void deliver(Packet&& frame, Time now) = 0;
  // A transmitted frame was completed and freed.
  virtual void tx_released(const TxRelease& release, Time now) = 0;
};

// Summary counters every NIC reports (more detail in each model's own stats).
struct NicCounters {
  uint64_t tx_packets = 0;      // frames put on the wire
  uint64_t tx_bytes = 0;
  uint64_t tx_qdisc_drops = 0;  // packets the qdisc dropped
  uint64_t rx_packets = 0;      // frames delivered to the stack
  uint64_t rx_bytes = 0;
  uint64_t rx_drops = 0;        // frames lost in the NIC (ring/FIFO overflow, malformed)
  uint64_t interrupts = 0;
  uint64_t doorbells = 0;
};

// A sample of the NIC's queues for time series (qdisc, ring, BQL, device FIFO).
struct NicQueueSample {
  uint64_t qdisc_packets = 0;
  uint64_t qdisc_bytes = 0;
  uint64_t ring_packets = 0;   // TX ring (or usbnet TX queue) occupancy
  uint64_t ring_bytes = 0;
  uint64_t bql_limit = 0;      // 0 without BQL
  uint64_t device_fifo_bytes = 0;
};

class Nic {
 public:
  virtual ~Nic() = default;
  // Connects the NIC to its outgoing and incoming wires and its host. Call once before use.
  virtual void attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) = 0;
  // The host stack hands a packet (possibly a GSO super-packet) to the device queue.
  virtual Verdict send(Packet&& p, Time now) = 0;
  virtual std::optional<Time> next_event() const = 0;
  virtual void advance(Time now) = 0;
  virtual NicCounters counters() const = 0;
  virtual NicQueueSample queue_sample() const = 0;
  virtual std::string describe() const = 0;  // one line: model, key settings
};

}  // namespace nicsim::model

#pragma once
// WireOnlyNic — the stand-in NIC the emulator uses until the NIC models are wired in: the
// frames a host's kernel sends wait in a drop-tail FIFO of `txqueuelen` frames (the default
// of a Linux interface, net/core/dev.c DEFAULT_TX_QUEUE_LEN = 1000) and go onto the outgoing
// Wire one at a time, each as soon as the wire is free; frames arriving on the incoming Wire
// are delivered to the host at their arrival time. No ring, no BQL, no coalescing, no CPU cost.
//
// It implements model::Nic, the contract PlatformNic and UsbNic implement, so the emulator's
// data path (datapath.h) is already the one the real NIC models plug into: replace this object
// by a PlatformNic/UsbNic built from the host's preset and nothing else changes.
//
// Timing: a frame starts serialisation at max(its arrival in the FIFO, the end of the previous
// frame) — the model's own schedule, not the moment the emulator got round to it — so a late
// wake-up never wastes link time (lateness is the loop's, measured separately). Deterministic,
// no clock: `now` is an argument, as everywhere in model/.

#include <cstdint>
#include <optional>
#include <string>

#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/model/nic.h"

namespace nicsim::emu {

class WireOnlyNic final : public model::Nic {
 public:
  struct Params {
    int64_t txqueuelen = 1000;  // frames; Linux DEFAULT_TX_QUEUE_LEN
    Validation validate() const;
  };
  struct Stats {
    uint64_t sent = 0;     // frames offered by the host
    uint64_t dropped = 0;  // refused: FIFO full
    uint64_t transmitted = 0;
    uint64_t delivered = 0;  // frames handed to the host from the incoming wire
  };

  explicit WireOnlyNic(const Params& params);

  void attach(model::Wire* out, model::Wire* in, model::Cpu* cpu, model::NicSink* sink) override;
  Verdict send(Packet&& p, Time now) override;
  std::optional<Time> next_event() const override;
  void advance(Time now) override;
  model::NicCounters counters() const override;
  model::NicQueueSample queue_sample() const override;
  std::string describe() const override;

  const Stats& stats() const { return stats_; }
  size_t backlog() const { return fifo_.size(); }

 private:
  Params params_;
  model::Wire* out_ = nullptr;
  model::Wire* in_ = nullptr;
  model::NicSink* sink_ = nullptr;
  PacketFifo fifo_;
  uint64_t fifo_bytes_ = 0;
  uint64_t tx_bytes_ = 0;
  uint64_t rx_bytes_ = 0;
  Stats stats_;
};

}  // namespace nicsim::emu

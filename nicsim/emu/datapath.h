#pragma once
// Datapath — the emulator's packet path, independent of clocks and sockets:
//
//   host a kernel ─▶ port[a].receive ─▶ nic[a].send ─▶ wire a→b ─▶ nic[b] ─▶ sink[b] ─▶ port[b]
//   host b kernel ─▶ port[b].receive ─▶ nic[b].send ─▶ wire b→a ─▶ nic[a] ─▶ sink[a] ─▶ port[a]
//
// Each host has one model::Nic attached to its outgoing and incoming Wire and to its own
// model::Cpu (as in the simulator); what a NIC delivers goes to its own host's port. The NICs
// are the scenario hosts' PlatformNic / UsbNic (config/host_nic.h; the session builds them) or, in
// tests, WireOnlyNic. Frames are Packets whose payload holds the real bytes, moved from stage
// to stage; a USB NIC encodes them into bulk transfers with the chip's framing and decodes
// them on the other side. Each frame read from a host is classified first (frame_classifier.h:
// skb->priority from the TOS, flow hash) and gets a run-unique id; a CE mark a qdisc sets is
// written into the frame's IPv4 header before it is handed to the other host.
//
// TX completions (NicSink::tx_released) are counted only: veth and TAP free each skb when the
// host transmits it, so the host kernel's TSQ/BQL cannot be told (docs/emu.md, "TX
// completions").
//
// The session's real-time loop drives it: receive(ready, now, offset) when ports are readable,
// service(now) when next_event() is due, and it sleeps until next_event(). `now` always comes
// from the caller, so tests drive a Datapath with a manual clock and fake ports.
//
// Input times: a frame enters its NIC at the time the host's kernel sent it when the port
// has kernel timestamps (PacketPort), else at `now`; the models are first advanced to that
// time, and frames of both hosts are merged in time order. The time is clamped to
// [the models' time, now], because a model never goes back in time. So the emulator's own
// wake-up latency does not delay frames into the model.
//
// Release lateness: a frame's scheduled release is the time the model delivers it (the NIC's
// deliver time); flush(now) records now - scheduled for each frame it writes: how late,
// behind the model's schedule, the frame reached the other host's kernel (up to the write
// system call).

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"
#include "nicsim/emu/frame_port.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/wire.h"
#include "nicsim/report/latency_recorder.h"

namespace nicsim::emu {

struct DirectionStats {
  uint64_t frames_in = 0;  // read from the sending host
  uint64_t bytes_in = 0;
  uint64_t frames_out = 0;  // handed to the receiving host's port
  uint64_t bytes_out = 0;
  uint64_t nic_drops = 0;    // refused by the sending NIC (Verdict::kDropped)
  uint64_t wire_lost = 0;    // lost on the wire (loss model)
  uint64_t tx_released = 0;  // TX completions (and in-queue drops) the sending NIC reported
  uint64_t ce_marked = 0;    // frames whose IPv4 ECN field was rewritten to CE
};

// Sees every frame entering a wire (pcap export). `direction` 0 = a→b, 1 = b→a; `first_bit`
// is the model time of the frame's first bit on the wire.
class WireTap {
 public:
  virtual ~WireTap() = default;
  virtual void on_wire(size_t direction, Time first_bit, const Packet& frame) = 0;
};

class Datapath {
 public:
  static constexpr size_t kRxBudget = 256;  // frames read per port per receive() call

  // ports[i] / nics[i] belong to host i (0 = a, 1 = b); wires[0] carries a→b, wires[1] b→a.
  // The NICs are attached here, each to cpus[i] or, where that is nullptr, to a Cpu the
  // Datapath owns (the emulated host's core: its costs are modelled delays, not ours).
  Datapath(std::array<FramePort*, 2> ports, std::array<std::unique_ptr<model::Nic>, 2> nics,
           std::array<model::Wire::Params, 2> wires,
           std::array<model::Cpu*, 2> cpus = {nullptr, nullptr});
  Datapath(const Datapath&) = delete;
  Datapath& operator=(const Datapath&) = delete;

  // Reads what the hosts with ready[i] have sent (up to kRxBudget frames each) and hands it to
  // their NICs in time order (see above). `realtime_minus_time_ns` converts the ports'
  // CLOCK_REALTIME stamps to Time (RealClock::realtime_minus_time_ns). Returns frames read.
  size_t receive(std::array<bool, 2> ready, Time now, int64_t realtime_minus_time_ns = 0);
  // Runs every model event due at or before t; delivered frames are queued on the ports.
  void advance(Time t);
  // Writes the queued frames; records their release lateness against `now`.
  void flush(Time now);
  // advance(now), then flush(now).
  void service(Time now) {
    advance(now);
    flush(now);
  }
  // The earliest pending model event; nullopt when idle.
  std::optional<Time> next_event() const;
  // The latest time the models have been advanced to or fed at.
  Time model_time() const { return model_time_; }

  const DirectionStats& stats(size_t direction) const { return dir_[direction]; }
  const model::Wire& wire(size_t direction) const { return *wires_[direction]; }
  const model::Nic& nic(size_t host) const { return *nics_[host]; }
  const report::LatencyRecorder& release_lateness() const { return lateness_; }
  const model::Cpu& cpu(size_t host) const { return *cpu_ptr_[host]; }
  // Every frame entering either wire is shown to `tap` (nullptr: none). Not owned.
  void set_wire_tap(WireTap* tap);

 private:
  class Sink final : public model::NicSink {
   public:
    Sink(Datapath* dp, size_t host) : dp_(dp), host_(host) {}
    void deliver(Packet&& frame, Time now) override;
    void tx_released(const model::TxRelease&, Time) override { ++dp_->dir_[host_].tx_released; }

   private:
    Datapath* dp_;
    size_t host_;
  };
  class WireObserver final : public Observer {
   public:
    WireObserver(WireTap* tap, size_t direction) : tap_(tap), direction_(direction) {}
    void on_enqueue(Time now, const Packet& p) override { tap_->on_wire(direction_, now, p); }

   private:
    WireTap* tap_;
    size_t direction_;
  };

  std::array<FramePort*, 2> ports_;
  std::array<std::unique_ptr<model::Wire>, 2> wires_;
  std::array<std::unique_ptr<model::Nic>, 2> nics_;
  std::array<std::unique_ptr<Sink>, 2> sinks_;
  std::array<model::Cpu, 2> cpus_{};
  std::array<model::Cpu*, 2> cpu_ptr_{};
  std::array<std::unique_ptr<WireObserver>, 2> wire_observers_;
  uint64_t next_id_ = 0;
  std::array<DirectionStats, 2> dir_{};
  std::array<std::vector<Packet>, 2> rx_;      // receive scratch, kRxBudget per host
  std::array<std::vector<int64_t>, 2> rx_rt_;  // their kernel timestamps
  std::array<std::vector<Time>, 2> rx_at_;     // their input times
  std::array<std::vector<Time>, 2> due_;       // scheduled release of each frame queued per port
  Time model_time_;
  report::LatencyRecorder lateness_;
};

}  // namespace nicsim::emu

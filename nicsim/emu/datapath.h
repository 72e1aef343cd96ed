#pragma once
// Datapath — the emulator's packet path, independent of clocks and sockets:
//
//   host a kernel ─▶ port[a].receive ─▶ nic[a].send ─▶ wire a→b ─▶ nic[b] ─▶ sink[b] ─▶ port[b]
//   host b kernel ─▶ port[b].receive ─▶ nic[b].send ─▶ wire b→a ─▶ nic[a] ─▶ sink[a] ─▶ port[a]
//
// Each host has one model::Nic attached to its outgoing and incoming Wire (as in the
// simulator); what a NIC delivers goes to its own host's port. Today the NICs are WireOnlyNic;
// PlatformNic / UsbNic (the host's preset) plug in through the same model::Nic interface.
// Frames are Packets whose payload holds the real bytes, moved from stage to stage.
//
// The session's real-time loop drives it: receive(host, now) when a port is readable,
// service(now) when next_event() is due, and it sleeps until next_event(). `now` always comes
// from the caller, so tests drive a Datapath with a manual clock and fake ports.
//
// Release lateness: a frame's scheduled release is the time the model delivers it (the NIC's
// deliver time); service(now) records now - scheduled for each frame it writes. That is how
// late, behind the model's schedule, the frame reached the other host's kernel (up to the
// write system call that follows).

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
  uint64_t nic_drops = 0;  // refused by the sending NIC (Verdict::kDropped)
  uint64_t wire_lost = 0;  // lost on the wire (loss model)
};

class Datapath {
 public:
  static constexpr size_t kRxBudget = 256;  // frames read per port per receive() call

  // ports[i] / nics[i] belong to host i (0 = a, 1 = b); wires[0] carries a→b, wires[1] b→a.
  // The NICs are attached here. cpus may hold nullptr (models without CPU costs).
  Datapath(std::array<FramePort*, 2> ports, std::array<std::unique_ptr<model::Nic>, 2> nics,
           std::array<model::Wire::Params, 2> wires,
           std::array<model::Cpu*, 2> cpus = {nullptr, nullptr});
  Datapath(const Datapath&) = delete;
  Datapath& operator=(const Datapath&) = delete;

  // Reads what host i has sent (up to kRxBudget frames) and hands it to its NIC.
  size_t receive(size_t host, Time now);
  // Runs every model event due at or before now, then writes the delivered frames.
  void service(Time now);
  // The earliest pending model event; nullopt when idle.
  std::optional<Time> next_event() const;

  const DirectionStats& stats(size_t direction) const { return dir_[direction]; }
  const model::Wire& wire(size_t direction) const { return *wires_[direction]; }
  const model::Nic& nic(size_t host) const { return *nics_[host]; }
  const report::LatencyRecorder& release_lateness() const { return lateness_; }

 private:
  class Sink final : public model::NicSink {
   public:
    Sink(Datapath* dp, size_t host) : dp_(dp), host_(host) {}
    void deliver(Packet&& frame, Time now) override;
    void tx_released(const model::TxRelease&, Time) override {}

   private:
    Datapath* dp_;
    size_t host_;
  };

  std::array<FramePort*, 2> ports_;
  std::array<std::unique_ptr<model::Wire>, 2> wires_;
  std::array<std::unique_ptr<model::Nic>, 2> nics_;
  std::array<std::unique_ptr<Sink>, 2> sinks_;
  std::array<DirectionStats, 2> dir_{};
  std::vector<Packet> rx_;  // receive scratch (kRxBudget packets)
  Time service_now_;
  report::LatencyRecorder lateness_;
};

}  // namespace nicsim::emu

#pragma once
// Datapath — the emulator's packet path, independent of clocks and sockets:
//
//   host a kernel ─▶ port[a].receive ─▶ nic[a].send ─▶ wire a→b ─▶ nic[b] ─▶ sink[b] ─▶ port[b]
//   host b kernel ─▶ port[b].receive ─▶ nic[b].send ─▶ wire b→a ─▶ nic[a] ─▶ sink[a] ─▶ port[a]
//
// and over a network (config::Network, DatapathLayout below), e.g. a - r - b:
//
//   host a ─▶ port[a] ─▶ nic[a] ─▶ wire a→r.lan ─▶ Router r: nic[r.lan] ─▶ forward (TTL,
//     checksum, MACs of the egress link) ─▶ nic[r.wan] ─▶ wire r.wan→b ─▶ nic[b] ─▶ port[b]
//
// Each host has one model::Nic attached to its outgoing and incoming Wire and to its own
// model::Cpu (as in the simulator); what a NIC delivers goes to its own host's port. Routers
// are model::Router (the simulator's forwarding element: one NIC per interface on the router's
// Cpu, routes on Packet::dst_host, TTL and IPv4 checksum); the classifier sets dst_host from
// the frame's IPv4 destination (the host owning that address; none: kUnknownHost, which no
// router has a route for). When a router forwards a frame, its Ethernet source becomes the
// egress interface's MAC and its destination the MAC at the other end of the egress link (the
// next hop), as the kernel's neighbour output does; hosts then see frames exactly as from a
// real router. The NICs
// are the scenario hosts' PlatformNic / UsbNic (config/host_nic.h; the session builds them) or, in
// tests, WireOnlyNic. Frames are Packets whose payload holds the real bytes, moved from stage
// to stage; a USB NIC encodes them into bulk transfers with the chip's framing and decodes
// them on the other side. Each frame read from a host is classified first (frame_classifier.h:
// skb->priority from the TOS, flow hash) and gets a run-unique id; a CE mark a qdisc sets is
// written into the frame's IPv4 header before it is handed to the other host.
//
// TX completions (NicSink::tx_released) are counted only: the host kernel's skb is freed when
// the frame is read (at once by default, or when pulled with back pressure, below), so the
// host's TSQ cannot be told about the emulated completion (docs/emu.md, "TX completions").
//
// Back pressure (ports that pull(), BusyPollPort): such a port's frames stay in its host's
// kernel until pull() takes them, and pull() takes them only while the host's NIC would accept
// a frame without queueing it — its own qdisc is empty, i.e. the device queue is not stopped
// (ring full, BQL limit reached, usbnet's queue full) — kPullBatch at a time, re-checking in
// between. So the host kernel's qdisc and TSQ hold the standing queue, as with a real NIC, and
// the emulated qdisc holds at most the frames of one batch. receive() skips these ports.
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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"
#include "nicsim/emu/frame_classifier.h"
#include "nicsim/emu/frame_port.h"
#include "nicsim/emu/netlink.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/router.h"
#include "nicsim/model/wire.h"
#include "nicsim/report/latency_recorder.h"

namespace nicsim::config {
class Network;
}

namespace nicsim::emu {

struct AddressPlan;

// Counters of one wire direction (link l, side s: from the interface at ends[s] to the one at
// ends[1-s]; in the two-host form 0 = a→b, 1 = b→a). At a router's end only frame counts are
// known (from the router and its NICs); bytes_in stays 0 there.
struct DirectionStats {
  uint64_t frames_in = 0;  // offered to the sending NIC (read from its host / forwarded to it)
  uint64_t bytes_in = 0;
  uint64_t frames_out = 0;  // delivered by the receiving NIC (to its host's port / router)
  uint64_t bytes_out = 0;
  uint64_t nic_drops = 0;    // refused by the sending NIC (Verdict::kDropped)
  uint64_t wire_lost = 0;    // lost on the wire (loss model)
  uint64_t tx_released = 0;  // TX completions (and in-queue drops) a sending host's NIC reported
  uint64_t ce_marked = 0;    // frames whose IPv4 ECN field was rewritten to CE (at a host)
};

// Sees every frame entering a wire (pcap export). `direction` = link * 2 + side (0 = a→b,
// 1 = b→a in the two-host form); `first_bit` is the model time of the frame's first bit on
// the wire.
class WireTap {
 public:
  virtual ~WireTap() = default;
  virtual void on_wire(size_t direction, Time first_bit, const Packet& frame) = 0;
};

// Sees every frame a host hands to its NIC model, classified, at its input time, just before
// Nic::send (`nicsim emulate --record`: the arrival process for a replay in the simulator).
class InputTap {
 public:
  virtual ~InputTap() = default;
  virtual void on_input(size_t host, Time t, const Packet& frame) = 0;
};

// Where every interface of the emulated network is, resolved from a config::Network and its
// AddressPlan (of()) or the two-host form (two_hosts()).
struct DatapathLayout {
  struct Interface {
    size_t node = 0;  // host index, or host_count + router index
    int local = 0;    // its index on its router (0 on a host)
    size_t link = 0;
    int side = 0;  // sends on wire link*2+side, receives on link*2+1-side
    MacAddress mac{};
  };
  size_t hosts = 0;
  size_t links = 0;
  std::vector<Interface> interfaces;
  std::vector<size_t> host_interface;                   // per host
  std::vector<std::vector<size_t>> router_interfaces;   // per router: local -> interface
  std::vector<size_t> peer;                             // per interface: the other end
  std::unordered_map<uint32_t, uint16_t> host_by_addr;  // IPv4 (network order) -> host

  static DatapathLayout two_hosts();
  static DatapathLayout of(const config::Network& net, const AddressPlan& addresses);
};

class Datapath {
 public:
  static constexpr size_t kRxBudget = 256;          // frames read per port per receive() call
  static constexpr size_t kPullBatch = 2;           // frames asked of a pulling port at a time
  static constexpr uint16_t kUnknownHost = 0xffff;  // dst_host of a frame for no host

  // The two-host form: ports[i] / nics[i] belong to host i (0 = a, 1 = b); wires[0] carries
  // a→b, wires[1] b→a. The NICs are attached here, each to cpus[i] or, where that is nullptr,
  // to a Cpu the Datapath owns (the emulated host's core: its costs are modelled delays, not
  // ours).
  Datapath(std::array<FramePort*, 2> ports, std::array<std::unique_ptr<model::Nic>, 2> nics,
           std::array<model::Wire::Params, 2> wires,
           std::array<model::Cpu*, 2> cpus = {nullptr, nullptr});
  // A network: one port and NIC per host (host order), the routers (router order, each with
  // its NICs, interface order as in the layout), both directions of every link
  // (wires[l][s]: from ends[s]); host_cpus[h] (may be empty or hold nullptr) as above.
  Datapath(DatapathLayout layout, std::vector<FramePort*> ports,
           std::vector<std::unique_ptr<model::Nic>> host_nics,
           std::vector<std::unique_ptr<model::Router>> routers,
           std::vector<std::array<model::Wire::Params, 2>> wires,
           std::vector<model::Cpu*> host_cpus = {});
  Datapath(const Datapath&) = delete;
  Datapath& operator=(const Datapath&) = delete;
  ~Datapath();

  // Reads what the hosts with ready[h] have sent (up to kRxBudget frames each) and hands it to
  // their NICs in time order (see above). `realtime_minus_time_ns` converts the ports'
  // CLOCK_REALTIME stamps to Time (RealClock::realtime_minus_time_ns). Returns frames read.
  size_t receive(const std::vector<bool>& ready, Time now, int64_t realtime_minus_time_ns = 0);
  // Back pressure: pulls frames from every pulling port whose host's NIC has room (see above),
  // up to kRxBudget per host; they enter their NICs at `now`. Returns frames pulled.
  size_t pull(Time now);
  // Whether host h's port pulls and its NIC accepts a frame now (its qdisc is empty).
  bool has_room(size_t host) const;
  // Whether any pulling host has room: the loop should call pull() again soon.
  bool wants_pull() const;
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

  const DatapathLayout& layout() const { return layout_; }
  size_t host_count() const { return hosts_.size(); }
  size_t direction_count() const { return wires_.size(); }
  DirectionStats stats(size_t direction) const;
  const model::Wire& wire(size_t direction) const { return *wires_[direction]; }
  // The NIC of interface `iface` (in the two-host form: of host `iface`).
  const model::Nic& nic(size_t iface) const;
  // The emulated CPU interface `iface`'s NIC runs on (a host's, or its router's).
  const model::Cpu& cpu(size_t iface) const;
  size_t router_count() const { return routers_.size(); }
  const model::Router& router(size_t r) const { return *routers_[r]; }
  const report::LatencyRecorder& release_lateness() const { return lateness_; }
  // Every frame entering any wire is shown to `tap` (nullptr: none). Not owned.
  void set_wire_tap(WireTap* tap);
  // Every frame a host hands to its NIC is shown to `tap` (nullptr: none). Not owned.
  void set_input_tap(InputTap* tap) { input_tap_ = tap; }
  // Queue series: `sample(t)` at t = 0, period, 2 period, ... in model time, each once the
  // models have run every event due at t and before any frame with a later input time enters
  // them (advance() stops at each sample time on its way), as the simulator samples. A late
  // loop still samples the model state at t exactly; what it changes is only when frames enter
  // (their input times), which the recording keeps.
  void set_queue_sampler(Duration period, std::function<void(Time)> sample) {
    sample_period_ = period;
    sampler_ = std::move(sample);
  }

 private:
  class Sink final : public model::NicSink {
   public:
    Sink(Datapath* dp, size_t host) : dp_(dp), host_(host) {}
    void deliver(Packet&& frame, Time now) override;
    void tx_released(const model::TxRelease&, Time) override;
    // RSS of a multi-queue NIC: the real frame's addresses and ports (a super-frame's, for
    // each of its segments: they all reach one queue, as the real segments would).
    algo::Rss::Flow rss_flow(const Packet& frame) const override;
    // GRO of a NIC with `gro` on: the real frame's TCP header, or for a segment the models cut
    // from a super-frame (no bytes of its own), the header tcp_gso_segment gives it.
    algo::GroHeader gro_header(const Packet& frame) const override;

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
  // Rewrites a forwarded frame's MACs to its egress link's (the payload is the frame's bytes,
  // still the router's to change: the egress NIC's send() comes after this call).
  class NextHop final : public model::RouterObserver {
   public:
    NextHop(const DatapathLayout* layout, size_t router) : layout_(layout), router_(router) {}
    void on_forward(Time now, const Packet& p, int in, int out) override;

   private:
    const DatapathLayout* layout_;
    size_t router_;
  };
  struct Host {
    FramePort* port = nullptr;
    std::unique_ptr<model::Nic> nic;
    std::unique_ptr<Sink> sink;
    model::Cpu own_cpu;
    model::Cpu* cpu = nullptr;
    size_t out_wire = 0;  // the direction its frames leave on
    size_t in_wire = 0;
    std::vector<Packet> rx;      // receive scratch, kRxBudget
    std::vector<int64_t> rx_rt;  // their kernel timestamps
    std::vector<Time> rx_at;     // their input times
    std::vector<Time> due;       // scheduled release of each frame queued on the port
  };
  struct Arrival {
    Time at;
    uint32_t host;
    uint32_t k;
  };

  void attach_all(std::vector<std::array<model::Wire::Params, 2>> wires);
  void stamp_input_times(Host& h, size_t n, Time now, int64_t realtime_minus_time_ns) const;
  void send_from_host(size_t host, Packet& p, Time t);
  void run_due(Time t);
  void run_passes(Time t);

  DatapathLayout layout_;
  std::vector<std::unique_ptr<model::Wire>> wires_;  // by direction
  std::vector<Host> hosts_;
  std::vector<std::unique_ptr<model::Router>> routers_;
  std::vector<std::unique_ptr<NextHop>> next_hops_;
  std::vector<std::unique_ptr<WireObserver>> wire_observers_;
  std::vector<Arrival> arrivals_;  // receive scratch
  uint64_t next_id_ = 0;
  // What the segments of each TCP super-frame in flight share (by packet id): the models carry
  // all but the last segment without bytes, so gro_header and rss_flow read it here. Removed
  // when the last is delivered; cleared whole past kMaxSuperFrames (super-frames whose last
  // segment was dropped).
  struct SuperFrame {
    TcpGroBase gro;
    algo::Rss::Flow rss;
  };
  std::unordered_map<uint64_t, SuperFrame> super_frames_;
  static constexpr size_t kMaxSuperFrames = 4096;
  std::vector<DirectionStats> dir_;  // host ends' live counters, by direction
  Time model_time_;
  report::LatencyRecorder lateness_;
  InputTap* input_tap_ = nullptr;
  bool time_ordered_ = false;  // routers or USB NICs: run_due steps through event times
  Duration sample_period_;
  std::function<void(Time)> sampler_;
  Time next_sample_;
};

}  // namespace nicsim::emu

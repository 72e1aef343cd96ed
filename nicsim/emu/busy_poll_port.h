#pragma once
// BusyPollPort — frame I/O that gives the host kernel back pressure (issue 13 item 1): the
// emulator pulls frames out of the host only when the emulated NIC has room for them, so the
// host kernel keeps the rest in its own qdisc, still charged to their sockets (TSQ sees them).
//
//   host kernel ─▶ qdisc of the host's veth ─▶ ptr_ring (256) of the peer veth (our end)
//        ▲ stopped when ptr_ring is full          │ veth_poll (NAPI) runs only when we
//        │ (Linux 6.16+, no drop)                 │ busy-poll it, budget = frames wanted
//        └────── woken when veth_poll frees room ◀─┘──▶ stack ─▶ AF_PACKET socket ─▶ receive()
//
// - The peer veth is put in NAPI mode by an XDP program that passes every frame (XDP_PASS:
//   unlike GRO, it never merges frames, netif_elide_gro()). Frames the host sends then wait in
//   the peer's ptr_ring until its NAPI poll runs; when the ring is full, Linux 6.16+ stops the
//   host veth's TX queue instead of dropping (commit "veth: apply qdisc backpressure on full
//   ptr_ring to reduce TX drops"), so the host's qdisc holds the rest.
// - The NAPI poll is kept off its own schedule by preferred busy polling (Linux 5.11, commit
//   7fd3253a7de6 "net: Introduce preferred busy-polling"): after every busy poll the kernel
//   re-arms the NAPI's gro_flush_timeout timer (kSafetyNetNs) instead of unmasking veth's
//   "interrupt" (rq->rx_notify_masked) for napi_defer_hard_irqs rounds. The timer is the
//   safety net: if nobody polls, one 64-frame softirq poll runs every kSafetyNetNs.
// - Busy polling needs a socket that carries the NAPI's id. An AF_XDP socket on veth got NAPI
//   id 0 on Linux 6.18 (measured, docs/emu.md); whether an AF_PACKET socket gets one was not
//   checked. So the port primes a UDP "kick" socket in the emulator's namespace: it sends
//   one datagram from the host's side (an AF_PACKET frame written on the host's veth) to a
//   link-local address on our end; UDP marks the socket with the NAPI id the skb came through
//   (sk_mark_napi_id). recvfrom(kick, MSG_DONTWAIT) then busy-polls that NAPI once with
//   SO_BUSY_POLL_BUDGET, and once more in busy_poll_stop(): at most 2 × budget frames.
// - The skb is freed after the AF_PACKET socket copied it, i.e. at the pull: the "TX
//   completion" the host's TSQ sees is the pull, not the emulated NIC's completion.

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>

#include "nicsim/emu/frame_port.h"
#include "nicsim/emu/packet_port.h"
#include "nicsim/emu/sys.h"

namespace nicsim::emu {

struct BusyPollStats {
  uint64_t kicks = 0;           // busy polls of the peer's NAPI (recvfrom on the kick socket)
  uint64_t pulled_by_kick = 0;  // frames a kick brought
  uint64_t found_waiting = 0;   // frames already read by the NAPI (safety-net timer, over-pull)
};

class BusyPollPort final : public FramePort {
 public:
  static constexpr uint32_t kSafetyNetNs = 10'000'000;  // gro_flush_timeout of the peer
  static constexpr uint32_t kDeferRounds = 1000;        // napi_defer_hard_irqs of the peer
  static constexpr size_t kMaxPull = PacketPort::kBatch;

  // `ifname` is the emulator's end of the host's veth, in `netns_fd`; `host_ifname` the host's
  // end, in `host_netns_fd` (the priming datagram is written there). Throws SysError when the
  // kernel lacks a piece (no native XDP on veth, no busy polling): the caller falls back.
  BusyPollPort(int netns_fd, const std::string& ifname, int host_netns_fd,
               const std::string& host_ifname, FramePool& pool);
  ~BusyPollPort() override;
  BusyPollPort(const BusyPollPort&) = delete;
  BusyPollPort& operator=(const BusyPollPort&) = delete;

  // Readable when the safety-net timer's poll (or an over-pull) left frames waiting.
  int fd() const override { return io_->fd(); }
  // Pulls up to `max` frames: those already waiting, then busy-polls the peer's NAPI for the
  // rest. Their timestamps are when the NAPI poll ran (the pull).
  size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) override;
  void send(Packet&& frame) override { io_->send(std::move(frame)); }
  void flush() override { io_->flush(); }
  const PortStats& stats() const override { return io_->stats(); }
  std::string describe() const override;
  bool pulls() const override { return true; }
  const BusyPollStats& busy_poll_stats() const { return bstats_; }
  unsigned napi_id() const { return napi_id_; }

 private:
  void prime(int netns_fd, const std::string& ifname, int host_netns_fd,
             const std::string& host_ifname);
  void set_budget(int budget);

  std::string ifname_;
  UniqueFd prog_;
  UniqueFd link_;
  UniqueFd kick_;
  std::optional<PacketPort> io_;
  int budget_ = 0;
  unsigned napi_id_ = 0;
  BusyPollStats bstats_;
};

}  // namespace nicsim::emu

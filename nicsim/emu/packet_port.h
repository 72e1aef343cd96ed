#pragma once
// PacketPort — frame I/O through an AF_PACKET socket bound to the emulator's end of a veth
// pair (packet(7)). Reads use recvmmsg and writes sendmmsg, up to kBatch frames per system
// call, straight into/out of FramePool buffers (the kernel's copy is the only copy).
//
// Socket options: bound to one interface with protocol ETH_P_ALL (created with protocol 0 so
// nothing is queued before the bind), PACKET_IGNORE_OUTGOING (frames we write are not read
// back), PACKET_QDISC_BYPASS (writes go straight to the veth, no qdisc on our side),
// SO_RCVBUFFORCE/SO_SNDBUFFORCE 8 MiB (a TCP burst of several hundred frames while the loop
// sleeps must not overflow the socket), SO_TIMESTAMPNS: each frame carries the time the
// kernel received it — stamped in netif_rx as the host's veth transmitted it — so a frame
// enters the model when the host sent it, not when the emulator woke up.

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <string>
#include <vector>

#include "nicsim/emu/frame_port.h"
#include "nicsim/emu/sys.h"

namespace nicsim::emu {

class PacketPort final : public FramePort {
 public:
  static constexpr size_t kBatch = 64;

  // Opens the socket inside network namespace `netns_fd` on interface `ifname`.
  PacketPort(int netns_fd, const std::string& ifname, FramePool& pool);

  int fd() const override { return fd_.get(); }
  size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) override;
  void send(Packet&& frame) override;
  void flush() override;
  const PortStats& stats() const override { return stats_; }
  // rx_dropped from PACKET_STATISTICS (which resets the kernel's count at each read).
  void update_kernel_counters() override;
  std::string describe() const override;

 private:
  UniqueFd fd_;
  std::string ifname_;
  FramePool& pool_;
  // Receive slots: a buffer per slot, refilled from the pool after its frame leaves.
  std::array<Payload, kBatch> rx_buf_;
  std::array<iovec, kBatch> rx_iov_{};
  std::array<mmsghdr, kBatch> rx_msg_{};
  // Control messages (SCM_TIMESTAMPNS), one buffer per slot.
  static constexpr size_t kControlBytes = 64;
  alignas(8) std::array<std::array<char, kControlBytes>, kBatch> rx_control_{};
  std::vector<Packet> tx_;
  std::array<iovec, kBatch> tx_iov_{};
  std::array<mmsghdr, kBatch> tx_msg_{};
  PortStats stats_;
};

}  // namespace nicsim::emu

#pragma once
// TapPort — frame I/O through a TAP device (IFF_TAP | IFF_NO_PI, no virtio-net header, so no
// offloads): one read() per frame from the host, one write() per frame to it. Kept as the
// alternative to PacketPort for measurement (docs/emu.md: frame I/O choice); select it with
// `nicsim emulate --io tap`.

#include <string>
#include <vector>

#include "nicsim/emu/frame_port.h"
#include "nicsim/emu/sys.h"

namespace nicsim::emu {

class TapPort final : public FramePort {
 public:
  // Takes an open, non-blocking TAP file descriptor (Topology creates it in the host's
  // namespace).
  TapPort(UniqueFd tap_fd, const std::string& ifname, FramePool& pool);

  int fd() const override { return fd_.get(); }
  size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) override;  // no timestamps
  void send(Packet&& frame) override;
  void flush() override;
  const PortStats& stats() const override { return stats_; }
  std::string describe() const override;

  // Creates a TAP device named `ifname` in the calling thread's network namespace and returns
  // its non-blocking fd. Throws SysError.
  static UniqueFd create_tap(const std::string& ifname);

 private:
  UniqueFd fd_;
  std::string ifname_;
  FramePool& pool_;
  Payload rx_buf_;
  std::vector<Packet> tx_;
  PortStats stats_;
};

}  // namespace nicsim::emu

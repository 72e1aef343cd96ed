#pragma once
// TapPort — frame I/O through a TAP device (IFF_TAP | IFF_NO_PI), one read()/write() per frame.
// Two modes (docs/emu.md: frame I/O choice):
//  - plain (`nicsim emulate --io tap`): no virtio-net header, so no offloads: every frame is
//    at most one MTU, kept as the alternative to PacketPort for measurement;
//  - super-frames (`--io tap-gso`): IFF_VNET_HDR + TUNSETOFFLOAD (TUN_F_CSUM | TUN_F_TSO4 |
//    TUN_F_TSO6), so the host's kernel hands over TCP super-packets of up to 64 KB with a
//    virtio-net header (vnet_header.h) as it would to a TSO NIC's driver. The port maps each to
//    one Packet with gso_segs/gso_size (the NIC model takes it whole or segments it, as its
//    `tso` says) and keeps the header with the buffer (FrameMeta). Toward the receiving host it
//    writes the super-frame back with its header when the receiving NIC does GRO (Linux's
//    default: napi_gro_receive), else the MTU frames segment_tcp() cuts. The models cut a
//    super-frame into segments without bytes but the last, which carries the whole buffer
//    (core/gso.h); those byte-less segments are counted here and not written: the receiving
//    kernel gets the super-frame when its last segment arrives, as GRO flushes it. If the
//    receiving NIC model dropped some of them, the host gets the segments that arrived (MTU
//    frames); if it dropped the last, the whole super-frame is lost (its bytes went with it).

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "nicsim/emu/frame_port.h"
#include "nicsim/emu/sys.h"

namespace nicsim::emu {

// Field `index` (0-based, counted after "name:") of interface `ifname`'s line in the text of
// /proc/net/dev: 0-7 receive (bytes packets errs drop fifo frame compressed multicast), 8-15
// transmit (bytes packets errs drop fifo colls carrier compressed). nullopt if the interface
// is absent or its line is malformed.
std::optional<uint64_t> proc_net_dev_field(const std::string& text, const std::string& ifname,
                                           size_t index);
inline constexpr size_t kTxDroppedField = 11;

class TapPort final : public FramePort {
 public:
  struct Params {
    bool vnet = false;  // super-frame mode (IFF_VNET_HDR); the fd must be created with it
    bool gro = true;    // vnet: deliver super-frames whole (else as MTU frames)
    // The host's network namespace, to read the TAP device's tx_dropped there (frames the
    // host sent while the device's queue was full); -1: rx_dropped is not counted.
    int netns_fd = -1;
  };
  // Takes an open, non-blocking TAP file descriptor (Topology creates it in the host's
  // namespace).
  TapPort(UniqueFd tap_fd, const std::string& ifname, FramePool& pool);
  TapPort(UniqueFd tap_fd, const std::string& ifname, FramePool& pool, Params params);

  int fd() const override { return fd_.get(); }
  size_t receive(Packet* out, int64_t* rx_realtime_ns, size_t max) override;  // no timestamps
  void send(Packet&& frame) override;
  void flush() override;
  const PortStats& stats() const override { return stats_; }
  // rx_dropped: the TAP device's tx_dropped in the host's /proc/net/dev (tun_net_xmit counts
  // a frame it drops on a full queue there).
  void update_kernel_counters() override;
  std::string describe() const override;

  // Creates a TAP device named `ifname` in the calling thread's network namespace and returns
  // its non-blocking fd; with `vnet`, with virtio-net headers and TCP segmentation offload
  // (the host's kernel then sends super-frames). Throws SysError.
  static UniqueFd create_tap(const std::string& ifname, bool vnet = false);
  // Largest super-frame the host's kernel hands over (GSO_LEGACY_MAX_SIZE 65536 + Ethernet).
  static constexpr size_t kSuperFrameBytes = 65536 + 64;

 private:
  size_t receive_one(Packet& out);
  void write_frame(const Packet& p);
  void write_bytes(const VnetHeader& h, const uint8_t* bytes, size_t len);
  // Writes only the segments of a super-frame that reached the host (`arrived`, by index).
  void write_arrived(const FrameMeta& m, const uint8_t* bytes, const std::vector<bool>& arrived);

  UniqueFd fd_;
  std::string ifname_;
  FramePool& pool_;
  Params params_;
  UniqueFd dev_stats_;  // /proc/net/dev of the host's namespace, opened there (or invalid)
  Payload rx_buf_;
  std::vector<Packet> tx_;
  // Byte-less segments delivered so far, by their super-frame's packet id: which indexes
  // arrived (a receiving NIC model may drop some). Entries whose last segment never comes
  // (dropped with the bytes) are forgotten when the table grows past kMaxPending.
  std::unordered_map<uint64_t, std::vector<bool>> arrived_;
  static constexpr size_t kMaxPending = 4096;
  PortStats stats_;
};

}  // namespace nicsim::emu

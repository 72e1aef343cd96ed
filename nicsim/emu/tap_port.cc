#include "nicsim/emu/tap_port.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "nicsim/emu/netns.h"

namespace nicsim::emu {

std::optional<uint64_t> proc_net_dev_field(const std::string& text, const std::string& ifname,
                                           size_t index) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) {
      continue;  // the two header lines
    }
    const size_t start = line.find_first_not_of(' ');
    if (line.compare(start, colon - start, ifname) != 0 || colon - start != ifname.size()) {
      continue;
    }
    std::istringstream fields(line.substr(colon + 1));
    uint64_t value = 0;
    for (size_t i = 0; i <= index; ++i) {
      if (!(fields >> value)) {
        return std::nullopt;
      }
    }
    return value;
  }
  return std::nullopt;
}

UniqueFd TapPort::create_tap(const std::string& ifname, bool vnet) {
  UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    throw_errno("open /dev/net/tun");
  }
  ifreq ifr{};
  ifr.ifr_flags = static_cast<short>(IFF_TAP | IFF_NO_PI | (vnet ? IFF_VNET_HDR : 0));
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) {
    throw_errno("TUNSETIFF " + ifname);
  }
  if (vnet) {
    int size = static_cast<int>(VnetHeader::kSize);
    if (::ioctl(fd.get(), TUNSETVNETHDRSZ, &size) != 0) {
      throw_errno("TUNSETVNETHDRSZ " + ifname);
    }
    // tun.c set_offload: TUN_F_CSUM gives the device NETIF_F_HW_CSUM, TSO4/6 NETIF_F_TSO/6.
    const unsigned long offload = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6;
    if (::ioctl(fd.get(), TUNSETOFFLOAD, offload) != 0) {
      throw_errno("TUNSETOFFLOAD " + ifname);
    }
  }
  return fd;
}

TapPort::TapPort(UniqueFd tap_fd, const std::string& ifname, FramePool& pool)
    : TapPort(std::move(tap_fd), ifname, pool, Params{}) {}

TapPort::TapPort(UniqueFd tap_fd, const std::string& ifname, FramePool& pool, Params params)
    : fd_(std::move(tap_fd)), ifname_(ifname), pool_(pool), params_(params), rx_buf_(pool.get()) {
  tx_.reserve(64);
  if (params_.netns_fd >= 0) {
    // /proc/thread-self/net is the namespace of the thread that opens it; the open file keeps
    // that namespace, so later reads see the host's devices from any thread.
    NetnsGuard in(params_.netns_fd);
    dev_stats_.reset(::open("/proc/thread-self/net/dev", O_RDONLY | O_CLOEXEC));
  }
}

void TapPort::update_kernel_counters() {
  if (!dev_stats_.valid()) {
    return;
  }
  std::string text;
  char buf[4096];
  ssize_t n = 0;
  while ((n = ::pread(dev_stats_.get(), buf, sizeof buf, static_cast<off_t>(text.size()))) > 0) {
    text.append(buf, static_cast<size_t>(n));
  }
  const std::optional<uint64_t> dropped = proc_net_dev_field(text, ifname_, kTxDroppedField);
  if (dropped) {
    stats_.rx_dropped = *dropped;  // the device's own count since it was created
  }
}

size_t TapPort::receive_one(Packet& out) {
  ++stats_.rx_calls;
  std::vector<uint8_t>& bytes = rx_buf_->bytes;
  if (!params_.vnet) {
    const ssize_t n = ::read(fd_.get(), bytes.data(), bytes.size());
    if (n <= 0) {
      return 0;  // EAGAIN: nothing more waiting
    }
    bytes.resize(static_cast<size_t>(n));
    out.len = static_cast<uint32_t>(n);
  } else {
    uint8_t hdr[VnetHeader::kSize];
    iovec iov[2] = {{hdr, sizeof hdr}, {bytes.data(), bytes.size()}};
    const ssize_t n = ::readv(fd_.get(), iov, 2);
    if (n <= static_cast<ssize_t>(sizeof hdr)) {
      return 0;
    }
    // The buffer keeps its full size (no zero-fill on reuse); FrameMeta says how much is frame.
    FrameMeta& m = FramePool::meta(*rx_buf_);
    m.vnet = true;
    m.frame_len = static_cast<uint32_t>(static_cast<size_t>(n) - sizeof hdr);
    m.header = VnetHeader::decode(hdr);
    const GsoShape s = gso_shape(m.header, std::span<const uint8_t>(bytes.data(), m.frame_len));
    out.len = s.wire_len;
    out.gso_segs = static_cast<uint16_t>(s.segs);
    out.gso_size = static_cast<uint16_t>(s.seg_len);
    if (s.segs > 1) {
      ++stats_.rx_super_frames;
      stats_.rx_super_segments += s.segs;
    }
  }
  out.payload = std::move(rx_buf_);
  rx_buf_ = pool_.get();
  ++stats_.rx_frames;
  stats_.rx_bytes += out.len;
  return 1;
}

size_t TapPort::receive(Packet* out, int64_t* rx_realtime_ns, size_t max) {
  size_t k = 0;
  while (k < max && receive_one(out[k]) == 1) {
    rx_realtime_ns[k] = 0;  // a character device has no receive timestamps
    ++k;
  }
  return k;
}

void TapPort::send(Packet&& frame) {
  tx_.push_back(std::move(frame));
  if (tx_.size() >= 64) {
    flush();
  }
}

void TapPort::write_bytes(const VnetHeader& h, const uint8_t* bytes, size_t len) {
  ++stats_.tx_calls;
  ssize_t n = 0;
  size_t want = len;
  if (!params_.vnet) {
    n = ::write(fd_.get(), bytes, len);
  } else {
    uint8_t hdr[VnetHeader::kSize];
    h.encode(hdr);
    iovec iov[2] = {{hdr, sizeof hdr}, {const_cast<uint8_t*>(bytes), len}};
    n = ::writev(fd_.get(), iov, 2);
    want += sizeof hdr;
  }
  if (n == static_cast<ssize_t>(want)) {
    ++stats_.tx_frames;
    stats_.tx_bytes += len;
  } else {
    ++stats_.tx_errors;
  }
}

void TapPort::write_frame(const Packet& p) {
  if (!p.payload) {
    // A segment the NIC model cut from a super-frame: its bytes travel with the last one.
    ++stats_.tx_merged_segments;
    if (params_.vnet) {
      if (arrived_.size() >= kMaxPending) {
        arrived_.clear();
      }
      std::vector<bool>& a = arrived_[p.id];
      if (a.size() <= p.gso_index) {
        a.resize(p.gso_index + 1u, false);
      }
      a[p.gso_index] = true;
    }
    return;
  }
  const FrameMeta& m = FramePool::meta(*p.payload);
  const uint8_t* bytes = p.payload->bytes.data();
  if (!params_.vnet || !m.vnet) {
    write_bytes(VnetHeader{}, bytes, std::min<size_t>(p.len, p.payload->bytes.size()));
    return;
  }
  const std::span<const uint8_t> frame(bytes, m.frame_len);
  if (!params_.gro && m.header.is_tcp_gso()) {
    const auto segments = segment_tcp(m.header, frame);
    if (!segments.empty()) {
      for (const std::vector<uint8_t>& s : segments) {
        write_bytes(VnetHeader{}, s.data(), s.size());  // checksums complete
      }
      return;
    }
  }
  const uint32_t segs = m.header.is_tcp_gso() ? gso_shape(m.header, frame).segs : 1;
  if (segs > 1) {
    // Every segment but the last (this one) must have arrived for GRO to hand the host the
    // whole super-frame; otherwise the host gets the segments that did, as MTU frames.
    std::vector<bool> arrived(segs, false);
    if (const auto it = arrived_.find(p.id); it != arrived_.end()) {
      for (size_t i = 0; i < it->second.size() && i < segs; ++i) {
        arrived[i] = it->second[i];
      }
      arrived_.erase(it);
    }
    arrived[segs - 1] = true;
    if (std::find(arrived.begin(), arrived.end(), false) != arrived.end()) {
      write_arrived(m, bytes, arrived);
      return;
    }
    ++stats_.tx_super_frames;
  }
  write_bytes(m.header, bytes, m.frame_len);
}

void TapPort::write_arrived(const FrameMeta& m, const uint8_t* bytes,
                            const std::vector<bool>& arrived) {
  ++stats_.tx_partial_super_frames;
  const auto segments = segment_tcp(m.header, std::span<const uint8_t>(bytes, m.frame_len));
  for (size_t i = 0; i < segments.size() && i < arrived.size(); ++i) {
    if (arrived[i]) {
      write_bytes(VnetHeader{}, segments[i].data(), segments[i].size());
    }
  }
}

void TapPort::flush() {
  for (const Packet& p : tx_) {
    write_frame(p);
  }
  tx_.clear();
}

std::string TapPort::describe() const {
  if (!params_.vnet) {
    return "TAP " + ifname_ + " (read/write per frame)";
  }
  return "TAP " + ifname_ + " (virtio-net header, TSO super-frames in, " +
         (params_.gro ? "super-frames out: GRO)" : "MTU frames out)");
}

}  // namespace nicsim::emu

#include "nicsim/emu/packet_port.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>

#include <algorithm>
#include <cstring>

#include "nicsim/emu/netns.h"

namespace nicsim::emu {
namespace {

constexpr int kSocketBuffer = 8 << 20;

// The SCM_TIMESTAMPNS value in a received message's control data, 0 if absent. (The CMSG_*
// macros use C casts; this walks the same layout: cmsghdr, data, each aligned to size_t.)
int64_t timestamp_ns(const msghdr& m) {
  constexpr size_t kAlign = sizeof(size_t);
  auto align = [](size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); };
  const auto* base = static_cast<const char*>(m.msg_control);
  size_t off = 0;
  while (off + sizeof(cmsghdr) <= m.msg_controllen) {
    cmsghdr h{};
    std::memcpy(&h, base + off, sizeof h);
    if (h.cmsg_len < sizeof(cmsghdr) || off + h.cmsg_len > m.msg_controllen) {
      break;
    }
    if (h.cmsg_level == SOL_SOCKET && h.cmsg_type == SCM_TIMESTAMPNS &&
        h.cmsg_len >= align(sizeof(cmsghdr)) + sizeof(timespec)) {
      timespec ts{};
      std::memcpy(&ts, base + off + align(sizeof(cmsghdr)), sizeof ts);
      return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
    off += align(h.cmsg_len);
  }
  return 0;
}

void set_int(int fd, int level, int opt, int value, const char* what) {
  if (::setsockopt(fd, level, opt, &value, sizeof value) != 0) {
    throw_errno(std::string("AF_PACKET setsockopt ") + what);
  }
}

}  // namespace

PacketPort::PacketPort(int netns_fd, const std::string& ifname, FramePool& pool)
    : ifname_(ifname), pool_(pool) {
  unsigned ifindex = 0;
  {
    NetnsGuard in(netns_fd);
    fd_.reset(::socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd_.valid()) {
      throw_errno("AF_PACKET socket");
    }
    ifindex = ::if_nametoindex(ifname.c_str());
    if (ifindex == 0) {
      throw_errno("AF_PACKET: interface " + ifname);
    }
  }
  set_int(fd_.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING");
  set_int(fd_.get(), SOL_PACKET, PACKET_QDISC_BYPASS, 1, "PACKET_QDISC_BYPASS");
  set_int(fd_.get(), SOL_SOCKET, SO_RCVBUFFORCE, kSocketBuffer, "SO_RCVBUFFORCE");
  set_int(fd_.get(), SOL_SOCKET, SO_SNDBUFFORCE, kSocketBuffer, "SO_SNDBUFFORCE");
  set_int(fd_.get(), SOL_SOCKET, SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS");
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = static_cast<int>(ifindex);
  if (::bind(fd_.get(), reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0) {
    throw_errno("AF_PACKET bind " + ifname);
  }
  for (size_t i = 0; i < kBatch; ++i) {
    rx_buf_[i] = pool_.get();
  }
  tx_.reserve(kBatch);
}

size_t PacketPort::receive(Packet* out, int64_t* rx_realtime_ns, size_t max) {
  const size_t n = std::min(max, kBatch);
  for (size_t i = 0; i < n; ++i) {
    rx_iov_[i].iov_base = rx_buf_[i]->bytes.data();
    rx_iov_[i].iov_len = rx_buf_[i]->bytes.size();
    rx_msg_[i].msg_hdr = msghdr{};
    rx_msg_[i].msg_hdr.msg_iov = &rx_iov_[i];
    rx_msg_[i].msg_hdr.msg_iovlen = 1;
    rx_msg_[i].msg_hdr.msg_control = rx_control_[i].data();
    rx_msg_[i].msg_hdr.msg_controllen = kControlBytes;
    rx_msg_[i].msg_len = 0;
  }
  ++stats_.rx_calls;
  const int got =
      ::recvmmsg(fd_.get(), rx_msg_.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
  if (got <= 0) {
    return 0;
  }
  size_t k = 0;
  for (size_t i = 0; i < static_cast<size_t>(got); ++i) {
    if ((rx_msg_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0) {
      ++stats_.rx_truncated;
      continue;  // keep the buffer in its slot
    }
    const uint32_t len = rx_msg_[i].msg_len;
    Packet& p = out[k++];
    rx_buf_[i]->bytes.resize(len);
    p.payload = std::move(rx_buf_[i]);
    p.len = len;
    rx_realtime_ns[k - 1] = timestamp_ns(rx_msg_[i].msg_hdr);
    rx_buf_[i] = pool_.get();
    ++stats_.rx_frames;
    stats_.rx_bytes += len;
  }
  return k;
}

void PacketPort::send(Packet&& frame) {
  tx_.push_back(std::move(frame));
  if (tx_.size() >= kBatch) {
    flush();
  }
}

void PacketPort::flush() {
  size_t done = 0;
  while (done < tx_.size()) {
    const size_t n = std::min(kBatch, tx_.size() - done);
    for (size_t i = 0; i < n; ++i) {
      Packet& p = tx_[done + i];
      tx_iov_[i].iov_base = p.payload->bytes.data();
      tx_iov_[i].iov_len = p.len;
      tx_msg_[i].msg_hdr = msghdr{};
      tx_msg_[i].msg_hdr.msg_iov = &tx_iov_[i];
      tx_msg_[i].msg_hdr.msg_iovlen = 1;
    }
    ++stats_.tx_calls;
    const int sent = ::sendmmsg(fd_.get(), tx_msg_.data(), static_cast<unsigned>(n), MSG_DONTWAIT);
    if (sent <= 0) {
      if (sent < 0 && errno == EINTR) {
        continue;
      }
      // The kernel refused the first frame (full backlog on the peer, ENOBUFS): drop it and
      // go on with the rest, as a NIC whose receiver is overrun would.
      ++stats_.tx_errors;
      ++done;
      continue;
    }
    for (size_t i = 0; i < static_cast<size_t>(sent); ++i) {
      ++stats_.tx_frames;
      stats_.tx_bytes += tx_[done + i].len;
    }
    done += static_cast<size_t>(sent);
  }
  tx_.clear();  // buffers return to the pool
}

void PacketPort::update_kernel_counters() {
  tpacket_stats st{};
  socklen_t len = sizeof st;
  if (::getsockopt(fd_.get(), SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) {
    stats_.rx_dropped += st.tp_drops;
  }
}

std::string PacketPort::describe() const {
  return "AF_PACKET on veth " + ifname_ + " (recvmmsg/sendmmsg, batch " + std::to_string(kBatch) +
         ")";
}

}  // namespace nicsim::emu

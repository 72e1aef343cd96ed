#include "nicsim/emu/frame_classifier.h"

#include <algorithm>
#include <cstring>

#include "nicsim/algo/pfifo_fast.h"

namespace nicsim::emu {
namespace {

constexpr size_t kEthHeader = 14;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeVlan = 0x8100;

uint16_t be16(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint16_t>((b[at] << 8) | b[at + 1]);
}

// A well-mixed 64-bit step (splitmix64 finaliser).
uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

uint64_t bytes_of(std::span<const uint8_t> b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v = (v << 8) | b[at + i];
  }
  return v;
}

}  // namespace

FrameInfo classify_frame(std::span<const uint8_t> f) {
  FrameInfo info;
  if (f.size() < kEthHeader) {
    info.flow_hash = static_cast<uint32_t>(mix(0, f.size()));
    return info;
  }
  size_t off = 12;
  uint16_t type = be16(f, off);
  if (type == kEtherTypeVlan && f.size() >= kEthHeader + 4) {
    off += 4;
    type = be16(f, off);
  }
  off += 2;
  const uint64_t macs = mix(bytes_of(f, 0, 6), bytes_of(f, 6, 6));
  if (type != kEtherTypeIpv4 || f.size() < off + 20) {
    info.flow_hash = static_cast<uint32_t>(mix(macs, type));
    return info;
  }
  const size_t ihl = static_cast<size_t>(f[off] & 0x0f) * 4;
  if ((f[off] >> 4) != 4 || ihl < 20 || f.size() < off + ihl) {
    info.flow_hash = static_cast<uint32_t>(mix(macs, type));
    return info;
  }
  info.ipv4 = true;
  info.ip_offset = off;
  info.tos = f[off + 1];
  info.protocol = f[off + 9];
  std::memcpy(&info.dst, f.data() + off + 16, sizeof info.dst);
  uint64_t h = mix(bytes_of(f, off + 12, 4), bytes_of(f, off + 16, 4));
  h = mix(h, info.protocol);
  // Ports of TCP/UDP (not in fragments after the first: fragment offset 0 only).
  const bool first_fragment = (be16(f, off + 6) & 0x1fff) == 0;
  if ((info.protocol == 6 || info.protocol == 17) && first_fragment && f.size() >= off + ihl + 4) {
    h = mix(h, bytes_of(f, off + ihl, 4));
  }
  info.flow_hash = static_cast<uint32_t>(h);
  return info;
}

algo::Rss::Flow rss_flow_of(std::span<const uint8_t> f) {
  const FrameInfo info = classify_frame(f);
  algo::Rss::Flow flow;
  if (!info.ipv4) {
    return flow;
  }
  const size_t off = info.ip_offset;
  flow.src_ip = static_cast<uint32_t>(bytes_of(f, off + 12, 4));
  flow.dst_ip = static_cast<uint32_t>(bytes_of(f, off + 16, 4));
  const size_t ihl = static_cast<size_t>(f[off] & 0x0f) * 4;
  const bool first_fragment = (be16(f, off + 6) & 0x1fff) == 0;
  if ((info.protocol == 6 || info.protocol == 17) && first_fragment && f.size() >= off + ihl + 4) {
    flow.proto = info.protocol == 6 ? algo::Rss::Proto::kTcp : algo::Rss::Proto::kUdp;
    flow.src_port = be16(f, off + ihl);
    flow.dst_port = be16(f, off + ihl + 2);
  }
  return flow;
}

std::optional<TcpGroBase> tcp_gro_base(std::span<const uint8_t> f, uint32_t segment_bytes) {
  const FrameInfo info = classify_frame(f);
  const size_t off = info.ip_offset;
  if (!info.ipv4 || info.protocol != 6 || (be16(f, off + 6) & 0x3fff) != 0) {
    return std::nullopt;  // not TCP, or a fragment (MF set or an offset): GRO passes it up alone
  }
  const size_t ihl = static_cast<size_t>(f[off] & 0x0f) * 4;
  const size_t tcp = off + ihl;
  if (f.size() < tcp + 20) {
    return std::nullopt;
  }
  const size_t doff = static_cast<size_t>(f[tcp + 12] >> 4) * 4;
  const size_t ip_len = be16(f, off + 2);
  if (doff < 20 || f.size() < tcp + doff || ip_len < ihl + doff) {
    return std::nullopt;
  }
  TcpGroBase b;
  algo::GroHeader& h = b.first;
  h.tcp = true;
  h.flow = mix(mix(bytes_of(f, off + 12, 4), bytes_of(f, off + 16, 4)), bytes_of(f, tcp, 4));
  h.seq = bytes_of(f, tcp + 4, 4);
  h.ack = bytes_of(f, tcp + 8, 4);
  h.headers = static_cast<uint32_t>(ihl + doff);
  h.flags = f[tcp + 13];
  h.tos = info.tos;
  // tcp_gro_receive flushes when the flag word (data offset, flags, window) or any option
  // byte differs: the options, then the data offset and window, each compared whole.
  uint64_t opts = 0;
  for (size_t i = tcp + 20; i < tcp + doff; ++i) {
    opts = mix(opts, f[i]);
  }
  h.options[0] = opts;
  h.options[1] = (bytes_of(f, tcp + 14, 2) << 8) | doff;
  // The IP total length bounds the payload (an MTU frame may carry Ethernet padding); a
  // super-frame's is the whole packet's, as the kernel built it, within the bytes read.
  const size_t end = std::min(f.size(), off + ip_len);
  b.total_payload = static_cast<uint32_t>(end > tcp + doff ? end - tcp - doff : 0);
  const size_t header_bytes = tcp + doff;  // Ethernet (+ VLAN), IP and TCP
  b.mss = segment_bytes > header_bytes ? static_cast<uint32_t>(segment_bytes - header_bytes) : 0;
  h.payload = b.mss > 0 ? std::min(b.mss, b.total_payload) : b.total_payload;
  return b;
}

uint32_t TcpGroBase::segments() const {
  if (mss == 0 || total_payload <= mss) {
    return 1;
  }
  return (total_payload + mss - 1) / mss;
}

algo::GroHeader gro_segment(const TcpGroBase& b, uint32_t index) {
  algo::GroHeader h = b.first;
  const uint32_t n = b.segments();
  if (n == 1) {
    return h;
  }
  index = std::min(index, n - 1);
  h.seq = (h.seq + static_cast<uint64_t>(index) * b.mss) & 0xffffffffu;
  h.payload = index + 1 < n ? b.mss : b.total_payload - b.mss * (n - 1);
  if (index + 1 < n) {
    h.flags &= static_cast<uint8_t>(~(algo::kGroFin | algo::kGroPsh));
  }
  if (index > 0) {
    h.flags &= static_cast<uint8_t>(~algo::kGroCwr);
  }
  return h;
}

FrameInfo classify(Packet& p) {
  if (!p.payload) {
    return FrameInfo{};
  }
  const size_t n = std::min<size_t>(p.len, p.payload->bytes.size());
  const FrameInfo info = classify_frame(std::span<const uint8_t>(p.payload->bytes.data(), n));
  p.tos = info.tos;
  p.priority = info.ipv4 ? algo::rt_tos2priority(info.tos) : 0;
  p.flow_hash = info.flow_hash;
  p.flow_id = info.flow_hash;
  return info;
}

bool write_ecn(Packet& p) {
  if (!p.payload) {
    return false;
  }
  std::vector<uint8_t>& b = p.payload->bytes;
  const size_t n = std::min<size_t>(p.len, b.size());
  const FrameInfo info = classify_frame(std::span<const uint8_t>(b.data(), n));
  if (!info.ipv4) {
    return false;
  }
  const size_t off = info.ip_offset;
  const uint8_t old_tos = b[off + 1];
  const uint8_t new_tos = static_cast<uint8_t>((old_tos & 0xfc) | (p.tos & 0x3));
  if (old_tos == new_tos) {
    return false;
  }
  // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), over the 16-bit word holding version/IHL + TOS.
  const uint16_t old_word = static_cast<uint16_t>((b[off] << 8) | old_tos);
  const uint16_t new_word = static_cast<uint16_t>((b[off] << 8) | new_tos);
  uint32_t sum = static_cast<uint16_t>(~be16(std::span<const uint8_t>(b.data(), n), off + 10));
  sum += static_cast<uint16_t>(~old_word);
  sum += new_word;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  const uint16_t check = static_cast<uint16_t>(~sum);
  b[off + 1] = new_tos;
  b[off + 10] = static_cast<uint8_t>(check >> 8);
  b[off + 11] = static_cast<uint8_t>(check & 0xff);
  return true;
}

}  // namespace nicsim::emu

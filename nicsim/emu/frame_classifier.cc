#include "nicsim/emu/frame_classifier.h"

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

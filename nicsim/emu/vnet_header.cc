#include "nicsim/emu/vnet_header.h"

#include <algorithm>

namespace nicsim::emu {
namespace {

uint16_t le16(const uint8_t* b) { return static_cast<uint16_t>(b[0] | (b[1] << 8)); }
void put_le16(uint8_t* b, uint16_t v) {
  b[0] = static_cast<uint8_t>(v);
  b[1] = static_cast<uint8_t>(v >> 8);
}
uint16_t be16(const uint8_t* b) { return static_cast<uint16_t>((b[0] << 8) | b[1]); }
void put_be16(uint8_t* b, uint16_t v) {
  b[0] = static_cast<uint8_t>(v >> 8);
  b[1] = static_cast<uint8_t>(v);
}
uint32_t be32(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}
void put_be32(uint8_t* b, uint32_t v) {
  put_be16(b, static_cast<uint16_t>(v >> 16));
  put_be16(b + 2, static_cast<uint16_t>(v));
}

// One's-complement sum of 16-bit big-endian words (RFC 1071), not yet folded.
uint64_t sum16(const uint8_t* b, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    s += be16(b + i);
  }
  if (n % 2 != 0) {
    s += static_cast<uint64_t>(b[n - 1]) << 8;
  }
  return s;
}
uint16_t fold(uint64_t s) {
  while (s >> 16) {
    s = (s & 0xffff) + (s >> 16);
  }
  return static_cast<uint16_t>(~s);
}

// Offset of the IP header after Ethernet (+ one 802.1Q tag), with its version; 0 if neither.
size_t ip_offset(std::span<const uint8_t> f, int* version) {
  size_t off = 12;
  if (f.size() >= 18 && be16(f.data() + off) == 0x8100) {
    off += 4;
  }
  if (f.size() < off + 2) {
    return 0;
  }
  const uint16_t type = be16(f.data() + off);
  *version = type == 0x0800 ? 4 : (type == 0x86dd ? 6 : 0);
  return *version == 0 ? 0 : off + 2;
}

}  // namespace

VnetHeader VnetHeader::decode(const uint8_t* b) {
  VnetHeader h;
  h.flags = b[0];
  h.gso_type = b[1];
  h.hdr_len = le16(b + 2);
  h.gso_size = le16(b + 4);
  h.csum_start = le16(b + 6);
  h.csum_offset = le16(b + 8);
  return h;
}

void VnetHeader::encode(uint8_t* b) const {
  b[0] = flags;
  b[1] = gso_type;
  put_le16(b + 2, hdr_len);
  put_le16(b + 4, gso_size);
  put_le16(b + 6, csum_start);
  put_le16(b + 8, csum_offset);
}

GsoShape gso_shape(const VnetHeader& h, std::span<const uint8_t> frame) {
  GsoShape s;
  s.wire_len = static_cast<uint32_t>(frame.size());
  // The TCP header starts at csum_start (the kernel always sets NEEDS_CSUM with TCP GSO).
  if (!h.is_tcp_gso() || h.gso_size == 0 || (h.flags & VnetHeader::kNeedsCsum) == 0 ||
      size_t{h.csum_start} + 20 > frame.size()) {
    return s;
  }
  const uint32_t doff = (frame[h.csum_start + 12u] >> 4) * 4u;
  const uint32_t header = h.csum_start + doff;
  if (doff < 20 || header > frame.size()) {
    return s;
  }
  const auto payload = static_cast<uint32_t>(frame.size()) - header;
  const uint32_t segs = (payload + h.gso_size - 1) / h.gso_size;
  if (segs <= 1 || header + h.gso_size > 0xffffu || segs > 0xffffu) {
    return s;
  }
  s.segs = segs;
  s.header_len = header;
  s.seg_len = header + h.gso_size;
  s.wire_len = segs * header + payload;
  return s;
}

std::vector<std::vector<uint8_t>> segment_tcp(const VnetHeader& h, std::span<const uint8_t> frame) {
  const GsoShape s = gso_shape(h, frame);
  int version = 0;
  const size_t ip = ip_offset(frame, &version);
  if (s.segs <= 1 || ip == 0 || ip >= h.csum_start) {
    return {};
  }
  const size_t tcp = h.csum_start;
  const size_t header = s.header_len;
  const size_t mss = h.gso_size;
  const uint8_t* src = frame.data();
  const uint16_t ip_id = version == 4 ? be16(src + ip + 4) : 0;
  const uint32_t seq = be32(src + tcp + 4);
  const uint8_t flags = src[tcp + 13];
  std::vector<std::vector<uint8_t>> out;
  out.reserve(s.segs);
  for (uint32_t i = 0; i < s.segs; ++i) {
    const size_t from = header + i * mss;
    const size_t n = std::min(mss, frame.size() - from);
    std::vector<uint8_t> f(header + n);
    std::copy_n(src, header, f.begin());
    std::copy_n(src + from, n, f.begin() + static_cast<std::ptrdiff_t>(header));
    uint8_t* b = f.data();
    const auto l4_len = static_cast<uint32_t>(f.size() - tcp);
    uint64_t pseudo = 0;
    if (version == 4) {
      put_be16(b + ip + 2, static_cast<uint16_t>(f.size() - ip));
      put_be16(b + ip + 4, static_cast<uint16_t>(ip_id + i));
      b[ip + 10] = b[ip + 11] = 0;
      put_be16(b + ip + 10, fold(sum16(b + ip, tcp - ip)));
      pseudo = sum16(b + ip + 12, 8) + 6 + l4_len;  // addresses, protocol, TCP length
    } else {
      put_be16(b + ip + 4, static_cast<uint16_t>(f.size() - ip - 40));
      pseudo = sum16(b + ip + 8, 32) + 6 + l4_len;  // no extension headers (csum_start says)
    }
    put_be32(b + tcp + 4, static_cast<uint32_t>(seq + i * mss));
    uint8_t fl = flags;
    if (i + 1 < s.segs) {
      fl &= static_cast<uint8_t>(~0x09);  // FIN, PSH: the last segment only
    }
    if (i > 0) {
      fl &= static_cast<uint8_t>(~0x80);  // CWR: the first segment only
    }
    b[tcp + 13] = fl;
    b[tcp + 16] = b[tcp + 17] = 0;
    put_be16(b + tcp + 16, fold(pseudo + sum16(b + tcp, l4_len)));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace nicsim::emu

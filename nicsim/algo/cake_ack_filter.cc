#include "nicsim/algo/cake_ack_filter.h"

#include <algorithm>
#include <cstring>

namespace nicsim::algo {
namespace {

// TCP option kinds (RFC 9293 §3.1, RFC 2018, RFC 7323, RFC 2385).
constexpr uint8_t kOptEol = 0;
constexpr uint8_t kOptNop = 1;
constexpr uint8_t kOptSack = 5;
constexpr uint8_t kOptTimestamp = 8;
constexpr uint8_t kOptMd5 = 19;
constexpr uint8_t kTimestampLen = 10;

uint16_t be16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// Walks the options as tcp_parse_options does (EOL ends, NOP is one byte, a bad length ends).
void read_options(const uint8_t* ptr, int length, CakeTcpHeader& out) {
  while (length > 0) {
    const uint8_t opcode = *ptr++;
    if (opcode == kOptEol) {
      break;
    }
    if (opcode == kOptNop) {
      --length;
      continue;
    }
    if (length < 2) {
      break;
    }
    const int opsize = *ptr++;
    if (opsize < 2 || opsize > length) {
      break;
    }
    if (opcode == kOptSack) {
      if (opsize % 8 != 2) {
        out.unsafe_options = true;
      }
      const int blocks = std::min((opsize - 2) / 8, 4);
      for (int i = 0; i < blocks; ++i) {
        out.sack[i] = {be32(ptr + 8 * i), be32(ptr + 8 * i + 4)};
      }
      out.sack_count = static_cast<uint8_t>(blocks);
    } else if (opcode == kOptTimestamp) {
      if (opsize == kTimestampLen) {
        out.has_timestamp = true;
        out.tsval = be32(ptr);
        out.tsecr = be32(ptr + 4);
      } else {
        out.unsafe_options = true;
      }
    } else if (opcode != kOptMd5) {
      out.unsafe_options = true;  // MSS, WS, SACK_PERM, Fast Open, experimental, unknown
    }
    ptr += opsize - 2;
    length -= opsize;
  }
}

}  // namespace

bool CakeFrameTcpReader::read(const Packet& p, CakeTcpHeader& out) const {
  if (!p.payload) {
    return false;
  }
  const std::vector<uint8_t>& f = p.payload->bytes;
  constexpr size_t kEth = 14;
  if (f.size() < kEth + 20) {
    return false;
  }
  const uint16_t ethertype = be16(&f[12]);
  size_t off = kEth;
  uint32_t ip_payload = 0;
  out = CakeTcpHeader{};
  if (ethertype == 0x0800 && (f[off] >> 4) == 4) {
    const size_t ihl = (f[off] & 0x0F) * 4u;
    const uint8_t proto = f[off + 9];
    if (ihl < 20 || f.size() < off + ihl) {
      return false;
    }
    if (proto == 41) {  // 6in4, "a common way to get v6 connectivity in the home"
      off += ihl;
    } else if (proto == 6) {
      out.ip_version = 4;
      std::memcpy(out.saddr.data(), &f[off + 12], 4);
      std::memcpy(out.daddr.data(), &f[off + 16], 4);
      ip_payload = be16(&f[off + 2]) - static_cast<uint32_t>(ihl);
      off += ihl;
      goto tcp;
    } else {
      return false;
    }
  } else if (ethertype != 0x86DD) {
    return false;
  }
  if (f.size() < off + 40 || (f[off] >> 4) != 6 || f[off + 6] != 6) {
    return false;  // IPv6 with a TCP next header only (no extension headers, as the kernel)
  }
  out.ip_version = 6;
  std::memcpy(out.saddr.data(), &f[off + 8], 16);
  std::memcpy(out.daddr.data(), &f[off + 24], 16);
  ip_payload = be16(&f[off + 4]);
  off += 40;
tcp:
  if (f.size() < off + 20) {
    return false;
  }
  const uint32_t doff = (f[off + 12] >> 4) * 4u;
  if (doff < 20 || f.size() < off + doff) {
    return false;
  }
  out.sport = be16(&f[off]);
  out.dport = be16(&f[off + 2]);
  out.ack_seq = be32(&f[off + 8]);
  out.flags = static_cast<uint16_t>((f[off + 12] & 0x0F) << 8 | f[off + 13]);
  out.payload_len = ip_payload >= doff ? ip_payload - doff : 0;
  read_options(&f[off + 20], static_cast<int>(doff) - 20, out);
  return true;
}

const CakeFrameTcpReader& CakeFrameTcpReader::instance() {
  static const CakeFrameTcpReader reader;
  return reader;
}

bool cake_same_connection(const CakeTcpHeader& a, const CakeTcpHeader& b) {
  return a.ip_version == b.ip_version && a.sport == b.sport && a.dport == b.dport &&
         a.saddr == b.saddr && a.daddr == b.daddr;
}

bool cake_ack_may_drop(const CakeTcpHeader& check, uint32_t tsval_new, uint32_t tsecr_new) {
  // Reserved bits, NS, URG, PSH, RST, SYN, FIN must be clear and ACK set; ECE/CWR are
  // compared separately by the filter.
  if ((check.flags & 0x0F3F) != kTcpAck || check.unsafe_options) {
    return false;
  }
  // Only ACKs whose timestamps are not newer than the triggering one's.
  return !check.has_timestamp ||
         (!tcp_seq_after(check.tsval, tsval_new) && !tcp_seq_after(check.tsecr, tsecr_new));
}

int cake_sack_compare(const CakeTcpHeader& a, const CakeTcpHeader& b) {
  if (a.sack_count > 0 && b.sack_count == 0) {
    return -1;
  }
  if (b.sack_count > 0 && a.sack_count == 0) {
    return 1;
  }
  if (a.sack_count == 0) {
    return 0;
  }
  uint32_t bytes_a = 0;
  uint32_t bytes_b = 0;
  for (int i = 0; i < b.sack_count; ++i) {
    bytes_b += b.sack[i].end - b.sack[i].start;
  }
  for (int i = 0; i < a.sack_count; ++i) {
    const auto& sa = a.sack[i];
    if (tcp_seq_before(sa.start, a.ack_seq)) {
      return -1;  // D-SACK: always "greater", so never dropped
    }
    bytes_a += sa.end - sa.start;
    const bool covered = std::any_of(b.sack.begin(), b.sack.begin() + b.sack_count, [&](auto sb) {
      return !tcp_seq_after(sb.start, sa.start) && !tcp_seq_before(sb.end, sa.end);
    });
    if (!covered) {
      return -1;
    }
  }
  return bytes_b > bytes_a ? 1 : 0;
}

}  // namespace nicsim::algo

#include "nicsim/live/probe.h"

namespace nicsim::live {
namespace {

void put(std::span<uint8_t> out, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out[at + i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
  }
}
uint64_t get(std::span<const uint8_t> in, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    v = (v << 8) | in[at + i];
  }
  return v;
}

}  // namespace

void encode_probe(const ProbePacket& p, std::span<uint8_t> out) {
  put(out, 0, kProbeMagic, 4);
  put(out, 4, p.probe, 4);
  put(out, 8, p.seq, 8);
  put(out, 16, static_cast<uint64_t>(p.client_send_ns), 8);
  put(out, 24, static_cast<uint64_t>(p.server_recv_ns), 8);
  put(out, 32, static_cast<uint64_t>(p.server_send_ns), 8);
  put(out, 40, p.token, 8);
}

std::optional<ProbePacket> decode_probe(std::span<const uint8_t> in) {
  if (in.size() < kProbeHeader || in.size() > kMaxProbeSize || get(in, 0, 4) != kProbeMagic) {
    return std::nullopt;
  }
  ProbePacket p;
  p.probe = static_cast<uint32_t>(get(in, 4, 4));
  p.seq = get(in, 8, 8);
  p.client_send_ns = static_cast<int64_t>(get(in, 16, 8));
  p.server_recv_ns = static_cast<int64_t>(get(in, 24, 8));
  p.server_send_ns = static_cast<int64_t>(get(in, 32, 8));
  p.token = get(in, 40, 8);
  return p;
}

void stamp_probe(std::span<uint8_t> datagram, int64_t recv_ns, int64_t send_ns) {
  put(datagram, 24, static_cast<uint64_t>(recv_ns), 8);
  put(datagram, 32, static_cast<uint64_t>(send_ns), 8);
}

void encode_flood(const FloodPacket& p, std::span<uint8_t> out) {
  put(out, 0, kFloodMagic, 4);
  put(out, 4, p.seq, 4);
  put(out, 8, static_cast<uint64_t>(p.send_ns), 8);
  put(out, 16, p.token, 8);
}

std::optional<FloodPacket> decode_flood(std::span<const uint8_t> in) {
  if (in.size() < kFloodHeader || in.size() > kMaxProbeSize || get(in, 0, 4) != kFloodMagic) {
    return std::nullopt;
  }
  FloodPacket p;
  p.seq = static_cast<uint32_t>(get(in, 4, 4));
  p.send_ns = static_cast<int64_t>(get(in, 8, 8));
  p.token = get(in, 16, 8);
  return p;
}

}  // namespace nicsim::live

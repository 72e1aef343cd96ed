#pragma once
// The UDP latency probe datagram (isochronous probes, irtt-style): the client stamps its send
// time, the server's echo reflector stamps its receive and send times and returns the datagram.
// Layout (big-endian), kProbeHeader bytes, padded with zeros to the configured size:
//
//   u32 magic "NSPR" | u32 probe index | u64 sequence | i64 client send ns
//   | i64 server receive ns | i64 server send ns | u64 session token
//
// Times are CLOCK_MONOTONIC nanoseconds of the host that wrote them. Under `nicsim emulate`
// both hosts are namespaces of one machine and share that clock, so the one-way delays
// (server receive - client send, client receive - server send) are exact. Across machines the
// clocks are unrelated: only the round trip minus the server's own holding time is meaningful
// (irtt's "RTT excluding server processing"), and one-way delays are not reported.
//
// Untrusted input on both ends: decode_probe() checks length and magic (protocol_fuzz.cc).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace nicsim::live {

inline constexpr size_t kProbeHeader = 48;
inline constexpr size_t kMaxProbeSize = 1472;        // 1500 MTU - 20 IP - 8 UDP
inline constexpr uint32_t kProbeMagic = 0x4e535052;  // "NSPR"

struct ProbePacket {
  uint32_t probe = 0;
  uint64_t seq = 0;
  int64_t client_send_ns = 0;
  int64_t server_recv_ns = 0;
  int64_t server_send_ns = 0;
  uint64_t token = 0;
  bool operator==(const ProbePacket&) const = default;
};

// Writes the header into out[0..kProbeHeader) (out.size() >= kProbeHeader).
void encode_probe(const ProbePacket& p, std::span<uint8_t> out);
// nullopt unless the datagram is kProbeHeader..kMaxProbeSize bytes with the magic.
std::optional<ProbePacket> decode_probe(std::span<const uint8_t> in);
// Overwrites the two server stamps in place (the reflector's only change to a datagram).
void stamp_probe(std::span<uint8_t> datagram, int64_t recv_ns, int64_t send_ns);

// A udp_flood / voip datagram (the live engine's and the server's udp sinks and sources):
//
//   u32 magic "NSFL" | u32 sequence (0, 1, ... per flood) | i64 sender's send ns | u64 token
//
// padded with zeros to the flood's size (>= kFloodHeader: the scenario's 32 B minimum leaves
// room). The token is the flood's own (random per run) so that a receiver counts only its
// flood's datagrams. Times are the sender's CLOCK_MONOTONIC.
inline constexpr size_t kFloodHeader = 24;
inline constexpr uint32_t kFloodMagic = 0x4e53464c;  // "NSFL"

struct FloodPacket {
  uint32_t seq = 0;
  int64_t send_ns = 0;
  uint64_t token = 0;
  bool operator==(const FloodPacket&) const = default;
};

// Writes the header into out[0..kFloodHeader) (out.size() >= kFloodHeader).
void encode_flood(const FloodPacket& p, std::span<uint8_t> out);
// nullopt unless the datagram is kFloodHeader..kMaxProbeSize bytes with the magic.
std::optional<FloodPacket> decode_flood(std::span<const uint8_t> in);

}  // namespace nicsim::live

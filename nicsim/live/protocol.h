#pragma once
// The `nicsim server` control protocol (version 1): what a nicsim client asks a nicsim server
// for, and what the server sends back. Pure codec: no sockets, no clocks; the bytes it decodes
// come from the network and are untrusted (protocol_fuzz.cc fuzzes every decoder here).
//
// Every TCP connection carries ONE flow and starts with one Request frame from the client:
//
//   frame  = u32 length (big-endian, = 2 + payload bytes) | u8 version (1) | u8 type | payload
//
//   type 1 Request (client -> server), payload 11 + n bytes, or 13 + n with the echo port:
//            u8 kind (1 sink, 2 source, 3 udp echo, 4 udp sink, 5 udp source, 6 transfer)
//            | u8 dscp (0..63) | u32 duration_ms
//            | u32 stats_interval_ms | u8 n | n bytes congestion control name ([a-z0-9_], n <= 15)
//            [| u16 udp_port: an echo client's UDP source port, the only one answered]
//            kinds 4 and 5 (25 + n bytes): | u16 udp_port | u64 rate_bps | u32 size
//            kind 6 (19 + n bytes): | u64 bytes (the response's size)
//   type 2 Accept  (server -> client): u16 udp_port (the echo reflector's port, 0 for TCP)
//   type 3 Reject  (server -> client): u8 n | n bytes reason (printable ASCII), then close
//   type 4 Stats   (server -> client): u64 elapsed_us | u64 bytes | u64 bytes_acked
//                  | u32 retransmits | u32 cwnd_bytes | u32 rtt_us        (44 bytes)
//   type 5 Data    (server -> client, sources only): up to kMaxDataPayload bytes, ignored
//   type 6 End     (server -> client): same payload as Stats, the final numbers; then close
//   type 7 Challenge (server -> client, first, only when the server has a shared secret):
//                  16 bytes nonce (random per connection)
//   type 8 Auth    (client -> server, answers the Challenge, before the Request): 32 bytes
//                  HMAC-SHA256(secret, "nicsim-auth-1" | nonce)   (auth.h)
//   type 9 Arrivals (server -> client, udp sinks only): u8 n (1..kMaxArrivals)
//                  | n x (u32 seq | i64 server receive ns): datagrams that reached the sink
//
// Kinds 4-6 and type 9 were added to version 1 (issue 12): a server without them answers a
// request of kind 4-6 with Reject("request.kind: ..."), which the client turns into "the server
// is older than this client" (an old client never sends them, so old peers keep working).
//
// Authentication (optional, like irtt's HMAC): a server started with a shared secret speaks
// first with a Challenge and serves only a connection whose Auth proves the secret; the nonce
// makes a recorded Auth useless on another connection. Without a secret the server sends no
// Challenge and rejects an Auth. Nothing is encrypted: the secret decides who may use the
// server, not who may read the traffic.
//
// Kinds, seen from the client:
//   sink    the client uploads: after the Request it writes raw bytes (unframed) until it shuts
//           down its side; the server reads and counts them and answers with Accept, Stats
//           every stats interval (bytes = bytes it received) and End when the client's stream
//           ends or the duration (+ grace) is over.
//   source  the client downloads: the server answers Accept, then a framed stream of Data
//           frames for `duration`, with Stats frames (its TCP_INFO: bytes acked, total
//           retransmits, cwnd, smoothed RTT) every stats interval, then End, then closes.
//   udp sink   (udp_flood / voip from the client) the server opens a UDP socket (Accept carries
//           its port) and counts the flood datagrams (probe.h FloodPacket) from the client's IP
//           address and the request's udp_port only, reporting each one's sequence number and
//           receive time in Arrivals frames; when the client shuts its side down (or duration
//           + grace pass) it sends the Arrivals still pending, then End (bytes = datagrams
//           received), then closes.
//   udp source (udp_flood / voip to the client) the server sends FloodPackets of `size` bytes
//           at `rate_bps` (datagram k at k x size x 8 / rate after the request) to the client's
//           IP address and the request's udp_port (nowhere else) for `duration`, then End
//           (bytes = datagrams sent). Accept carries the server's UDP source port.
//   transfer the server answers with `bytes` of Data frames (on a socket with the request's
//           cc), then End (bytes = payload written), then closes: one request/response of
//           [[traffic.transfers]].
//   echo    the server opens a UDP reflector (Accept carries its port) that echoes probe
//           datagrams (probe.h layout) from the client's IP address and registered UDP port
//           only (the request's udp_port; a request without one registers the source port of
//           the first valid probe), stamping its receive and send times, until the TCP
//           connection closes or duration + grace pass.
//
// Bounds a decoder enforces (anything else is rejected with a reason naming the field):
// control frames (every type but Data) are at most kMaxControlFrame bytes on the wire, Data
// frames at most kMaxDataPayload bytes of payload; a length field outside these limits is
// rejected as soon as its 4 bytes are seen, before any payload is buffered.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace nicsim::live {

inline constexpr uint8_t kProtocolVersion = 1;
inline constexpr size_t kFrameHeader = 6;        // u32 length + u8 version + u8 type
inline constexpr size_t kMaxControlFrame = 256;  // bytes on the wire, header included
inline constexpr size_t kMaxDataPayload = 128 * 1024;
inline constexpr size_t kMaxCcName = 15;  // TCP_CA_NAME_MAX (16) minus the NUL
inline constexpr size_t kMaxReason = 200;
inline constexpr uint16_t kDefaultPort = 5270;
inline constexpr size_t kAcceptFrame = kFrameHeader + 2;  // bytes on the wire
inline constexpr size_t kStatsFrame = kFrameHeader + 36;  // Stats and End

enum class MessageType : uint8_t {
  kRequest = 1,
  kAccept = 2,
  kReject = 3,
  kStats = 4,
  kData = 5,
  kEnd = 6,
  kChallenge = 7,
  kAuth = 8,
  kArrivals = 9,
};

enum class FlowKind : uint8_t {
  kSink = 1,
  kSource = 2,
  kEcho = 3,
  kUdpSink = 4,
  kUdpSource = 5,
  kTransfer = 6,
};
// Bounds of the new kinds' fields (request_problem): a flood's rate, a transfer's size.
inline constexpr uint64_t kMaxFloodRateBps = 100'000'000'000;     // the scenario's own bound
inline constexpr uint64_t kMaxTransferBytes = uint64_t{1} << 30;  // 1 GiB, as scenarios allow
const char* to_string(FlowKind k);

struct Request {
  FlowKind kind = FlowKind::kSink;
  uint8_t dscp = 0;
  uint32_t duration_ms = 0;
  uint32_t stats_interval_ms = 1000;
  std::string cc;         // "" = the server's default
  uint16_t udp_port = 0;  // echo: the client's UDP source port (0 = not registered);
                          // udp sink: the client's source port; udp source: its destination
  uint64_t rate_bps = 0;  // udp sink / source: UDP payload bits per second
  uint32_t size = 0;      // udp sink / source: UDP payload bytes per datagram
  uint64_t bytes = 0;     // transfer: the response's payload bytes
  bool operator==(const Request&) const = default;
};
struct Accept {
  uint16_t udp_port = 0;
  bool operator==(const Accept&) const = default;
};
struct Reject {
  std::string reason;
  bool operator==(const Reject&) const = default;
};
// The server's view of a flow at `elapsed_us` after it accepted the request.
struct Stats {
  uint64_t elapsed_us = 0;
  uint64_t bytes = 0;        // sink: bytes received; source: bytes written by the server
  uint64_t bytes_acked = 0;  // source: tcpi_bytes_acked; sink: 0
  uint32_t retransmits = 0;  // source: tcpi_total_retrans; sink: 0
  uint32_t cwnd_bytes = 0;   // source: snd_cwnd x snd_mss; sink: 0
  uint32_t rtt_us = 0;       // source: smoothed RTT; sink: 0
  bool operator==(const Stats&) const = default;
};
struct End {
  Stats stats;
  bool operator==(const End&) const = default;
};
struct Data {
  size_t bytes = 0;  // payload length (the payload itself is ignored)
  bool operator==(const Data&) const = default;
};
inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256
struct Challenge {
  std::array<uint8_t, kNonceBytes> nonce{};
  bool operator==(const Challenge&) const = default;
};
struct Auth {
  std::array<uint8_t, kMacBytes> mac{};
  bool operator==(const Auth&) const = default;
};
inline constexpr size_t kChallengeFrame = kFrameHeader + kNonceBytes;  // bytes on the wire
// One flood datagram that reached a udp sink: its sequence number and the sink's receive time
// (its kernel's SO_TIMESTAMPNS on CLOCK_MONOTONIC).
struct Arrival {
  uint32_t seq = 0;
  int64_t recv_ns = 0;
  bool operator==(const Arrival&) const = default;
};
// 20 arrivals of 12 bytes: a frame of 247 bytes, under kMaxControlFrame.
inline constexpr size_t kMaxArrivals = 20;
struct Arrivals {
  std::vector<Arrival> arrivals;  // 1..kMaxArrivals
  bool operator==(const Arrivals&) const = default;
};
inline size_t arrivals_frame(size_t n) { return kFrameHeader + 1 + 12 * n; }  // on the wire
using Message = std::variant<Request, Accept, Reject, Stats, Data, End, Challenge, Auth, Arrivals>;

// A decode result: the message, or the reason it was rejected ("length 70000 exceeds ...").
struct Decoded {
  std::optional<Message> message;
  std::string error;
};

// Whether `name` is an acceptable congestion control name: 1..15 of [a-z0-9_].
bool valid_cc_name(const std::string& name);
// Validates the fields of a request (kind, dscp, cc, stats interval >= 10 ms, duration > 0;
// floods: udp_port, rate 1..kMaxFloodRateBps, size kFloodHeader..kMaxProbeSize; transfers:
// bytes 1..kMaxTransferBytes).
std::string request_problem(const Request& r);

// Encoders append a whole frame. Data frames: only the header (the caller writes `bytes` of
// payload after it).
void encode(const Request& m, std::vector<uint8_t>& out);
void encode(const Accept& m, std::vector<uint8_t>& out);
void encode(const Reject& m, std::vector<uint8_t>& out);  // reason truncated to kMaxReason
void encode(const Stats& m, std::vector<uint8_t>& out);
void encode(const End& m, std::vector<uint8_t>& out);
void encode(const Challenge& m, std::vector<uint8_t>& out);
void encode(const Auth& m, std::vector<uint8_t>& out);
void encode(const Arrivals& m, std::vector<uint8_t>& out);  // at most kMaxArrivals of them
void encode_data_header(size_t payload_bytes, std::vector<uint8_t>& out);

// Decodes one complete frame body (version, type, payload: the bytes after the length field).
Decoded decode_body(std::span<const uint8_t> body);

// Splits a byte stream into frames with bounded memory. Feed what was read; next() returns the
// decoded frames one by one. A Data frame's payload is skipped without being buffered. After
// an error the reader stays failed (the connection must be closed).
class FrameReader {
 public:
  // `allow_data`: whether Data frames may appear (only on a source's stream).
  explicit FrameReader(bool allow_data) : allow_data_(allow_data) {}
  // Consumes up to all of `bytes`; returns how many were consumed (fewer when a complete
  // control frame is ready and must be taken with next() first, or on error).
  size_t feed(std::span<const uint8_t> bytes);
  // The next complete frame, if any.
  std::optional<Message> next();
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  // Bytes of a frame begun but not complete (a peer that stops mid-frame).
  bool mid_frame() const { return have_ > 0 || skip_ > 0; }

 private:
  bool allow_data_;
  uint8_t buf_[kMaxControlFrame] = {};
  size_t have_ = 0;  // bytes of the current control frame (or header) in buf_
  size_t need_ = 4;  // bytes the current frame needs in buf_ (4 until the length is known)
  size_t skip_ = 0;  // Data payload bytes still to skip
  std::optional<Message> ready_;
  std::string error_;
};

}  // namespace nicsim::live

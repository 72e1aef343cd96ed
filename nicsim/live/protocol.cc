#include "nicsim/live/protocol.h"

#include <algorithm>
#include <cstring>

#include "nicsim/live/probe.h"

namespace nicsim::live {
namespace {

void put8(std::vector<uint8_t>& o, uint8_t v) { o.push_back(v); }
void put16(std::vector<uint8_t>& o, uint16_t v) {
  o.push_back(static_cast<uint8_t>(v >> 8));
  o.push_back(static_cast<uint8_t>(v));
}
void put32(std::vector<uint8_t>& o, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) {
    o.push_back(static_cast<uint8_t>(v >> s));
  }
}
void put64(std::vector<uint8_t>& o, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) {
    o.push_back(static_cast<uint8_t>(v >> s));
  }
}

// Frame header with a placeholder length; finish() fills it in.
size_t begin(std::vector<uint8_t>& o, MessageType t) {
  const size_t at = o.size();
  put32(o, 0);
  put8(o, kProtocolVersion);
  put8(o, static_cast<uint8_t>(t));
  return at;
}
void finish(std::vector<uint8_t>& o, size_t at) {
  const uint32_t len = static_cast<uint32_t>(o.size() - at - 4);
  for (int i = 0; i < 4; ++i) {
    o[at + static_cast<size_t>(i)] = static_cast<uint8_t>(len >> (24 - 8 * i));
  }
}

// Bounds-checked big-endian reader over a payload.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> b) : b_(b) {}
  size_t left() const { return b_.size() - at_; }
  bool u8(uint8_t& v) {
    if (left() < 1) return false;
    v = b_[at_++];
    return true;
  }
  bool u16(uint16_t& v) {
    uint64_t x = 0;
    if (!be(2, x)) return false;
    v = static_cast<uint16_t>(x);
    return true;
  }
  bool u32(uint32_t& v) {
    uint64_t x = 0;
    if (!be(4, x)) return false;
    v = static_cast<uint32_t>(x);
    return true;
  }
  bool u64(uint64_t& v) { return be(8, v); }
  bool bytes(size_t n, std::string& s) {
    if (left() < n) return false;
    s.assign(reinterpret_cast<const char*>(b_.data() + at_), n);
    at_ += n;
    return true;
  }

 private:
  bool be(size_t n, uint64_t& v) {
    if (left() < n) return false;
    v = 0;
    for (size_t i = 0; i < n; ++i) {
      v = (v << 8) | b_[at_ + i];
    }
    at_ += n;
    return true;
  }
  std::span<const uint8_t> b_;
  size_t at_ = 0;
};

constexpr size_t kStatsPayload = 8 + 8 + 8 + 4 + 4 + 4;

void put_stats(std::vector<uint8_t>& o, const Stats& s) {
  put64(o, s.elapsed_us);
  put64(o, s.bytes);
  put64(o, s.bytes_acked);
  put32(o, s.retransmits);
  put32(o, s.cwnd_bytes);
  put32(o, s.rtt_us);
}

Decoded fail(std::string why) { return Decoded{std::nullopt, std::move(why)}; }

Decoded decode_stats(Cursor& c, bool end) {
  if (c.left() != kStatsPayload) {
    return fail(std::string(end ? "end" : "stats") + ": payload is " + std::to_string(c.left()) +
                " bytes, expected " + std::to_string(kStatsPayload));
  }
  Stats s;
  c.u64(s.elapsed_us);
  c.u64(s.bytes);
  c.u64(s.bytes_acked);
  c.u32(s.retransmits);
  c.u32(s.cwnd_bytes);
  c.u32(s.rtt_us);
  if (end) {
    return Decoded{Message(End{s}), {}};
  }
  return Decoded{Message(s), {}};
}

bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= 0x20 && ch < 0x7f; });
}

}  // namespace

const char* to_string(FlowKind k) {
  switch (k) {
    case FlowKind::kSink:
      return "sink";
    case FlowKind::kSource:
      return "source";
    case FlowKind::kEcho:
      return "echo";
    case FlowKind::kUdpSink:
      return "udp sink";
    case FlowKind::kUdpSource:
      return "udp source";
    case FlowKind::kTransfer:
      return "transfer";
  }
  return "?";
}

bool valid_cc_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxCcName) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
}

bool is_flood(FlowKind k) { return k == FlowKind::kUdpSink || k == FlowKind::kUdpSource; }

std::string request_problem(const Request& r) {
  const int kind = static_cast<int>(r.kind);
  if (kind < 1 || kind > 6) {
    return "request.kind: " + std::to_string(kind) +
           " is not 1 (sink), 2 (source), 3 (echo), 4 (udp sink), 5 (udp source) or 6 (transfer)";
  }
  if (is_flood(r.kind)) {
    if (r.udp_port == 0) {
      return "request.udp_port: a udp sink or source needs the client's UDP port";
    }
    if (r.rate_bps == 0 || r.rate_bps > kMaxFloodRateBps) {
      return "request.rate_bps: " + std::to_string(r.rate_bps) + " is not in 1.." +
             std::to_string(kMaxFloodRateBps);
    }
    if (r.size < kFloodHeader || r.size > kMaxProbeSize) {
      return "request.size: " + std::to_string(r.size) + " is not in " +
             std::to_string(kFloodHeader) + ".." + std::to_string(kMaxProbeSize);
    }
  }
  if (r.kind == FlowKind::kTransfer && (r.bytes == 0 || r.bytes > kMaxTransferBytes)) {
    return "request.bytes: " + std::to_string(r.bytes) + " is not in 1.." +
           std::to_string(kMaxTransferBytes);
  }
  if (r.dscp > 63) {
    return "request.dscp: " + std::to_string(r.dscp) + " is not in 0..63";
  }
  if (r.duration_ms == 0) {
    return "request.duration_ms: must be positive";
  }
  if (r.stats_interval_ms < 10) {
    return "request.stats_interval_ms: " + std::to_string(r.stats_interval_ms) + " is below 10 ms";
  }
  if (!r.cc.empty() && !valid_cc_name(r.cc)) {
    return "request.cc: not 1..15 characters of [a-z0-9_]";
  }
  return "";
}

void encode(const Request& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kRequest);
  put8(out, static_cast<uint8_t>(m.kind));
  put8(out, m.dscp);
  put32(out, m.duration_ms);
  put32(out, m.stats_interval_ms);
  const size_t n = std::min(m.cc.size(), kMaxCcName);
  put8(out, static_cast<uint8_t>(n));
  out.insert(out.end(), m.cc.begin(), m.cc.begin() + static_cast<std::ptrdiff_t>(n));
  if (is_flood(m.kind)) {
    put16(out, m.udp_port);
    put64(out, m.rate_bps);
    put32(out, m.size);
  } else if (m.kind == FlowKind::kTransfer) {
    put64(out, m.bytes);
  } else if (m.udp_port != 0) {
    put16(out, m.udp_port);
  }
  finish(out, at);
}

void encode(const Accept& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kAccept);
  put16(out, m.udp_port);
  finish(out, at);
}

void encode(const Reject& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kReject);
  std::string reason = m.reason.substr(0, kMaxReason);
  for (char& ch : reason) {
    if (ch < 0x20 || ch >= 0x7f) {
      ch = '?';
    }
  }
  put8(out, static_cast<uint8_t>(reason.size()));
  out.insert(out.end(), reason.begin(), reason.end());
  finish(out, at);
}

void encode(const Stats& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kStats);
  put_stats(out, m);
  finish(out, at);
}

void encode(const End& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kEnd);
  put_stats(out, m.stats);
  finish(out, at);
}

void encode(const Challenge& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kChallenge);
  out.insert(out.end(), m.nonce.begin(), m.nonce.end());
  finish(out, at);
}

void encode(const Auth& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kAuth);
  out.insert(out.end(), m.mac.begin(), m.mac.end());
  finish(out, at);
}

void encode(const Arrivals& m, std::vector<uint8_t>& out) {
  const size_t at = begin(out, MessageType::kArrivals);
  const size_t n = std::min(m.arrivals.size(), kMaxArrivals);
  put8(out, static_cast<uint8_t>(n));
  for (size_t i = 0; i < n; ++i) {
    put32(out, m.arrivals[i].seq);
    put64(out, static_cast<uint64_t>(m.arrivals[i].recv_ns));
  }
  finish(out, at);
}

void encode_data_header(size_t payload_bytes, std::vector<uint8_t>& out) {
  put32(out, static_cast<uint32_t>(payload_bytes + 2));
  put8(out, kProtocolVersion);
  put8(out, static_cast<uint8_t>(MessageType::kData));
}

Decoded decode_body(std::span<const uint8_t> body) {
  Cursor c(body);
  uint8_t version = 0;
  uint8_t type = 0;
  if (!c.u8(version) || !c.u8(type)) {
    return fail("frame: shorter than its version and type bytes");
  }
  if (version != kProtocolVersion) {
    return fail("frame.version: " + std::to_string(version) + ", this nicsim speaks " +
                std::to_string(kProtocolVersion));
  }
  switch (static_cast<MessageType>(type)) {
    case MessageType::kRequest: {
      Request r;
      uint8_t kind = 0;
      uint8_t n = 0;
      if (!c.u8(kind) || !c.u8(r.dscp) || !c.u32(r.duration_ms) || !c.u32(r.stats_interval_ms) ||
          !c.u8(n)) {
        return fail("request: payload too short");
      }
      if (n > kMaxCcName) {
        return fail("request.cc: length " + std::to_string(n) + " exceeds " +
                    std::to_string(kMaxCcName));
      }
      if (!c.bytes(n, r.cc)) {
        return fail("request.cc: payload ends inside the name");
      }
      r.kind = static_cast<FlowKind>(kind);
      if (is_flood(r.kind)) {
        if (!c.u16(r.udp_port) || !c.u64(r.rate_bps) || !c.u32(r.size)) {
          return fail("request: a udp sink or source needs udp_port, rate_bps and size");
        }
      } else if (r.kind == FlowKind::kTransfer) {
        if (!c.u64(r.bytes)) {
          return fail("request: a transfer needs its bytes");
        }
      } else if (c.left() == 2) {
        c.u16(r.udp_port);
      }
      if (c.left() != 0) {
        return fail("request: " + std::to_string(c.left()) + " trailing bytes");
      }
      if (std::string p = request_problem(r); !p.empty()) {
        return fail(p);
      }
      return Decoded{Message(r), {}};
    }
    case MessageType::kAccept: {
      Accept a;
      if (!c.u16(a.udp_port) || c.left() != 0) {
        return fail("accept: payload is not 2 bytes");
      }
      return Decoded{Message(a), {}};
    }
    case MessageType::kReject: {
      Reject r;
      uint8_t n = 0;
      if (!c.u8(n) || !c.bytes(n, r.reason) || c.left() != 0) {
        return fail("reject: reason length does not match the payload");
      }
      if (!printable(r.reason)) {
        return fail("reject.reason: not printable ASCII");
      }
      return Decoded{Message(r), {}};
    }
    case MessageType::kStats:
      return decode_stats(c, false);
    case MessageType::kEnd:
      return decode_stats(c, true);
    case MessageType::kChallenge: {
      Challenge m;
      if (c.left() != kNonceBytes) {
        return fail("challenge: payload is not " + std::to_string(kNonceBytes) + " bytes");
      }
      std::string b;
      c.bytes(kNonceBytes, b);
      std::memcpy(m.nonce.data(), b.data(), kNonceBytes);
      return Decoded{Message(m), {}};
    }
    case MessageType::kAuth: {
      Auth m;
      if (c.left() != kMacBytes) {
        return fail("auth: payload is not " + std::to_string(kMacBytes) + " bytes");
      }
      std::string b;
      c.bytes(kMacBytes, b);
      std::memcpy(m.mac.data(), b.data(), kMacBytes);
      return Decoded{Message(m), {}};
    }
    case MessageType::kArrivals: {
      uint8_t n = 0;
      if (!c.u8(n) || n == 0 || n > kMaxArrivals || c.left() != 12 * size_t{n}) {
        return fail("arrivals: count does not match the payload (1.." +
                    std::to_string(kMaxArrivals) + " of 12 bytes)");
      }
      Arrivals m;
      m.arrivals.resize(n);
      for (Arrival& a : m.arrivals) {
        uint64_t t = 0;
        c.u32(a.seq);
        c.u64(t);
        a.recv_ns = static_cast<int64_t>(t);
      }
      return Decoded{Message(std::move(m)), {}};
    }
    case MessageType::kData:
      if (c.left() > kMaxDataPayload) {
        return fail("data: payload exceeds " + std::to_string(kMaxDataPayload) + " bytes");
      }
      return Decoded{Message(Data{c.left()}), {}};
  }
  return fail("frame.type: unknown type " + std::to_string(type));
}

size_t FrameReader::feed(std::span<const uint8_t> bytes) {
  size_t used = 0;
  while (used < bytes.size() && error_.empty() && !ready_) {
    if (skip_ > 0) {
      const size_t n = std::min(skip_, bytes.size() - used);
      skip_ -= n;
      used += n;
      continue;
    }
    const size_t n = std::min(need_ - have_, bytes.size() - used);
    std::memcpy(buf_ + have_, bytes.data() + used, n);
    have_ += n;
    used += n;
    if (have_ < need_) {
      continue;
    }
    const uint32_t len = (uint32_t{buf_[0]} << 24) | (uint32_t{buf_[1]} << 16) |
                         (uint32_t{buf_[2]} << 8) | uint32_t{buf_[3]};
    if (need_ == 4) {
      // Length known: reject impossible sizes before buffering anything more.
      if (len < 2) {
        error_ = "frame.length: " + std::to_string(len) + " is shorter than version + type";
      } else if (len - 2 > kMaxDataPayload) {
        error_ = "frame.length: " + std::to_string(len) + " exceeds the largest frame (" +
                 std::to_string(kMaxDataPayload + 2) + ")";
      } else if (!allow_data_ && len + 4 > kMaxControlFrame) {
        error_ = "frame.length: " + std::to_string(len) + " exceeds the largest control frame (" +
                 std::to_string(kMaxControlFrame - 4) + ")";
      } else {
        need_ = kFrameHeader;
      }
      continue;
    }
    if (need_ == kFrameHeader) {
      const uint8_t type = buf_[5];
      if (type == static_cast<uint8_t>(MessageType::kData)) {
        if (!allow_data_) {
          error_ = "frame.type: data frame where none may appear";
          continue;
        }
        if (buf_[4] != kProtocolVersion) {
          error_ = "frame.version: " + std::to_string(buf_[4]) + ", this nicsim speaks " +
                   std::to_string(kProtocolVersion);
          continue;
        }
        ready_ = Message(Data{len - 2});
        skip_ = len - 2;
        have_ = 0;
        need_ = 4;
        continue;
      }
      if (len + 4 > kMaxControlFrame) {
        error_ = "frame.length: " + std::to_string(len) + " exceeds the largest control frame (" +
                 std::to_string(kMaxControlFrame - 4) + ")";
        continue;
      }
      need_ = 4 + len;
      if (have_ < need_) {
        continue;
      }
    }
    Decoded d = decode_body(std::span<const uint8_t>(buf_ + 4, have_ - 4));
    if (!d.message) {
      error_ = d.error;
    } else {
      ready_ = std::move(d.message);
    }
    have_ = 0;
    need_ = 4;
  }
  return used;
}

std::optional<Message> FrameReader::next() {
  std::optional<Message> m = std::move(ready_);
  ready_.reset();
  return m;
}

}  // namespace nicsim::live

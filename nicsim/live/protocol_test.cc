// The live control protocol and probe codecs: exact bytes, round trips, and the reason each
// malformed input is rejected with.
#include "nicsim/live/protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nicsim/live/probe.h"

namespace nicsim::live {
namespace {

std::vector<Message> feed_all(FrameReader& r, const std::vector<uint8_t>& bytes, size_t chunk = 1) {
  std::vector<Message> got;
  size_t at = 0;
  while (at < bytes.size() && !r.failed()) {
    const size_t n = std::min(chunk, bytes.size() - at);
    size_t used = 0;
    while (used < n && !r.failed()) {
      used += r.feed(std::span<const uint8_t>(bytes.data() + at + used, n - used));
      while (auto m = r.next()) {
        got.push_back(*m);
      }
    }
    at += n;
  }
  return got;
}

TEST(LiveProtocol, RequestBytesAreExact) {
  std::vector<uint8_t> out;
  encode(Request{FlowKind::kSource, 46, 5000, 200, "reno"}, out);
  const std::vector<uint8_t> want = {0, 0,  0, 17,  1,    1,     // length 17, v1, request
                                     2, 46, 0, 0,   0x13, 0x88,  // source, EF, 5000 ms
                                     0, 0,  0, 200, 4,    'r',  'e', 'n', 'o'};
  EXPECT_EQ(out, want);
}

TEST(LiveProtocol, EveryMessageRoundTripsInOneByteReads) {
  std::vector<uint8_t> bytes;
  const Request req{FlowKind::kEcho, 8, 1, 10, ""};
  const Stats st{1, 2, 3, 4, 5, 6};
  encode(req, bytes);
  encode(Accept{4242}, bytes);
  encode(st, bytes);
  encode_data_header(3, bytes);
  bytes.insert(bytes.end(), {9, 9, 9});
  encode(End{st}, bytes);
  encode(Reject{"no"}, bytes);
  Challenge ch;
  ch.nonce.fill(7);
  Auth au;
  au.mac.fill(0xa5);
  encode(ch, bytes);
  encode(au, bytes);
  Request echo{FlowKind::kEcho, 0, 5, 10, "", 40000};  // with the registered UDP port
  encode(echo, bytes);
  FrameReader r(true);
  const std::vector<Message> got = feed_all(r, bytes);
  ASSERT_FALSE(r.failed()) << r.error();
  ASSERT_EQ(got.size(), 9u);
  EXPECT_EQ(std::get<Challenge>(got[6]), ch);
  EXPECT_EQ(std::get<Auth>(got[7]), au);
  EXPECT_EQ(std::get<Request>(got[8]), echo);
  EXPECT_EQ(std::get<Request>(got[0]), req);
  EXPECT_EQ(std::get<Accept>(got[1]).udp_port, 4242);
  EXPECT_EQ(std::get<Stats>(got[2]), st);
  EXPECT_EQ(std::get<Data>(got[3]).bytes, 3u);
  EXPECT_EQ(std::get<End>(got[4]).stats, st);
  EXPECT_EQ(std::get<Reject>(got[5]).reason, "no");
}

TEST(LiveProtocol, OversizeLengthIsRejectedBeforeBuffering) {
  FrameReader r(false);
  const std::vector<uint8_t> bytes = {0x7f, 0xff, 0xff, 0xff};
  EXPECT_EQ(r.feed(bytes), 4u);
  ASSERT_TRUE(r.failed());
  EXPECT_EQ(r.error(), "frame.length: 2147483647 exceeds the largest frame (131074)");
  FrameReader control(false);
  control.feed(std::vector<uint8_t>{0, 0, 1, 0});
  EXPECT_EQ(control.error(), "frame.length: 256 exceeds the largest control frame (252)");
  FrameReader tiny(false);
  tiny.feed(std::vector<uint8_t>{0, 0, 0, 1});
  EXPECT_EQ(tiny.error(), "frame.length: 1 is shorter than version + type");
}

TEST(LiveProtocol, MalformedFramesNameTheField) {
  auto error_of = [](std::vector<uint8_t> bytes, bool allow_data = false) {
    FrameReader r(allow_data);
    feed_all(r, bytes, bytes.size());
    return r.error();
  };
  EXPECT_EQ(error_of({0, 0, 0, 2, 2, 1}), "frame.version: 2, this nicsim speaks 1");
  EXPECT_EQ(error_of({0, 0, 0, 2, 1, 99}), "frame.type: unknown type 99");
  EXPECT_EQ(error_of({0, 0, 0, 2, 1, 5}), "frame.type: data frame where none may appear");
  EXPECT_EQ(error_of({0, 0, 0, 3, 1, 1, 1}), "request: payload too short");
  // kind 7
  EXPECT_EQ(error_of({0, 0, 0, 13, 1, 1, 7, 0, 0, 0, 0, 1, 0, 0, 0, 10, 0}),
            "request.kind: 7 is not 1 (sink), 2 (source), 3 (echo), 4 (udp sink), 5 (udp source) "
            "or 6 (transfer)");
  EXPECT_EQ(error_of({0, 0, 0, 13, 1, 1, 1, 64, 0, 0, 0, 1, 0, 0, 0, 10, 0}),
            "request.dscp: 64 is not in 0..63");
  EXPECT_EQ(error_of({0, 0, 0, 13, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0}),
            "request.duration_ms: must be positive");
  EXPECT_EQ(error_of({0, 0, 0, 13, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 9, 0}),
            "request.stats_interval_ms: 9 is below 10 ms");
  EXPECT_EQ(error_of({0, 0, 0, 14, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 10, 1, 'X'}),
            "request.cc: not 1..15 characters of [a-z0-9_]");
  EXPECT_EQ(error_of({0, 0, 0, 14, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 10, 16, 'x'}),
            "request.cc: length 16 exceeds 15");
  EXPECT_EQ(error_of({0, 0, 0, 14, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 10, 0, 0}),
            "request: 1 trailing bytes");
  EXPECT_EQ(error_of({0, 0, 0, 4, 1, 3, 1, 0x01}), "reject.reason: not printable ASCII");
  EXPECT_EQ(error_of({0, 0, 0, 3, 1, 4, 0}), "stats: payload is 1 bytes, expected 36");
}

TEST(LiveProtocol, ReaderStaysFailed) {
  FrameReader r(false);
  r.feed(std::vector<uint8_t>{0, 0, 0, 2, 9, 1});
  ASSERT_TRUE(r.failed());
  std::vector<uint8_t> good;
  encode(Accept{1}, good);
  EXPECT_EQ(r.feed(good), 0u);
  EXPECT_FALSE(r.next().has_value());
}

TEST(LiveProtocol, RejectReasonIsTruncatedAndMadePrintable) {
  std::vector<uint8_t> out;
  encode(Reject{std::string(300, 'x') + "\n"}, out);
  FrameReader r(false);
  const auto got = feed_all(r, out, out.size());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(std::get<Reject>(got[0]).reason, std::string(kMaxReason, 'x'));
}

TEST(LiveProbe, RoundTripAndChecks) {
  ProbePacket p{3, 77, -5, 1'000'000'007, 1'000'000'100, 0xfeedface};
  std::vector<uint8_t> d(64, 0);
  encode_probe(p, d);
  EXPECT_EQ(decode_probe(d), p);
  stamp_probe(d, 11, 22);
  const auto q = decode_probe(d);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->server_recv_ns, 11);
  EXPECT_EQ(q->server_send_ns, 22);
  EXPECT_EQ(q->seq, 77u);
  EXPECT_FALSE(decode_probe(std::span<const uint8_t>(d).first(kProbeHeader - 1)));
  d[0] ^= 1;
  EXPECT_FALSE(decode_probe(d));
  std::vector<uint8_t> big(kMaxProbeSize + 1, 0);
  encode_probe(p, big);
  EXPECT_FALSE(decode_probe(big));
}

}  // namespace
}  // namespace nicsim::live

// Issue 12's kinds (udp sink, udp source, transfer) and the Arrivals frame: exact bytes, round
// trips in one-byte reads, and each bad field's reason.
namespace nicsim::live {
namespace {

Request flood_request(FlowKind kind) {
  Request r;
  r.kind = kind;
  r.dscp = 46;
  r.duration_ms = 4000;
  r.stats_interval_ms = 1000;
  r.udp_port = 40000;
  r.rate_bps = 68'800;
  r.size = 172;
  return r;
}

TEST(LiveProtocol, FloodRequestBytesAreExact) {
  std::vector<uint8_t> out;
  encode(flood_request(FlowKind::kUdpSink), out);
  const std::vector<uint8_t> want = {0,    0,    0, 27,   1,   1,     // length 27, v1, request
                                     4,    46,   0, 0,    0xf, 0xa0,  // udp sink, EF, 4000 ms
                                     0,    0,    3, 0xe8, 0,          // 1000 ms, no cc
                                     0x9c, 0x40,                      // udp port 40000
                                     0,    0,    0, 0,    0,   1,    0x0c, 0xc0,  // 68800 bit/s
                                     0,    0,    0, 172};                         // 172 B
  EXPECT_EQ(out, want);
}

TEST(LiveProtocol, NewKindsAndArrivalsRoundTrip) {
  std::vector<uint8_t> bytes;
  const Request sink = flood_request(FlowKind::kUdpSink);
  const Request source = flood_request(FlowKind::kUdpSource);
  Request xfer;
  xfer.kind = FlowKind::kTransfer;
  xfer.duration_ms = 1;
  xfer.cc = "cubic";
  xfer.bytes = 1'000'000;
  Arrivals arr;
  for (uint32_t i = 0; i < kMaxArrivals; ++i) {
    arr.arrivals.push_back(Arrival{i * 7, -5 + int64_t{i} * 1'000'000'000'000});
  }
  encode(sink, bytes);
  encode(source, bytes);
  encode(xfer, bytes);
  encode(arr, bytes);
  FrameReader r(false);
  const std::vector<Message> got = feed_all(r, bytes);
  ASSERT_FALSE(r.failed()) << r.error();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(std::get<Request>(got[0]), sink);
  EXPECT_EQ(std::get<Request>(got[1]), source);
  EXPECT_EQ(std::get<Request>(got[2]), xfer);
  EXPECT_EQ(std::get<Arrivals>(got[3]), arr);
  std::vector<uint8_t> one;
  encode(arr, one);
  EXPECT_EQ(one.size(), arrivals_frame(kMaxArrivals));
  EXPECT_LE(one.size(), kMaxControlFrame);
}

std::string body_error(const std::vector<uint8_t>& frame) {
  return decode_body(std::span<const uint8_t>(frame.data() + 4, frame.size() - 4)).error;
}

TEST(LiveProtocol, BadFloodAndTransferFieldsNameTheField) {
  const auto error_of = [](Request r) {
    std::vector<uint8_t> f;
    encode(r, f);
    return body_error(f);
  };
  Request r = flood_request(FlowKind::kUdpSource);
  r.rate_bps = 0;
  EXPECT_NE(error_of(r).find("request.rate_bps: 0"), std::string::npos) << error_of(r);
  r = flood_request(FlowKind::kUdpSink);
  r.size = kFloodHeader - 1;
  EXPECT_NE(error_of(r).find("request.size: 23 is not in 24..1472"), std::string::npos);
  r.size = kMaxProbeSize + 1;
  EXPECT_NE(error_of(r).find("request.size"), std::string::npos);
  r = flood_request(FlowKind::kUdpSink);
  r.udp_port = 0;
  EXPECT_NE(error_of(r).find("request.udp_port"), std::string::npos);
  Request x;
  x.kind = FlowKind::kTransfer;
  x.duration_ms = 1;
  EXPECT_NE(error_of(x).find("request.bytes: 0"), std::string::npos);
  x.bytes = kMaxTransferBytes + 1;
  EXPECT_NE(error_of(x).find("request.bytes"), std::string::npos);
  // A udp sink request cut after its cc (an encoder that does not know the fields).
  std::vector<uint8_t> cut;
  encode(Request{FlowKind::kEcho, 0, 5, 10, ""}, cut);
  cut[6] = 4;  // kind: udp sink, without port, rate and size
  EXPECT_EQ(body_error(cut), "request: a udp sink or source needs udp_port, rate_bps and size");
  cut[6] = 7;
  EXPECT_NE(body_error(cut).find("request.kind: 7 is not"), std::string::npos);
  // Arrivals: 0 entries, more than kMaxArrivals, a count that does not match.
  const std::vector<uint8_t> empty = {0, 0, 0, 3, 1, 9, 0};
  EXPECT_NE(body_error(empty).find("arrivals: count"), std::string::npos);
  std::vector<uint8_t> two = {0, 0, 0, 3 + 12, 1, 9, 2};
  two.resize(two.size() + 12, 0);
  EXPECT_NE(body_error(two).find("arrivals: count"), std::string::npos);
  Arrivals many;
  many.arrivals.resize(kMaxArrivals + 5);
  std::vector<uint8_t> capped;
  encode(many, capped);  // the encoder writes at most kMaxArrivals
  EXPECT_EQ(capped.size(), arrivals_frame(kMaxArrivals));
  // On a stream: a frame too long for Arrivals is cut off as every oversized control frame.
  std::vector<uint8_t> big = {0, 0, 1, 0, 1, 9};
  FrameReader fr(false);
  fr.feed(big);
  EXPECT_TRUE(fr.failed());
}

TEST(LiveFlood, PacketRoundTripAndChecks) {
  uint8_t buf[32] = {};
  const FloodPacket p{7, -123456789, 0xfeedfacecafebeefull};
  encode_flood(p, std::span<uint8_t>(buf, sizeof buf));
  EXPECT_EQ(decode_flood(std::span<const uint8_t>(buf, sizeof buf)), p);
  EXPECT_EQ(decode_flood(std::span<const uint8_t>(buf, kFloodHeader)), p);
  EXPECT_FALSE(decode_flood(std::span<const uint8_t>(buf, kFloodHeader - 1)));
  buf[0] ^= 1;
  EXPECT_FALSE(decode_flood(std::span<const uint8_t>(buf, sizeof buf)));
  // A probe is not a flood datagram and the reverse.
  uint8_t probe[kProbeHeader] = {};
  encode_probe(ProbePacket{}, std::span<uint8_t>(probe, sizeof probe));
  EXPECT_FALSE(decode_flood(std::span<const uint8_t>(probe, sizeof probe)));
}

}  // namespace
}  // namespace nicsim::live

// Virtio-net header mapping and TCP segmentation (vnet_header.h) on crafted frames, and
// TapPort's super-frame mode over a SOCK_SEQPACKET socket pair standing in for the TAP fd
// (same read/readv/writev semantics: one message per frame). No privileges needed.
#include "nicsim/emu/vnet_header.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "nicsim/core/gso.h"
#include "nicsim/emu/frame_classifier.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/tap_port.h"

namespace nicsim::emu {
namespace {

constexpr size_t kEth = 14;
constexpr size_t kIp = 20;
constexpr size_t kTcp = 32;  // 20 + 12 bytes of options (timestamps), as Linux sends
constexpr size_t kHeader = kEth + kIp + kTcp;

uint16_t be16(const uint8_t* b) { return static_cast<uint16_t>((b[0] << 8) | b[1]); }
uint32_t be32(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

// An IPv4 TCP frame of `payload` bytes: seq 1000, IP id 7, the given TCP flags.
std::vector<uint8_t> tcp_frame(size_t payload, uint8_t flags) {
  std::vector<uint8_t> f(kHeader + payload);
  f[12] = 0x08;  // IPv4
  uint8_t* ip = f.data() + kEth;
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>((f.size() - kEth) >> 8);
  ip[3] = static_cast<uint8_t>(f.size() - kEth);
  ip[5] = 7;
  ip[8] = 64;
  ip[9] = 6;
  ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
  uint8_t* tcp = ip + kIp;
  tcp[1] = 80, tcp[3] = 90;
  tcp[6] = 0x03, tcp[7] = 0xe8;  // seq 1000
  tcp[12] = static_cast<uint8_t>((kTcp / 4) << 4);
  tcp[13] = flags;
  for (size_t i = kHeader; i < f.size(); ++i) {
    f[i] = static_cast<uint8_t>(i * 7);
  }
  return f;
}

VnetHeader tso(uint16_t mss) {
  VnetHeader h;
  h.flags = VnetHeader::kNeedsCsum;
  h.gso_type = VnetHeader::kGsoTcpV4;
  h.gso_size = mss;
  h.csum_start = kEth + kIp;
  h.csum_offset = 16;
  h.hdr_len = kHeader;
  return h;
}

// RFC 1071: the one's-complement sum of a correct header/segment with its checksum is 0xffff.
uint16_t sum(const uint8_t* b, size_t n, uint32_t start = 0) {
  uint64_t s = start;
  for (size_t i = 0; i + 1 < n; i += 2) s += be16(b + i);
  if (n % 2) s += uint32_t{b[n - 1]} << 8;
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(s);
}

TEST(VnetHeader, DecodesAndEncodesLittleEndian) {
  const uint8_t raw[VnetHeader::kSize] = {1, 1, 66, 0, 0xa8, 0x05, 34, 0, 16, 0};
  const VnetHeader h = VnetHeader::decode(raw);
  EXPECT_EQ(h.flags, VnetHeader::kNeedsCsum);
  EXPECT_TRUE(h.is_tcp_gso());
  EXPECT_EQ(h.hdr_len, 66);
  EXPECT_EQ(h.gso_size, 1448);
  EXPECT_EQ(h.csum_start, 34);
  EXPECT_EQ(h.csum_offset, 16);
  uint8_t back[VnetHeader::kSize] = {};
  h.encode(back);
  EXPECT_EQ(std::vector<uint8_t>(back, back + 10), std::vector<uint8_t>(raw, raw + 10));
}

TEST(VnetHeader, ShapeCountsEverySegmentsHeaders) {
  const auto f = tcp_frame(3000, 0x18);
  const GsoShape s = gso_shape(tso(1448), f);
  EXPECT_EQ(s.segs, 3u);  // 1448 + 1448 + 104
  EXPECT_EQ(s.header_len, kHeader);
  EXPECT_EQ(s.seg_len, kHeader + 1448);
  EXPECT_EQ(s.wire_len, 3 * kHeader + 3000);
  // core/gso.h then cuts exactly the wire frames.
  EXPECT_EQ(gso_segment_len(s.wire_len, s.segs, s.seg_len, 0), kHeader + 1448);
  EXPECT_EQ(gso_segment_len(s.wire_len, s.segs, s.seg_len, 2), kHeader + 104);
}

TEST(VnetHeader, NonGsoOrMalformedIsOneFrame) {
  const auto f = tcp_frame(3000, 0x18);
  VnetHeader none = tso(1448);
  none.gso_type = VnetHeader::kGsoNone;
  EXPECT_EQ(gso_shape(none, f).segs, 1u);
  EXPECT_EQ(gso_shape(none, f).wire_len, f.size());
  VnetHeader far = tso(1448);
  far.csum_start = static_cast<uint16_t>(f.size() - 10);  // TCP header past the end
  EXPECT_EQ(gso_shape(far, f).segs, 1u);
  EXPECT_EQ(gso_shape(tso(0), f).segs, 1u);
  EXPECT_EQ(gso_shape(tso(1448), tcp_frame(1000, 0x18)).segs, 1u);  // fits one segment
  EXPECT_TRUE(segment_tcp(none, f).empty());
  const std::vector<uint8_t> tiny(20, 0);
  EXPECT_EQ(gso_shape(tso(1448), tiny).segs, 1u);
}

TEST(VnetHeader, SegmentsLikeTcpGsoSegment) {
  const auto f = tcp_frame(3000, 0x19 | 0x80);  // FIN PSH ACK CWR
  const auto segs = segment_tcp(tso(1448), f);
  ASSERT_EQ(segs.size(), 3u);
  size_t offset = 0;
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::vector<uint8_t>& s = segs[i];
    const size_t payload = i < 2 ? 1448 : 104;
    ASSERT_EQ(s.size(), kHeader + payload);
    const uint8_t* ip = s.data() + kEth;
    const uint8_t* tcp = ip + kIp;
    EXPECT_EQ(be16(ip + 2), s.size() - kEth);
    EXPECT_EQ(be16(ip + 4), 7 + i);
    EXPECT_EQ(sum(ip, kIp), 0xffff) << "IPv4 header checksum, segment " << i;
    EXPECT_EQ(be32(tcp + 4), 1000 + offset);
    EXPECT_EQ((tcp[13] & 0x09) != 0, i == 2) << "FIN/PSH only on the last";
    EXPECT_EQ((tcp[13] & 0x80) != 0, i == 0) << "CWR only on the first";
    EXPECT_EQ(tcp[13] & 0x10, 0x10);
    const uint32_t pseudo = sum(ip + 12, 8) + 6 + static_cast<uint32_t>(s.size() - kEth - kIp);
    EXPECT_EQ(sum(tcp, s.size() - kEth - kIp, pseudo), 0xffff) << "TCP checksum, segment " << i;
    EXPECT_TRUE(std::equal(s.begin() + kHeader, s.end(),
                           f.begin() + static_cast<std::ptrdiff_t>(kHeader + offset)));
    offset += payload;
  }
}

// GRO's view of the byte-less segments the models cut from a super-frame (frame_classifier.h)
// is exactly what tcp4_gro_receive would read from the real segments: segment_tcp (checked
// above against tcp_gso_segment's rules) cuts them, tcp_gro_base parses each one alone.
TEST(TcpGroBase, SegmentHeadersMatchTheRealSegments) {
  const auto f = tcp_frame(3000, 0x19 | 0x80);  // FIN PSH ACK CWR
  const auto base = tcp_gro_base(f, kHeader + 1448);
  ASSERT_TRUE(base.has_value());
  EXPECT_EQ(base->mss, 1448u);
  EXPECT_EQ(base->total_payload, 3000u);
  ASSERT_EQ(base->segments(), 3u);
  const auto segs = segment_tcp(tso(1448), f);
  ASSERT_EQ(segs.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    const auto real = tcp_gro_base(segs[i]);
    ASSERT_TRUE(real.has_value()) << i;
    const algo::GroHeader want = real->first;
    const algo::GroHeader got = gro_segment(*base, i);
    EXPECT_TRUE(got.tcp);
    EXPECT_EQ(got.flow, want.flow) << i;
    EXPECT_EQ(got.seq, want.seq) << i;
    EXPECT_EQ(got.ack, want.ack) << i;
    EXPECT_EQ(got.payload, want.payload) << i;
    EXPECT_EQ(got.headers, want.headers) << i;
    EXPECT_EQ(got.flags, want.flags) << i;
    EXPECT_EQ(got.options, want.options) << i;
  }
  EXPECT_EQ(gro_segment(*base, 0).seq, 1000u);
  EXPECT_EQ(gro_segment(*base, 2).payload, 104u);
  EXPECT_EQ(gro_segment(*base, 2).headers, kIp + kTcp);
}

// An MTU frame is one segment; Ethernet padding is not payload; the flow, the window and the
// options are told apart; what is not IPv4/TCP has no GRO header.
TEST(TcpGroBase, MtuFramesFlowsAndRefusals) {
  auto f = tcp_frame(10, 0x10);
  f.resize(f.size() + 8);  // padding after the IP packet
  const auto b = tcp_gro_base(f);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->segments(), 1u);
  EXPECT_EQ(gro_segment(*b, 0).payload, 10u);
  auto other_port = tcp_frame(10, 0x10);
  other_port[kEth + kIp + 3] = 91;
  EXPECT_NE(tcp_gro_base(other_port)->first.flow, b->first.flow);
  auto other_window = tcp_frame(10, 0x10);
  other_window[kEth + kIp + 15] = 1;
  EXPECT_NE(tcp_gro_base(other_window)->first.options, b->first.options);
  EXPECT_EQ(tcp_gro_base(other_window)->first.flow, b->first.flow);
  auto udp = tcp_frame(10, 0x10);
  udp[kEth + 9] = 17;
  EXPECT_FALSE(tcp_gro_base(udp).has_value());
  auto fragment = tcp_frame(10, 0x10);
  fragment[kEth + 6] = 0x20;  // more fragments
  EXPECT_FALSE(tcp_gro_base(fragment).has_value());
  const std::vector<uint8_t> cut(f.begin(), f.begin() + kEth + kIp + 10);
  EXPECT_FALSE(tcp_gro_base(cut).has_value());
}

// The TAP port in super-frame mode over a socket pair: `host` plays the host's kernel.
struct TapPair {
  int host = -1;
  FramePool pool{TapPort::kSuperFrameBytes, 4};
  std::unique_ptr<TapPort> port;
  explicit TapPair(bool gro) {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
    host = sv[1];
    port = std::make_unique<TapPort>(UniqueFd(sv[0]), "t", pool,
                                     TapPort::Params{.vnet = true, .gro = gro});
  }
  ~TapPair() {
    port.reset();
    ::close(host);
  }
  void host_sends(const VnetHeader& h, const std::vector<uint8_t>& f) {
    std::vector<uint8_t> m(VnetHeader::kSize);
    h.encode(m.data());
    m.insert(m.end(), f.begin(), f.end());
    ASSERT_EQ(::write(host, m.data(), m.size()), static_cast<ssize_t>(m.size()));
  }
  std::vector<std::vector<uint8_t>> host_reads() {
    std::vector<std::vector<uint8_t>> out;
    std::vector<uint8_t> b(TapPort::kSuperFrameBytes + 16);
    for (;;) {
      const ssize_t n = ::read(host, b.data(), b.size());
      if (n <= 0) break;
      out.emplace_back(b.begin(), b.begin() + n);
    }
    return out;
  }
};

TEST(TapPortVnet, SuperFrameReachesTheModelWholeAndTheHostAsOne) {
  TapPair t(/*gro=*/true);
  const auto f = tcp_frame(3000, 0x18);
  t.host_sends(tso(1448), f);
  Packet p[4];
  int64_t rt[4];
  ASSERT_EQ(t.port->receive(p, rt, 4), 1u);
  EXPECT_EQ(p[0].gso_segs, 3);
  EXPECT_EQ(p[0].gso_size, kHeader + 1448);
  EXPECT_EQ(p[0].len, 3 * kHeader + 3000);
  EXPECT_EQ(t.port->stats().rx_super_frames, 1u);
  EXPECT_EQ(t.port->stats().rx_super_segments, 3u);
  p[0].id = 7;  // the datapath numbers packets; segments keep their parent's id
  // As a NIC model cuts it (core/gso.h): byte-less segments, the last carries the buffer.
  for (uint32_t i = 0; i + 1 < 3; ++i) t.port->send(make_gso_segment(p[0], i));
  Packet last = std::move(p[0]);
  last.len = gso_segment_len(last, 2);
  last.gso_segs = 1;
  t.port->send(std::move(last));
  t.port->flush();
  const auto got = t.host_reads();
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].size(), VnetHeader::kSize + f.size());
  const VnetHeader h = VnetHeader::decode(got[0].data());
  EXPECT_EQ(h.gso_size, 1448);
  EXPECT_TRUE(h.is_tcp_gso());
  EXPECT_TRUE(std::equal(f.begin(), f.end(), got[0].begin() + VnetHeader::kSize));
  EXPECT_EQ(t.port->stats().tx_super_frames, 1u);
  EXPECT_EQ(t.port->stats().tx_merged_segments, 2u);
}

TEST(TapPortVnet, SegmentsTheReceivingNicDroppedAreMissingOnTheHost) {
  TapPair t(/*gro=*/true);
  t.host_sends(tso(1448), tcp_frame(3000, 0x18));
  Packet p[1];
  int64_t rt[1];
  ASSERT_EQ(t.port->receive(p, rt, 1), 1u);
  p[0].id = 42;
  t.port->send(make_gso_segment(p[0], 0));  // segment 1 was dropped by the receiving NIC
  Packet last = std::move(p[0]);
  last.len = gso_segment_len(last, 2);
  last.gso_index = 2;
  last.gso_segs = 1;
  t.port->send(std::move(last));
  t.port->flush();
  const auto got = t.host_reads();
  ASSERT_EQ(got.size(), 2u);  // segments 0 and 2, as MTU frames with full checksums
  EXPECT_EQ(VnetHeader::decode(got[0].data()).gso_type, VnetHeader::kGsoNone);
  const size_t tcp = VnetHeader::kSize + kEth + kIp;
  EXPECT_EQ(be32(got[0].data() + tcp + 4), 1000u);
  EXPECT_EQ(be32(got[1].data() + tcp + 4), 1000u + 2 * 1448);
  EXPECT_EQ(got[1].size(), VnetHeader::kSize + kHeader + 104);
  EXPECT_EQ(t.port->stats().tx_partial_super_frames, 1u);
  EXPECT_EQ(t.port->stats().tx_super_frames, 0u);
}

TEST(TapPortVnet, WithoutGroTheHostGetsMtuFrames) {
  TapPair t(/*gro=*/false);
  t.host_sends(tso(1448), tcp_frame(3000, 0x18));
  Packet p[1];
  int64_t rt[1];
  ASSERT_EQ(t.port->receive(p, rt, 1), 1u);
  t.port->send(std::move(p[0]));
  t.port->flush();
  const auto got = t.host_reads();
  ASSERT_EQ(got.size(), 3u);
  for (const auto& m : got) {
    const VnetHeader h = VnetHeader::decode(m.data());
    EXPECT_EQ(h.gso_type, VnetHeader::kGsoNone);
    EXPECT_EQ(h.flags, 0);
    EXPECT_LE(m.size() - VnetHeader::kSize, kHeader + 1448);
  }
}

TEST(TapPortVnet, PlainFrameKeepsItsHeader) {
  TapPair t(/*gro=*/true);
  VnetHeader h = tso(1448);
  h.gso_type = VnetHeader::kGsoNone;  // an ACK with its checksum left to the "hardware"
  const auto f = tcp_frame(0, 0x10);
  t.host_sends(h, f);
  Packet p[1];
  int64_t rt[1];
  ASSERT_EQ(t.port->receive(p, rt, 1), 1u);
  EXPECT_EQ(p[0].gso_segs, 1);
  EXPECT_EQ(p[0].len, f.size());
  t.port->send(std::move(p[0]));
  t.port->flush();
  const auto got = t.host_reads();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(VnetHeader::decode(got[0].data()).flags, VnetHeader::kNeedsCsum);
  EXPECT_EQ(got[0].size(), VnetHeader::kSize + f.size());
}

}  // namespace
}  // namespace nicsim::emu

// CAKE's ACK filter (cake_ack_filter, cake_tcph_may_drop, cake_tcph_sack_compare in Linux
// net/sched/sch_cake.c, torvalds/linux commit 0280f429dc21) on emulated frames: the header
// reader and the drop rules through a Cake element.
#include "nicsim/algo/cake_ack_filter.h"

#include <gtest/gtest.h>

#include <vector>

#include "nicsim/algo/cake.h"

namespace nicsim::algo {
namespace {

struct Ack {
  uint32_t ack = 0;
  uint16_t flags = kTcpAck;
  uint16_t sport = 5201;
  uint32_t data = 0;  // payload bytes
  std::vector<CakeTcpHeader::SackBlock> sack;
  bool timestamp = true;
  uint32_t tsval = 10;

  Ack with_flags(uint16_t f) const {
    Ack a = *this;
    a.flags = f;
    return a;
  }
  Ack with_sport(uint16_t p) const {
    Ack a = *this;
    a.sport = p;
    return a;
  }
  Ack with_data(uint32_t d) const {
    Ack a = *this;
    a.data = d;
    return a;
  }
  Ack with_sack(uint32_t start, uint32_t end) const {
    Ack a = *this;
    a.sack.push_back({start, end});
    return a;
  }
  Ack with_tsval(uint32_t t) const {
    Ack a = *this;
    a.tsval = t;
    return a;
  }
};
Ack A(uint32_t ack) {
  Ack a;
  a.ack = ack;
  return a;
}

void put16(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v);
}
void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  put16(b, at, v >> 16);
  put16(b, at + 2, v & 0xFFFF);
}

// An Ethernet II + IPv4 + TCP frame 10.0.0.2:sport -> 10.0.0.1:80.
Packet frame(const Ack& a, uint64_t id) {
  std::vector<uint8_t> opt;
  if (a.timestamp) {
    opt = {1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0};
    opt[4] = static_cast<uint8_t>(a.tsval >> 24);
    opt[7] = static_cast<uint8_t>(a.tsval);
  }
  if (!a.sack.empty()) {
    opt.push_back(1);
    opt.push_back(1);
    opt.push_back(5);
    opt.push_back(static_cast<uint8_t>(2 + 8 * a.sack.size()));
    for (const auto& s : a.sack) {
      for (uint32_t v : {s.start, s.end}) {
        for (int sh = 24; sh >= 0; sh -= 8) opt.push_back(static_cast<uint8_t>(v >> sh));
      }
    }
  }
  const size_t tcp_len = 20 + opt.size();
  std::vector<uint8_t> b(14 + 20 + tcp_len + a.data, 0);
  put16(b, 12, 0x0800);
  b[14] = 0x45;
  put16(b, 16, static_cast<uint32_t>(20 + tcp_len + a.data));
  b[23] = 6;
  put32(b, 26, 0x0A000002);
  put32(b, 30, 0x0A000001);
  put16(b, 34, a.sport);
  put16(b, 36, 80);
  put32(b, 42, a.ack);
  b[46] = static_cast<uint8_t>((tcp_len / 4) << 4 | (a.flags >> 8));
  b[47] = static_cast<uint8_t>(a.flags);
  std::copy(opt.begin(), opt.end(), b.begin() + 54);
  Packet p;
  p.id = id;
  p.len = static_cast<uint32_t>(b.size());
  p.flow_hash = 0xABCD0000u + a.sport;
  p.payload = Payload(new PayloadBuffer{std::move(b)});
  return p;
}

TEST(CakeAckFilter, FrameReaderReadsTheHeader) {
  const Ack a = A(7000).with_flags(kTcpAck | kTcpEce).with_sack(8000, 9000);
  CakeTcpHeader h;
  ASSERT_TRUE(CakeFrameTcpReader::instance().read(frame(a, 1), h));
  EXPECT_EQ(h.ip_version, 4);
  EXPECT_EQ(h.sport, 5201);
  EXPECT_EQ(h.dport, 80);
  EXPECT_EQ(h.ack_seq, 7000u);
  EXPECT_EQ(h.flags, kTcpAck | kTcpEce);
  EXPECT_EQ(h.payload_len, 0u);
  EXPECT_TRUE(h.has_timestamp);
  EXPECT_EQ(h.tsval, 10u);
  ASSERT_EQ(h.sack_count, 1);
  EXPECT_EQ(h.sack[0].end, 9000u);
  EXPECT_FALSE(h.unsafe_options);
  Packet bare;
  EXPECT_FALSE(CakeFrameTcpReader::instance().read(bare, h));  // simulator packet: no bytes
}

// Queues the ACKs into one CAKE flow and returns the ack numbers left, in order.
std::vector<uint32_t> filtered(CakeAckFilterMode mode, const std::vector<Ack>& acks,
                               uint64_t* drops = nullptr) {
  Cake::Params p;
  p.ack_filter = mode;
  Cake q(p);
  uint64_t id = 0;
  for (const Ack& a : acks) {
    q.enqueue(frame(a, ++id), Time::zero());
  }
  if (drops != nullptr) {
    *drops = q.stats().ack_drops;
  }
  std::vector<uint32_t> left;
  std::vector<uint32_t> seen;
  while (auto out = q.dequeue(Time::zero())) {
    CakeTcpHeader h;
    CakeFrameTcpReader::instance().read(*out, h);
    left.push_back(h.ack_seq);
  }
  return left;
}

TEST(CakeAckFilter, TwoRedundantAcksLoseTheOldest) {
  uint64_t drops = 0;
  EXPECT_EQ(filtered(CakeAckFilterMode::kFilter, {A(100), A(200), A(300)}, &drops),
            (std::vector<uint32_t>{200, 300}));
  EXPECT_EQ(drops, 1u);
  // One redundant ACK is kept unless aggressive (and adjacent, same ECN flags).
  EXPECT_EQ(filtered(CakeAckFilterMode::kFilter, {A(100), A(200)}),
            (std::vector<uint32_t>{100, 200}));
  EXPECT_EQ(filtered(CakeAckFilterMode::kAggressive, {A(100), A(200)}),
            (std::vector<uint32_t>{200}));
  EXPECT_EQ(filtered(CakeAckFilterMode::kNone, {A(100), A(200), A(300)}),
            (std::vector<uint32_t>{100, 200, 300}));
}

TEST(CakeAckFilter, KeepsWhatWouldLoseInformation) {
  const CakeAckFilterMode agg = CakeAckFilterMode::kAggressive;
  // Data segments, other connections, a newer timestamp, and a different ECE are kept.
  EXPECT_EQ(filtered(agg, {A(100).with_data(100), A(200)}).size(), 2u);
  EXPECT_EQ(filtered(agg, {A(100).with_sport(1), A(200)}).size(), 2u);
  EXPECT_EQ(filtered(agg, {A(100).with_tsval(11), A(200)}).size(), 2u);
  EXPECT_EQ(filtered(agg, {A(100).with_flags(kTcpAck | kTcpEce), A(200)}).size(), 2u);
  // A SYN or FIN is never dropped; neither is a newer cumulative ACK.
  EXPECT_EQ(filtered(agg, {A(100).with_flags(kTcpAck | kTcpFin), A(200)}).size(), 2u);
  EXPECT_EQ(filtered(agg, {A(300), A(200)}).size(), 2u);
  // The same cumulative ACK is redundant only if the new one SACKs more.
  EXPECT_EQ(filtered(agg, {A(100), A(100)}).size(), 2u);
  EXPECT_EQ(filtered(agg, {A(100), A(100).with_sack(200, 300)}).size(), 1u);
  // An older ACK SACKing a block the new one does not cover is kept.
  EXPECT_EQ(filtered(agg, {A(100).with_sack(500, 600), A(200).with_sack(300, 400)}).size(), 2u);
  EXPECT_EQ(filtered(agg, {A(100).with_sack(300, 400), A(100).with_sack(300, 500)}).size(), 1u);
}

TEST(CakeAckFilter, SackCompare) {
  CakeTcpHeader a, b;
  a.ack_seq = b.ack_seq = 100;
  EXPECT_EQ(cake_sack_compare(a, b), 0);
  b.sack_count = 1;
  b.sack[0] = {200, 300};
  EXPECT_EQ(cake_sack_compare(a, b), 1);
  EXPECT_EQ(cake_sack_compare(b, a), -1);
  a.sack_count = 1;
  a.sack[0] = {50, 100};  // D-SACK (below the cumulative ACK)
  EXPECT_EQ(cake_sack_compare(a, b), -1);
}

}  // namespace
}  // namespace nicsim::algo

#include "nicsim/core/packet.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace nicsim {
namespace {

static_assert(!std::is_copy_constructible_v<Packet>);
static_assert(std::is_nothrow_move_constructible_v<Packet>);
static_assert(sizeof(Packet) <= 128, "keep Packet small: it is moved through every queue");

TEST(Packet, EcnMarking) {
  Packet p;
  p.tos = (46 << 2) | static_cast<uint8_t>(Ecn::kNotEct);  // EF, not ECT
  EXPECT_EQ(p.dscp(), 46);
  EXPECT_FALSE(p.set_ce());
  EXPECT_EQ(p.ecn(), Ecn::kNotEct);
  p.tos = (46 << 2) | static_cast<uint8_t>(Ecn::kEct0);
  EXPECT_TRUE(p.set_ce());
  EXPECT_EQ(p.ecn(), Ecn::kCe);
  EXPECT_EQ(p.dscp(), 46);
}

TEST(Packet, StageStampsAndMove) {
  Packet p;
  p.id = 7;
  p.stamp(Stage::kWireStart, Time::from_ns(100));
  p.payload.reset(new PayloadBuffer{{1, 2, 3}});
  Packet q = std::move(p);
  EXPECT_EQ(q.id, 7u);
  EXPECT_EQ(q.stamp_at(Stage::kWireStart), Time::from_ns(100));
  ASSERT_TRUE(q.payload);
  EXPECT_EQ(q.payload->bytes.size(), 3u);
  EXPECT_FALSE(p.payload);  // NOLINT(bugprone-use-after-move): moved-from payload is empty
}

int released = 0;
void count_release(PayloadBuffer* b) {
  ++released;
  delete b;
}

TEST(Packet, PayloadReturnsToOwnerPool) {
  released = 0;
  {
    Packet p;
    p.payload = Payload(new PayloadBuffer{}, PayloadDeleter{&count_release});
  }
  EXPECT_EQ(released, 1);
}

}  // namespace
}  // namespace nicsim

#include "nicsim/core/gso.h"

namespace nicsim {
namespace {

TEST(Gso, SegmentsCarryParentIdentityAndIndex) {
  Packet p;
  p.id = 9;
  p.len = 1514 + 1514 + 200;
  p.gso_segs = 3;
  p.gso_size = 1514;
  p.meta = 42;
  p.tos = 0xb8;
  p.dst_host = 7;  // routers route every segment on it
  p.src_host = 3;  // CAKE isolates hosts by it
  uint32_t total = 0;
  for (uint32_t i = 0; i < 3; ++i) {
    Packet s = make_gso_segment(p, i);
    EXPECT_EQ(s.id, 9u);
    EXPECT_EQ(s.meta, 42u);
    EXPECT_EQ(s.tos, 0xb8);
    EXPECT_EQ(s.dst_host, 7);
    EXPECT_EQ(s.src_host, 3);
    EXPECT_EQ(s.gso_index, i);
    EXPECT_EQ(s.gso_segs, 1);
    total += s.len;
  }
  EXPECT_EQ(make_gso_segment(p, 2).len, 200u);
  EXPECT_EQ(total, p.len);
  EXPECT_EQ(gso_segment_len(100, 1, 0, 0), 100u);
}

}  // namespace
}  // namespace nicsim

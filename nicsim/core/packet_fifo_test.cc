#include "nicsim/core/packet_fifo.h"

#include <gtest/gtest.h>

namespace nicsim {
namespace {

Packet make(uint64_t id) {
  Packet p;
  p.id = id;
  return p;
}

TEST(PacketFifo, OrderAcrossGrowthAndWrap) {
  PacketFifo f;
  uint64_t next_in = 1;
  uint64_t next_out = 1;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7 + round; ++i) {
      f.push_back(make(next_in++));
    }
    for (int i = 0; i < 5 + round; ++i) {
      ASSERT_EQ(f.pop_front().id, next_out++);
    }
  }
  while (!f.empty()) {
    ASSERT_EQ(f.pop_front().id, next_out++);
  }
  EXPECT_EQ(next_in, next_out);
}

TEST(PacketList, SharedPoolReusesNodes) {
  PacketPool pool;
  PacketList a;
  PacketList b;
  for (uint64_t i = 1; i <= 4; ++i) {
    a.push_back(pool, make(i));
    b.push_back(pool, make(100 + i));
  }
  EXPECT_EQ(a.front(pool).id, 1u);
  EXPECT_EQ(a.pop_front(pool).id, 1u);
  EXPECT_EQ(b.pop_front(pool).id, 101u);
  a.push_back(pool, make(5));  // reuses a freed node
  std::vector<uint64_t> ids;
  while (!a.empty()) {
    ids.push_back(a.pop_front(pool).id);
  }
  EXPECT_EQ(ids, (std::vector<uint64_t>{2, 3, 4, 5}));
  EXPECT_EQ(b.size, 3u);
}

}  // namespace
}  // namespace nicsim

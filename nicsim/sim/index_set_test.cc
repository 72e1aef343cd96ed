// IndexSet: membership, increasing-order drain across 64-bit words, and what a drain does with
// indices inserted while it runs.
#include "nicsim/sim/index_set.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::sim {
namespace {

std::vector<size_t> drained(IndexSet& s) {
  std::vector<size_t> out;
  s.drain([&out](size_t i) { out.push_back(i); });
  return out;
}

TEST(IndexSet, DrainsInIncreasingOrderAcrossWords) {
  IndexSet s(200);
  EXPECT_TRUE(s.empty());
  for (size_t i : {150u, 3u, 64u, 63u, 0u, 199u, 3u}) {
    s.insert(i);
  }
  EXPECT_TRUE(s.contains(63));
  EXPECT_FALSE(s.contains(62));
  EXPECT_FALSE(s.empty());
  EXPECT_EQ(drained(s), (std::vector<size_t>{0, 3, 63, 64, 150, 199}));
  EXPECT_TRUE(s.empty());
  EXPECT_TRUE(drained(s).empty());
}

TEST(IndexSet, ResizeKeepsMembersAndClearEmpties) {
  IndexSet s(5);
  EXPECT_EQ(s.capacity(), 64u);
  s.insert(4);
  s.resize(130);
  EXPECT_EQ(s.capacity(), 192u);
  s.insert(129);
  EXPECT_TRUE(s.contains(4));
  s.clear();
  EXPECT_TRUE(s.empty());
}

TEST(IndexSet, InsertDuringDrainBelowTheCurrentWordWaitsForTheNextDrain) {
  IndexSet s(128);
  s.insert(5);
  s.insert(70);
  std::vector<size_t> seen;
  s.drain([&](size_t i) {
    seen.push_back(i);
    if (i == 5) {
      s.insert(2);    // same word, already taken: next drain
      s.insert(100);  // a later word: this drain
    }
  });
  EXPECT_EQ(seen, (std::vector<size_t>{5, 70, 100}));
  EXPECT_EQ(drained(s), (std::vector<size_t>{2}));
}

}  // namespace
}  // namespace nicsim::sim

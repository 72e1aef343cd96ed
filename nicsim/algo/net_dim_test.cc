// NetDim: pins Linux net_dim's decisions (lib/dim/net_dim.c, lib/dim/dim.c) on crafted
// windows of DIM_NEVENTS interrupts with chosen byte rates.
#include "nicsim/algo/net_dim.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::algo {
namespace {

using Tune = NetDim::Tune;

// Drives a NetDim the way a driver does: one sample per poll, a new profile applied at once.
struct Driver {
  NetDim dim;
  NetDim::Sample s;
  Driver() { dim.on_interrupt(s); }  // the first poll starts the first window
  // One window of 64 interrupts lasting `us` and carrying `bytes` (and bytes / 1000 packets).
  // Returns the profile index after it.
  int window(uint32_t bytes, int64_t us = 1000) {
    for (int i = 0; i < NetDim::kNEvents - 1; ++i) {  // polls inside the window decide nothing
      ++s.events;
      s.time += Duration::us(us) / NetDim::kNEvents;
      EXPECT_FALSE(dim.on_interrupt(s));
    }
    ++s.events;
    s.time = s.time + (Duration::us(us) - Duration::us(us) / NetDim::kNEvents * 63);
    s.bytes += bytes;
    s.packets += bytes / 1000;
    if (dim.on_interrupt(s)) {
      dim.profile_applied();  // the work item ran; the next poll starts a window
      dim.on_interrupt(s);
    }
    return dim.state().profile_ix;
  }
};

TEST(NetDim, ProfilesAreNetDimsTables) {
  using D = NetDim::Direction;
  using M = NetDim::Mode;
  const auto& rx_eqe = NetDim::profiles(D::kRx, M::kEqe);
  EXPECT_EQ(rx_eqe[0], (NetDim::Profile{1, 256}));
  EXPECT_EQ(rx_eqe[4], (NetDim::Profile{256, 256}));
  EXPECT_EQ(NetDim::profiles(D::kRx, M::kCqe)[2], (NetDim::Profile{16, 64}));
  EXPECT_EQ(NetDim::profiles(D::kTx, M::kEqe)[2], (NetDim::Profile{32, 128}));
  EXPECT_EQ(NetDim::profiles(D::kTx, M::kCqe)[0], (NetDim::Profile{5, 128}));
  EXPECT_EQ(NetDim().default_profile(), (NetDim::Profile{8, 256}));
}

TEST(NetDim, CalcStatsRoundsUpPerMillisecond) {
  NetDim::Sample a;
  NetDim::Sample b;
  b.time = a.time + Duration::us(3000);
  b.packets = 10;
  b.bytes = 15'000;
  NetDim::WindowStats w;
  ASSERT_TRUE(NetDim::calc_stats(a, b, w));
  EXPECT_EQ(w.ppms, 4);                 // ceil(10 000 / 3000)
  EXPECT_EQ(w.bpms, 5000);              // 15 000 000 / 3000
  EXPECT_EQ(w.epms, 22);                // ceil(64 000 / 3000)
  b.time = a.time + Duration::ns(999);  // 0 us: no decision
  EXPECT_FALSE(NetDim::calc_stats(a, b, w));
}

TEST(NetDim, CompareNeedsMoreThanTenPercent) {
  const NetDim::WindowStats prev{.ppms = 100, .bpms = 1000, .epms = 64};
  EXPECT_EQ(NetDim::compare({100, 1100, 64}, prev), 0);   // exactly 10%: same
  EXPECT_EQ(NetDim::compare({100, 1110, 64}, prev), 1);   // 11% more bytes: better
  EXPECT_EQ(NetDim::compare({100, 890, 64}, prev), -1);   // 11% fewer: worse
  EXPECT_EQ(NetDim::compare({120, 1000, 64}, prev), 1);   // same bytes, more packets
  EXPECT_EQ(NetDim::compare({100, 1000, 50}, prev), 1);   // same traffic, fewer interrupts
  EXPECT_EQ(NetDim::compare({100, 1000, 80}, prev), -1);  // more interrupts: worse
  EXPECT_EQ(NetDim::compare({0, 5, 0}, NetDim::WindowStats{}), 1);  // anything beats nothing
  EXPECT_EQ(NetDim::compare({0, 0, 9}, NetDim::WindowStats{}), 0);
}

TEST(NetDim, NoDecisionBefore64Events) {
  NetDim dim;
  NetDim::Sample s;
  dim.on_interrupt(s);
  for (int i = 0; i < 63; ++i) {
    ++s.events;
    s.time += Duration::us(10);
    s.bytes += 100'000;
    EXPECT_FALSE(dim.on_interrupt(s));
  }
  EXPECT_EQ(dim.stats().windows, 0u);
  ++s.events;
  s.time += Duration::us(10);
  EXPECT_TRUE(dim.on_interrupt(s));  // leaves the initial parking: profile 0 -> 1
  EXPECT_EQ(dim.state().profile_ix, 1);
  EXPECT_EQ(dim.state().phase, NetDim::Phase::kApplyNewProfile);
  EXPECT_FALSE(dim.on_interrupt(s));  // nothing measured until the profile is applied
}

TEST(NetDim, ClimbsWhileBetterAndParksAtTheEdge) {
  Driver d;
  EXPECT_EQ(d.window(1'000'000), 1);  // parked on top at 0, traffic: going right
  EXPECT_EQ(d.window(2'000'000), 2);
  EXPECT_EQ(d.window(3'000'000), 3);
  EXPECT_EQ(d.window(4'000'000), 4);
  EXPECT_EQ(d.window(5'000'000), 4);  // better still, but profile 4 is the edge: park
  EXPECT_EQ(d.dim.state().tune, Tune::kParkingOnTop);
  EXPECT_EQ(d.window(5'000'000), 4);  // same: stays parked
  EXPECT_EQ(d.window(5'400'000), 4);  // 8% more: still "same"
  EXPECT_EQ(d.dim.state().tune, Tune::kParkingOnTop);
  EXPECT_EQ(d.window(3'000'000), 3);  // worse than the parked window: leave, going left
  EXPECT_EQ(d.dim.state().tune, Tune::kGoingLeft);
}

TEST(NetDim, OscillationGetsTiredThenRests) {
  Driver d;
  EXPECT_EQ(d.window(1'000'000), 1);  // tired 1
  EXPECT_EQ(d.window(2'000'000), 2);  // 2
  EXPECT_EQ(d.window(3'000'000), 3);  // 3
  EXPECT_EQ(d.window(1'000'000), 2);  // worse: turn left, 4
  // From here every window is "same": not better, so it turns at every window, and never
  // looks "on top" (each direction has made only one step since it last turned).
  const std::vector<int> expected = {3, 2, 3, 2, 3, 2};  // tired 5 .. 10
  for (int ix : expected) {
    EXPECT_EQ(d.window(1'000'000), ix);
  }
  EXPECT_EQ(d.dim.state().tired, 10);
  EXPECT_EQ(d.window(1'000'000), 2);  // 2 x 5 steps: too tired, parked where it is
  EXPECT_EQ(d.dim.state().tune, Tune::kParkingTired);
  for (int i = 0; i < 9; ++i) {  // it rests one window per step it made
    EXPECT_EQ(d.window(1'000'000), 2);
    EXPECT_EQ(d.dim.state().tune, Tune::kParkingTired);
  }
  EXPECT_EQ(d.window(1'000'000), 1);  // rested: leaves going left (profile 2 is not 0)
  EXPECT_EQ(d.dim.state().tune, Tune::kGoingLeft);
  EXPECT_EQ(d.dim.stats().parked_tired, 1u);
}

TEST(NetDim, ParksOnTopBetweenTwoWorseNeighbours) {
  Driver d;
  EXPECT_EQ(d.window(1'000'000), 1);
  EXPECT_EQ(d.window(2'000'000), 2);
  EXPECT_EQ(d.window(3'000'000), 3);
  EXPECT_EQ(d.window(4'000'000), 4);
  EXPECT_EQ(d.window(5'000'000), 4);  // edge: parked on top
  EXPECT_EQ(d.window(2'000'000), 3);  // worse: leave going left (steps_left 1)
  EXPECT_EQ(d.window(3'000'000), 2);  // better: on (steps_left 2)
  EXPECT_EQ(d.window(1'000'000), 3);  // worse: turn right (steps_right 1)
  // Better again going right with steps_left > 1 and steps_right == 1: profile 3 is the top
  // between two worse neighbours: park there.
  EXPECT_EQ(d.window(2'000'000), 3);
  EXPECT_EQ(d.dim.state().tune, Tune::kParkingOnTop);
  EXPECT_EQ(d.dim.state().tired, 0);
}

}  // namespace
}  // namespace nicsim::algo

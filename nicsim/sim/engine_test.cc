// Engine: (time, sequence) ordering, no going back in time, Wakeup lazy deletion.
#include "nicsim/sim/engine.h"

#include <gtest/gtest.h>

#include <vector>

namespace nicsim::sim {
namespace {

struct Recorder : Process {
  std::vector<std::pair<int64_t, uint64_t>> seen;
  void on_event(Time now, uint64_t tag) override { seen.emplace_back(now.ns_since_epoch(), tag); }
};

TEST(Engine, OrdersByTimeThenInsertion) {
  Engine e;
  Recorder r;
  e.schedule(Time::from_ns(20), &r, 1);
  e.schedule(Time::from_ns(10), &r, 2);
  e.schedule(Time::from_ns(20), &r, 3);
  e.schedule(Time::from_ns(10), &r, 4);
  e.run_until(Time::max());
  EXPECT_EQ(r.seen, (std::vector<std::pair<int64_t, uint64_t>>{{10, 2}, {10, 4}, {20, 1}, {20, 3}}));
  EXPECT_EQ(e.stats().executed, 4u);
}

TEST(Engine, RunUntilStopsAndAdvancesClock) {
  Engine e;
  Recorder r;
  e.schedule(Time::from_ns(5), &r, 1);
  e.schedule(Time::from_ns(50), &r, 2);
  e.run_until(Time::from_ns(30));
  EXPECT_EQ(r.seen.size(), 1u);
  EXPECT_EQ(e.now(), Time::from_ns(30));
  // An event scheduled in the past runs now, never earlier.
  e.schedule(Time::from_ns(1), &r, 3);
  e.run_until(Time::from_ns(40));
  EXPECT_EQ(r.seen.back(), (std::pair<int64_t, uint64_t>{30, 3}));
  e.run_until(Time::max());
  EXPECT_EQ(r.seen.back(), (std::pair<int64_t, uint64_t>{50, 2}));
}

TEST(Engine, WakeupKeepsOnlyTheLatestSetting) {
  Engine e;
  Recorder r;
  Engine::Wakeup w(e, &r, 7);
  w.set(Time::from_ns(100));
  w.set(Time::from_ns(40));   // supersedes 100
  w.set(Time::from_ns(40));   // no-op
  EXPECT_EQ(w.when(), Time::from_ns(40));
  e.run_until(Time::max());
  EXPECT_EQ(r.seen, (std::vector<std::pair<int64_t, uint64_t>>{{40, 7}}));
  EXPECT_EQ(e.stats().stale, 1u);
  EXPECT_EQ(w.when(), std::nullopt);
  w.set(Time::from_ns(60));
  w.set(std::nullopt);  // cancelled
  e.run_until(Time::max());
  EXPECT_EQ(r.seen.size(), 1u);
}

struct SelfRescheduler : Process {
  Engine* e = nullptr;
  int remaining = 0;
  void on_event(Time now, uint64_t tag) override {
    if (--remaining > 0) {
      e->schedule(now + Duration::ns(static_cast<int64_t>(tag % 7) + 1), this, tag * 31 + 1);
    }
  }
};

TEST(Engine, DeterministicAcrossRuns) {
  auto run = [] {
    Engine e;
    std::vector<SelfRescheduler> ps(10);
    for (size_t i = 0; i < ps.size(); ++i) {
      ps[i].e = &e;
      ps[i].remaining = 1000;
      e.schedule(Time::zero(), &ps[i], i);
    }
    e.run_until(Time::max());
    return std::make_pair(e.now(), e.stats().executed);
  };
  EXPECT_EQ(run(), run());
  EXPECT_EQ(run().second, 10'000u);
}

}  // namespace
}  // namespace nicsim::sim

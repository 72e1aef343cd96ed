// [[traffic.replay]] in the simulator: a recording's frames enter their hosts' NICs at their
// recorded times (the queue series shows a recorded burst draining at the wire's rate), the
// `from` filter keeps one host's frames, and the same file gives the same results twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nicsim/config/replay_file.h"
#include "nicsim/config/scenario.h"
#include "nicsim/sim/simulation.h"

namespace nicsim::sim {
namespace {

// Host a: a burst of 200 1514-byte frames at 1 ms (one flow, TOS 0); host b: a 98-byte frame
// every 5 ms (TOS 0x10), 10 of them.
std::string recording() {
  std::string out = config::encode_replay_header({"a", "b"}, "replay_test");
  const std::vector<uint8_t> headers(64, 0);
  for (int i = 0; i < 200; ++i) {
    config::ReplayFrame f;
    f.time_ns = 1'000'000;
    f.host = 0;
    f.to = 1;
    f.len = 1514;
    f.flow_hash = 0x1234;
    config::encode_replay_frame(out, f, headers);
  }
  for (int i = 0; i < 10; ++i) {
    config::ReplayFrame f;
    f.time_ns = 2'000'000 + i * 5'000'000;
    f.host = 1;
    f.to = 0;
    f.len = 98;
    f.tos = 0x10;
    f.priority = 6;
    f.flow_hash = 0x99;
    config::encode_replay_frame(out, f, headers);
  }
  return out;
}

class Replay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nicsim_sim_replay_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "rec.pcapng", std::ios::binary) << recording();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  report::Run run(const std::string& extra = "") {
    const std::string text = R"(
[scenario]
name = "replay"
duration = "100ms"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "1ms"
[[traffic.replay]]
file = "rec.pcapng"
)" + extra;
    config::LoadOptions o;
    o.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
    o.standard_presets = false;
    const config::LoadedScenario s =
        config::load_scenario_text(text, (dir_ / "replay.toml").string(), o);
    return Simulation(s.runs.at(0)).run();
  }

  std::filesystem::path dir_;
};

uint64_t backlog(const report::QueueSeries& q, size_t i) {
  return q.qdisc_packets.at(i) + q.ring_packets.at(i);
}

TEST_F(Replay, ARecordedBurstDrainsAtTheWireRate) {
  const report::Run r = run();
  const report::QueueSeries& a = r.queues.at("a");
  ASSERT_GE(a.time_s.size(), 10u);
  EXPECT_EQ(a.time_s[1], 0.010);
  EXPECT_EQ(backlog(a, 0), 0u);  // before the burst
  // At 10 ms the 200 frames of 1 ms have had 9 ms of 100 Mbit/s wire: at most
  // 9 ms / 123.04 us = 73.1 frames left, so at least 126 are queued (qdisc + ring).
  EXPECT_GE(backlog(a, 1), 126u);
  EXPECT_LE(backlog(a, 1), 200u);
  EXPECT_LT(backlog(a, 2), backlog(a, 1));  // draining
  // 200 x 123.04 us = 24.6 ms: empty by 30 ms (completions included).
  EXPECT_EQ(backlog(a, 3), 0u);
  // b's few small frames never build a queue, and nobody answers a's burst.
  const report::QueueSeries& b = r.queues.at("b");
  for (size_t i = 0; i < b.time_s.size(); ++i) {
    EXPECT_LE(b.qdisc_packets[i], 1u) << "sample " << i;
  }
}

TEST_F(Replay, FromKeepsOneHostsFrames) {
  const report::Run r = run("from = \"b\"\n");
  const report::QueueSeries& a = r.queues.at("a");
  for (size_t i = 0; i < a.time_s.size(); ++i) {
    EXPECT_EQ(backlog(a, i), 0u) << "sample " << i;
  }
}

TEST_F(Replay, SameFileSameResults) {
  const report::Run x = run();
  const report::Run y = run();
  EXPECT_EQ(x.queues, y.queues);
  EXPECT_EQ(x.intervals, y.intervals);
  EXPECT_EQ(x.stages, y.stages);
}

}  // namespace
}  // namespace nicsim::sim

// Workloads (issue 12) end to end in the simulator: expectations derived from the scenario's
// own numbers (link rate, Ethernet framing, propagation delay), never from a previous run.
#include <gtest/gtest.h>

#include <string>

#include "nicsim/config/scenario.h"
#include "nicsim/model/ethernet.h"
#include "nicsim/sim/simulation.h"

namespace nicsim::sim {
namespace {

config::LoadedScenario load(const std::string& text) {
  config::LoadOptions opts;
  opts.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
  opts.standard_presets = false;
  return config::load_scenario_text(text, "test.toml", opts);
}

// 100 Mbit/s between two hosts on gigabit NICs: the wire is the bottleneck and host a's
// pfifo_fast (1000 packets) the queue in front of it.
const char* kPath = R"(
[scenario]
name = "100 Mbit/s path"
duration = "6s"
seed = 1
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "1ms"
)";
constexpr double kWireBps = 100e6;
constexpr double kDelayMs = 1.0;
constexpr uint32_t kPayload = 1470;
// The datagram's frame: Ethernet + IPv4 + UDP headers + payload; its wire time adds preamble,
// FCS and inter-frame gap (IEEE 802.3).
constexpr uint32_t kFrame = 14 + 20 + 8 + kPayload;
const double kWireBytes = model::EthernetOverhead{}.wire_bytes(kFrame);

report::Run run_checked(const std::string& text) {
  config::LoadedScenario s = load(text);
  SimOptions o;
  o.check_wakeups = true;
  return Simulation(s.runs[0], o).run();
}

std::string flood(const std::string& rate) {
  return "[[traffic.udp_flood]]\nfrom = \"a\"\nto = \"b\"\nrate = \"" + rate +
         "\"\nsize = \"1470B\"\n";
}

TEST(UdpFlood, BelowTheBottleneckNothingIsLostAndDelayIsThePath) {
  const report::Run r = run_checked(std::string(kPath) + flood("50Mbit"));
  const report::FloodResult& f = r.udp_flood.at("udp_flood");
  // 6 s at 50 Mbit/s of 1470-byte payloads: floor(6 * 50e6 / (1470 * 8)) + 1 datagrams.
  EXPECT_EQ(f.sent, static_cast<uint64_t>(6 * 50e6 / (kPayload * 8.0)) + 1);
  EXPECT_EQ(f.lost, 0u);
  EXPECT_EQ(f.loss_pct, 0.0);
  EXPECT_EQ(f.direction, "a->b");
  // Every datagram has the propagation delay and its own serialisation (~123 us), plus NIC and
  // CPU costs but no standing queue: the rate is half the link's.
  const double serialise_ms = kWireBytes * 8 / kWireBps * 1e3;
  EXPECT_GT(f.one_way.min, kDelayMs + serialise_ms);
  EXPECT_LT(f.one_way.p99, kDelayMs + 4 * serialise_ms);
  EXPECT_NEAR(f.received_bps, 50e6, 0.01 * 50e6);
}

TEST(UdpFlood, AboveTheBottleneckLossIsTheExcessAndTheQueueStaysFull) {
  const double rate = 200e6;
  const report::Run r = run_checked(std::string(kPath) + flood("200Mbit"));
  const report::FloodResult& f = r.udp_flood.at("udp_flood");
  // The wire carries kWireBps / (8 * kWireBytes) datagrams per second of the
  // rate / (8 * kPayload) offered: the rest is dropped at host a's full qdisc.
  const double expected = 1.0 - (kWireBps / (8 * kWireBytes)) / (rate / (8.0 * kPayload));
  EXPECT_NEAR(f.loss_pct / 100, expected, 0.02) << "expected " << expected;
  // What arrives is the link's capacity in payload bits.
  EXPECT_NEAR(f.received_bps, kWireBps * kPayload / kWireBytes, 0.03 * kWireBps);
  // A full 1000-packet pfifo_fast in front of the wire: ~1000 x 123 us of queueing.
  const double queue_ms = 1000 * kWireBytes * 8 / kWireBps * 1e3;
  EXPECT_GT(f.one_way.p50, kDelayMs + 0.8 * queue_ms);
  EXPECT_LT(f.one_way.p50, kDelayMs + 1.3 * queue_ms);
}

TEST(UdpFlood, AnUnresponsiveFloodStarvesCubicInAFifo) {
  const std::string tcp = "[[traffic.tcp]]\nfrom = \"a\"\nto = \"b\"\n";
  const report::Run alone = run_checked(std::string(kPath) + tcp);
  const report::Run beside = run_checked(std::string(kPath) + tcp + flood("200Mbit"));
  const double alone_bps = alone.goodput_bps[report::Direction::kAtoB];
  const double beside_bps = beside.goodput_bps[report::Direction::kAtoB];
  EXPECT_GT(alone_bps, 0.85 * kWireBps);
  // The flood offers twice the link and never backs off; CUBIC halves at every loss, so it
  // gets far less than a fair half of the link.
  EXPECT_LT(beside_bps, 0.1 * kWireBps) << alone_bps << " alone";
  const report::FloodResult& f = beside.udp_flood.at("udp_flood");
  EXPECT_GT(f.received_bps, 0.8 * kWireBps);
}

}  // namespace
}  // namespace nicsim::sim

namespace nicsim::sim {
namespace {

std::string voip(const std::string& extra = "") {
  return "[[traffic.voip]]\nfrom = \"a\"\nto = \"b\"\n" + extra;
}

// An idle 1 ms path: every packet arrives, delay is the path's, IPDV is ~0, and with
// Ta = p99 delay + 20 ms < 100 ms and no loss the E-model gives G.107's default R = 93.2.
TEST(Voip, AnIdlePathGivesTheDefaultR) {
  const report::Run r = run_checked(std::string(kPath) + voip());
  const report::VoipResult& v = r.voip.at("voip");
  EXPECT_EQ(v.codec, "g711");
  EXPECT_EQ(v.size, 172);
  EXPECT_EQ(v.dscp, 46);
  EXPECT_DOUBLE_EQ(v.interval_ms, 20.0);
  EXPECT_EQ(v.sent, 6u * 50u);  // 6 s, one packet per 20 ms from 0 s, the last at 5.98 s
  EXPECT_EQ(v.received, v.sent);
  EXPECT_EQ(v.lost, 0u);
  EXPECT_EQ(v.loss_bursts, 0u);
  EXPECT_GT(v.one_way.min, kDelayMs);
  EXPECT_LT(v.one_way.p99, kDelayMs + 0.2);
  EXPECT_LT(v.ipdv_p99_ms, 0.05);
  EXPECT_DOUBLE_EQ(v.r_factor, 93.2);
  EXPECT_NEAR(v.mos, 4.409, 0.001);
}

// Random loss on the wire (wire.loss, Bernoulli per frame): the stream sees about that loss,
// in bursts no longer than chance makes them (BurstR ~ 1), and the MOS is the E-model's for it.
TEST(Voip, RandomWireLossGivesRandomBurstsAndTheEModelsMos) {
  std::string path = kPath;
  path.replace(path.find("duration = \"6s\""), 15, "duration = \"61s\"");
  const report::Run r = run_checked(path + "loss = \"2%\"\n" + voip("codec = \"g729a\"\n"));
  const report::VoipResult& v = r.voip.at("voip");
  EXPECT_EQ(v.size, 32);
  // 3000 judged packets (the last second is not judged): 2 % -> 60 +- 3 sd (sqrt(58.8) = 7.7).
  EXPECT_NEAR(v.loss_pct, 2.0, 0.8);
  EXPECT_GT(v.loss_bursts, v.lost * 8 / 10);  // mostly single losses
  EXPECT_LE(v.longest_burst, 4u);
  EXPECT_NEAR(v.burst_ratio, 1.0, 0.15);
  // G.729A: Ie = 11, Bpl = 19 (G.113 App. I); Ta < 100 ms -> Idd = 0.
  const double ie_eff = 11 + 84 * v.loss_pct / (v.loss_pct / v.burst_ratio + 19);
  EXPECT_NEAR(v.r_factor, 93.2 - ie_eff, 1e-9);
  EXPECT_LT(v.mos, 4.0);
}

// Beside an unresponsive flood in the same FIFO, a best-effort voice stream loses packets and
// waits behind a full queue: its MOS falls far below the idle 4.41.
TEST(Voip, BesideAFloodInAFifoTheCallIsPoor) {
  const report::Run r =
      run_checked(std::string(kPath) + flood("200Mbit") + voip("dscp = \"BE\"\n"));
  const report::VoipResult& v = r.voip.at("voip");
  const double queue_ms = 1000 * kWireBytes * 8 / kWireBps * 1e3;
  EXPECT_GT(v.one_way.p50, kDelayMs + 0.8 * queue_ms);
  EXPECT_GT(v.loss_pct, 10.0);
  EXPECT_LT(v.mos, 3.0);
}

}  // namespace
}  // namespace nicsim::sim

namespace nicsim::sim {
namespace {

// 100 Mbit/s, 10 ms each way: RTT R = 20 ms plus serialisation.
std::string far_path(const std::string& duration) {
  std::string p = kPath;
  p.replace(p.find("delay = \"1ms\""), 13, "delay = \"10ms\"");
  p.replace(p.find("duration = \"6s\""), 15, "duration = \"" + duration + "\"");
  return p;
}

// From first principles: the request reaches the server in R/2; the handshake takes one round
// trip (server SYN, client SYN-ACK: the model of the client's SYN-ACK / ACK+request legs); the
// 10 KB response (7 segments of 1448 B, within the initial window of 10, RFC 6928) arrives R/2
// after leaving. So FCT = 2 R + 7 frames' serialisation + small per-packet costs — no delayed
// ACK (the client's quick ACKs) and no Nagle (the server writes the whole response) on the way.
TEST(Transfers, A10KbResponseOnAnIdlePathTakesTwoRoundTrips) {
  const report::Run r = run_checked(far_path("10s") +
                                    "[[traffic.transfers]]\nfrom = \"a\"\nto = \"b\"\n"
                                    "sizes = \"fixed\"\nsize = \"10000B\"\ninterval = \"500ms\"\n");
  const report::TransfersResult& t = r.transfers.at("transfers");
  EXPECT_EQ(t.direction, "b->a");  // responses flow server (b) -> client (a)
  EXPECT_GT(t.started, 10u);
  EXPECT_EQ(t.completed, t.started);
  EXPECT_EQ(t.bytes, t.completed * 10'000);
  const double rtt_ms = 2 * 10.0;
  const double data_ms = 7 * model::EthernetOverhead{}.wire_bytes(1514) * 8 / kWireBps * 1e3;
  EXPECT_GT(t.fct_ms.min, 2 * rtt_ms + data_ms - 0.3);
  EXPECT_LT(t.fct_ms.max, 2 * rtt_ms + data_ms + 1.0) << "2 RTT = " << 2 * rtt_ms;
  EXPECT_EQ(t.buckets.at("10KB-100KB").count, t.completed);
  EXPECT_EQ(t.buckets.at("<10KB").count, 0u);
}

// Web-search sizes (DCTCP's distribution): the smallest and largest buckets are used, nothing
// beats two round trips, and larger buckets take longer.
TEST(Transfers, WebSearchSizesFillTheBucketsInOrder) {
  const report::Run r = run_checked(far_path("30s") +
                                    "[[traffic.transfers]]\nfrom = \"a\"\nto = \"b\"\n"
                                    "sizes = \"websearch\"\ninterval = \"400ms\"\n");
  const report::TransfersResult& t = r.transfers.at("transfers");
  EXPECT_GT(t.completed, 50u);
  const auto& b = t.buckets;
  ASSERT_EQ(b.size(), 4u);
  EXPECT_GT(b.at("<10KB").count, 0u);
  EXPECT_GT(b.at(">=1MB").count, 0u);
  EXPECT_GT(b.at("<10KB").min, 40.0);  // never faster than two round trips
  EXPECT_LT(b.at("<10KB").p50, b.at("10KB-100KB").p50 + 1.0);
  EXPECT_LT(b.at("10KB-100KB").p50, b.at("100KB-1MB").p50);
  EXPECT_LT(b.at("100KB-1MB").p50, b.at(">=1MB").p50);
}

}  // namespace
}  // namespace nicsim::sim

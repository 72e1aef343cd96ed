// Simulation: end-to-end runs of small scenarios on generic NICs (bands, not exact floats),
// determinism, and the published-number comparison.
#include "nicsim/sim/simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/presets.h"
#include "nicsim/config/scenario.h"

namespace nicsim::sim {
namespace {

config::LoadedScenario load(const std::string& text) {
  config::LoadOptions opts;
  opts.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
  opts.standard_presets = false;
  return config::load_scenario_text(text, "test.toml", opts);
}

const char* kBase = R"(
[scenario]
name = "generic 100 Mbit/s"
duration = "5s"
seed = 3
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

TEST(Simulation, OneTcpFlowFillsA100MbitLink) {
  const std::string text = std::string(kBase) + R"(
[[traffic.tcp]]
from = "a"
to = "b"
[[traffic.ping]]
from = "b"
to = "a"
interval = "100ms"
)";
  config::LoadedScenario s = load(text);
  ASSERT_EQ(s.runs.size(), 1u);
  Simulation sim(s.runs[0]);
  report::Run r = sim.run();
  // Payload goodput at 100 Mbit/s with 1448-byte segments in 1538-byte wire frames: at most
  // 94.1 Mbit/s; slow start costs a little of the first of 5 seconds.
  const double mbit = r.goodput_bps[report::Direction::kAtoB] / 1e6;
  EXPECT_GT(mbit, 85.0);
  EXPECT_LT(mbit, 94.2);
  EXPECT_EQ(r.goodput_bps[report::Direction::kBtoA], 0.0);
  ASSERT_EQ(r.intervals.size(), 5u);
  EXPECT_GT(r.intervals.back().directions[report::Direction::kAtoB].bits_per_second, 90e6);
  // The ping crosses the loaded a->b queue on its way back: RTT >= 2 ms of propagation.
  const report::ProbeLatency& ping = r.latency_ms.at("ping");
  EXPECT_GE(ping.rtt.min, 2.0);
  EXPECT_GT(ping.rtt.count, 40u);
  EXPECT_GT(sim.events(), 10'000u);
}

TEST(Simulation, IdlePingIsPropagationPlusSerialisation) {
  const std::string text = std::string(kBase) + R"(
[[traffic.ping]]
from = "a"
to = "b"
interval = "100ms"
)";
  config::LoadedScenario s = load(text);
  Simulation sim(s.runs[0]);
  report::Run r = sim.run();
  const report::ProbeLatency& ping = r.latency_ms.at("ping");
  EXPECT_EQ(ping.rtt.count, 50u);
  EXPECT_EQ(ping.rtt.lost, 0u);
  // 2 x 1 ms propagation + 2 x 98-byte frames at 100 Mbit/s (~9.4 us each) + NIC/CPU costs.
  EXPECT_GT(ping.rtt.mean, 2.018);
  EXPECT_LT(ping.rtt.mean, 2.5);
  EXPECT_LE(ping.rtt.max - ping.rtt.min, 0.05);  // idle: no queueing
}

TEST(Simulation, SameSeedSameResults) {
  const std::string text = std::string(kBase) + R"(
[[traffic.tcp]]
from = "a"
to = "b"
streams = 2
[[traffic.tcp]]
from = "b"
to = "a"
[[traffic.udp_probe]]
from = "a"
to = "b"
interval = "10ms"
)";
  config::LoadedScenario s = load(text);
  report::Run r1 = Simulation(s.runs[0]).run();
  report::Run r2 = Simulation(s.runs[0]).run();
  EXPECT_EQ(r1, r2);
  // Both directions carry traffic; the UDP probe has one-way delays both ways.
  EXPECT_GT(r1.goodput_bps[report::Direction::kBtoA], 10e6);
  ASSERT_TRUE(r1.latency_ms.at("udp").one_way.has_value());
  EXPECT_GT(r1.latency_ms.at("udp").one_way->a_to_b.count, 100u);
}

// rrul (docs/rrul.md): phases, flent's flows (names, DSCP, the load window, nothing new after
// it), the four probes' series for idle + load + idle, 50 ms bins, latency_under_load; the
// cached wake-ups agree with a full scan (the load's end is an event the sender must see).
TEST(Simulation, RrulWorkload) {
  const std::string text = std::string(kBase) + R"(
[[traffic.rrul]]
from = "a"
to = "b"
start = "0.5s"
idle = "1s"
load = "2s"
probe_interval = "10ms"
bin = "50ms"
)";
  config::LoadedScenario s = load(text);
  SimOptions o;
  o.check_wakeups = true;
  const report::Run r = Simulation(s.runs[0], o).run();
  EXPECT_EQ(r, Simulation(s.runs[0]).run());  // deterministic, with or without the check
  ASSERT_EQ(r.phases.size(), 3u);
  EXPECT_EQ(r.phases[0], (report::Phase{"idle_before", 0.5, 1.5}));
  EXPECT_EQ(r.phases[1], (report::Phase{"load", 1.5, 3.5}));
  EXPECT_EQ(r.phases[2], (report::Phase{"idle_after", 3.5, 4.5}));
  ASSERT_EQ(r.intervals.size(), 100u);  // 5 s in 50 ms bins
  for (report::Direction d : report::kDirections) {
    const report::DirectionTransfer& t = r.transfer[d];
    ASSERT_EQ(t.flows.size(), 4u);
    const char* prefix = d == report::Direction::kAtoB ? "TCP upload " : "TCP download ";
    const std::pair<const char*, int> classes[] = {{"BE", 0}, {"BK", 8}, {"CS5", 40}, {"EF", 46}};
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_EQ(t.flows[k].name, std::string(prefix) + classes[k].first);
      EXPECT_EQ(t.flows[k].dscp, classes[k].second);
      EXPECT_EQ(t.flows[k].sender.start_s, 1.5);
      EXPECT_EQ(t.flows[k].sender.end_s, 3.5);
    }
    EXPECT_GT(r.latency_under_load->goodput_bps[d], 80e6);
    // Nothing before the load; nothing new once the last in-flight data has drained.
    for (const report::Interval& iv : r.intervals) {
      if (iv.end_s <= 1.5 + 1e-9 || iv.start_s >= 3.7 - 1e-9) {
        EXPECT_EQ(iv.directions[d].bytes, 0u) << iv.start_s;
      }
    }
  }
  for (const char* name : {"ping", "udp_ef", "udp_bk", "udp_be"}) {
    const report::ProbeLatency& p = r.latency_ms.at(name);
    ASSERT_EQ(p.series.time_s.size(), 400u) << name;  // 4 s every 10 ms
    EXPECT_DOUBLE_EQ(p.series.time_s.front(), 0.5);
    EXPECT_EQ(p.series.rtt_ms.size(), 400u);
    EXPECT_EQ(p.series.one_way_a_to_b_ms.empty(), p.kind == "icmp");
  }
  EXPECT_EQ(r.latency_ms.at("udp_ef").dscp, 46);
  EXPECT_EQ(r.latency_ms.at("udp_bk").dscp, 8);
  ASSERT_TRUE(r.latency_under_load.has_value());
  const report::LatencyUnderLoad& l = *r.latency_under_load;
  EXPECT_EQ(l.idle_rtt.count + l.idle_rtt.lost, 4u * 200);
  EXPECT_EQ(l.loaded_rtt.count + l.loaded_rtt.lost, 4u * 200);
  EXPECT_GT(l.loaded_rtt.mean, l.idle_rtt.mean + 1.0);  // the load queues
  EXPECT_GT(l.rpm, 0.0);
  EXPECT_TRUE(l.rpm_self_ms.has_value());
  EXPECT_EQ(l.per_dscp_flow_srtt.size(), 4u);
  EXPECT_EQ(report::check_results(report::Results{{}, {r}}), std::vector<std::string>{});
}

// The rrul metrics of docs/rrul.md recomputed from the run's raw series, independently of
// report::compute_latency_under_load: mean probe RTT per phase kind, and RPM after
// draft-ietf-ippm-responsiveness (single-sided 95 % trimmed means of the loaded probe RTTs and
// of the flows' SRTT samples taken during the load phase; the whole load phase is the window
// when it is shorter than 4 s).
struct RrulReference {
  double idle_ms = 0, loaded_ms = 0, rpm = 0;
};

double trimmed_mean_95(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t keep = std::max<size_t>(1, (v.size() * 95 + 99) / 100);
  double sum = 0;
  for (size_t k = 0; k < keep; ++k) {
    sum += v[k];
  }
  return sum / static_cast<double>(keep);
}

RrulReference rrul_reference(const report::Run& r) {
  auto phase_at = [&](double t) -> std::string {
    for (const report::Phase& p : r.phases) {
      if (t >= p.start_s && t < p.end_s) {
        return p.name;
      }
    }
    return "";
  };
  std::vector<double> idle, loaded, self;
  for (const auto& [name, probe] : r.latency_ms) {
    for (size_t k = 0; k < probe.series.time_s.size(); ++k) {
      const std::string phase = phase_at(probe.series.time_s[k]);
      const std::optional<double>& rtt = probe.series.rtt_ms[k];
      if (rtt && phase == "load") {
        loaded.push_back(*rtt);
      } else if (rtt && phase.starts_with("idle")) {
        idle.push_back(*rtt);
      }
    }
  }
  double load_start = 0, load_end = 0;
  for (const report::Phase& p : r.phases) {
    if (p.name == "load") {
      load_start = p.start_s;
      load_end = p.end_s;
    }
  }
  for (const report::Interval& iv : r.intervals) {
    if (iv.end_s > load_start && iv.end_s <= load_end) {
      for (report::Direction d : report::kDirections) {
        for (const report::FlowInterval& f : iv.directions[d].flows) {
          if (f.srtt_ms) {
            self.push_back(*f.srtt_ms);
          }
        }
      }
    }
  }
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) {
      sum += x;
    }
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  RrulReference ref;
  ref.idle_ms = mean(idle);
  ref.loaded_ms = mean(loaded);
  ref.rpm = (60000.0 / trimmed_mean_95(loaded) + 60000.0 / trimmed_mean_95(self)) / 2;
  return ref;
}

TEST(Simulation, RrulPublishedMetrics) {
  const std::string text = std::string(kBase) + R"(
[[traffic.rrul]]
from = "a"
to = "b"
idle = "1s"
load = "3s"
[published]
induced_latency_ms = 10.0
rpm = 1000.0
idle_latency_ms = 2.0
loaded_latency_ms = 12.0
)";
  config::LoadedScenario s = load(text);
  const report::Run r = Simulation(s.runs[0]).run();
  ASSERT_EQ(r.comparison.size(), 4u);
  for (const report::Comparison& c : r.comparison) {
    ASSERT_TRUE(c.simulated.has_value()) << c.metric;
  }
  const auto simulated = [&](const std::string& m) {
    for (const report::Comparison& c : r.comparison) {
      if (c.metric == m) {
        return *c.simulated;
      }
    }
    return -1.0;
  };
  const RrulReference ref = rrul_reference(r);
  // Probe RTTs are recorded to the nanosecond: the means agree to 1e-6 ms.
  EXPECT_NEAR(simulated("idle_latency_ms"), ref.idle_ms, 1e-6);
  EXPECT_NEAR(simulated("loaded_latency_ms"), ref.loaded_ms, 1e-6);
  EXPECT_NEAR(simulated("induced_latency_ms"), ref.loaded_ms - ref.idle_ms, 1e-6);
  EXPECT_NEAR(simulated("rpm"), ref.rpm, 1e-6 * ref.rpm);
  // And the physics: 2 x 1 ms of wire delay plus serialisation, interrupt coalescing and CPU
  // costs of the generic NICs when idle (2.66 ms), a queue under load.
  EXPECT_GT(ref.idle_ms, 2.0);
  EXPECT_LT(ref.idle_ms, 3.0);
  EXPECT_GT(ref.loaded_ms, ref.idle_ms + 1.0);
  EXPECT_LT(ref.rpm, 60000.0 / 2.0);
}

TEST(Simulation, VaryAndPublishedComparison) {
  const std::string text = std::string(kBase) + R"(
[[traffic.ping]]
from = "a"
to = "b"
interval = "100ms"
[vary]
"wire.delay" = ["1ms", "5ms"]
[published]
"delay=5ms".ping_ms = 10.0
)";
  config::LoadedScenario s = load(text);
  ASSERT_EQ(s.runs.size(), 2u);
  report::Run r = Simulation(s.runs[1]).run();
  ASSERT_EQ(r.comparison.size(), 1u);
  EXPECT_EQ(r.comparison[0].metric, "ping_ms");
  ASSERT_TRUE(r.comparison[0].simulated.has_value());
  EXPECT_NEAR(*r.comparison[0].simulated, 10.0, 0.5);
  EXPECT_EQ(r.params.size(), 1u);
}

// Each host's wake-up is cached per endpoint (re-read only after a call into the endpoint);
// SimOptions::check_wakeups recomputes it by a full scan at every reschedule and throws on a
// difference. Flows in both directions, staggered starts and stops (a receiver whose flow is
// started by the other host), loss (RTO and SACK timers), ping and UDP probes that start late
// and stop early, on a platform NIC and on a USB NIC with PAUSE.
TEST(Simulation, CachedWakeupsMatchAFullScan) {
  const std::string platform = std::string(kBase) + R"(
[[traffic.tcp]]
from = "a"
to = "b"
streams = 3
start = "200ms"
stop = "2s"
[[traffic.tcp]]
from = "b"
to = "a"
start = "1s"
cc = "reno"
[[traffic.ping]]
from = "b"
to = "a"
interval = "30ms"
start = "500ms"
stop = "2500ms"
[[traffic.udp_probe]]
from = "a"
to = "b"
interval = "7ms"
)";
  std::string lossy = platform;
  lossy.replace(lossy.find("delay = \"1ms\""), 14, "delay = \"1ms\"\nloss = \"1%\"");
  const std::string usb = R"(
[scenario]
name = "usb"
duration = "3s"
seed = 5
[hosts.a]
cpu = "arm-cortex-a5"
[hosts.a.nic]
preset = "smsc95xx"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "10us"
[[traffic.tcp]]
from = "b"
to = "a"
streams = 2
[[traffic.tcp]]
from = "a"
to = "b"
start = "1500ms"
[[traffic.ping]]
from = "b"
to = "a"
interval = "20ms"
)";
  for (const std::string& text : {platform, lossy, usb}) {
    config::LoadedScenario s = load(text);
    ASSERT_EQ(s.runs.size(), 1u);
    SimOptions checked;
    checked.check_wakeups = true;
    Simulation sim(s.runs[0], checked);
    report::Run r;
    ASSERT_NO_THROW(r = sim.run());
    EXPECT_GT(r.goodput_bps[report::Direction::kAtoB], 1e6);
    EXPECT_GT(r.goodput_bps[report::Direction::kBtoA], 1e6);
    // The check only observes: the same run without it gives the same results.
    EXPECT_EQ(r, Simulation(s.runs[0]).run());
  }
}

}  // namespace
}  // namespace nicsim::sim

// ---- networks (until the scenario syntax lands, built by filling Scenario.routers/links) ----

namespace nicsim::sim {
namespace {

// a -- r -- b: host a on r.lan at 1 Gbit/s, r.wan to host b at `wan_rate`, 1 ms each way.
config::Run dumbbell(const std::string& traffic, Rate wan_rate, Duration per_forward) {
  config::LoadedScenario s = load(std::string(kBase) + traffic);
  config::Run run = s.runs.at(0);
  config::Scenario& sc = run.scenario;
  const config::PresetSearch search = config::PresetSearch::only({NICSIM_TEST_PRESETS_DIR});
  config::RouterConfig r;
  r.name = "r";
  r.cpu_preset = "x86-desktop";
  r.cpu = config::load_cpu_preset("x86-desktop", "", search);
  r.cpu.per_forward = per_forward;
  r.interfaces = {config::RouterInterfaceConfig{"lan", sc.hosts[0].nic, config::QdiscConfig()},
                  config::RouterInterfaceConfig{"wan", sc.hosts[0].nic, config::QdiscConfig()}};
  sc.routers = {r};
  config::WireConfig fast{Rate::gbit(1), Duration::ms(1), 0, Duration::zero()};
  config::WireConfig wan{wan_rate, Duration::ms(1), 0, Duration::zero()};
  sc.links = {config::LinkConfig{{"a", "r.lan"}, fast, fast},
              config::LinkConfig{{"r.wan", "b"}, wan, wan}};
  return run;
}

const char* kTcpAndPing = R"(
[[traffic.tcp]]
from = "a"
to = "b"
[[traffic.ping]]
from = "a"
to = "b"
interval = "100ms"
)";

TEST(SimulationNetwork, TcpThroughARouterFillsTheBottleneckAndPingCrossesFourWires) {
  const config::Run run = dumbbell(kTcpAndPing, Rate::mbit(100), Duration::ns(300));
  const report::Run r = Simulation(run).run();
  const double mbit = r.goodput_bps[report::Direction::kAtoB] / 1e6;
  EXPECT_GT(mbit, 85.0);
  EXPECT_LT(mbit, 94.2);
  // Four 1 ms propagation delays on the round trip.
  EXPECT_GE(r.latency_ms.at("ping").rtt.min, 4.0);
  // Per-interface queue series: hosts by name, router interfaces as router.iface.
  EXPECT_EQ(r.queues.count("a"), 1u);
  EXPECT_EQ(r.queues.count("r.wan"), 1u);
  EXPECT_EQ(r.queues.count("r.lan"), 1u);
  EXPECT_EQ(r.queues.at("r.wan").time_s.size(), r.queues.at("a").time_s.size());
  // Per-node and per-interface counters: every data frame crossed the router.
  EXPECT_GT(r.nodes.at("r").forwarded, 1000u);
  EXPECT_EQ(r.nodes.at("r").no_route, 0u);
  EXPECT_TRUE(r.nodes.at("r").router);
  EXPECT_GT(r.nodes.at("r").cpu_utilization, 0.0);
  // Forwarded to r.wan = put on its wire + what its qdisc and ring still hold at the end (the
  // bottleneck's standing queue: pfifo_fast 1000 packets + the ring) + what they dropped.
  const report::InterfaceResult& wan = r.interfaces.at("r.wan");
  EXPECT_GE(wan.forwarded_out, wan.tx_packets);
  EXPECT_LE(wan.forwarded_out, wan.tx_packets + wan.qdisc_drops + 1000 + 4096);
  // What host a sent reached the router, but for the frames still in flight at the end.
  EXPECT_LE(r.interfaces.at("r.lan").rx_packets, r.interfaces.at("a").tx_packets);
  EXPECT_GE(r.interfaces.at("r.lan").rx_packets + 64, r.interfaces.at("a").tx_packets);
  // Stage attribution is summed over both hops and includes the router's forwarding.
  const auto& st = r.stages[report::Direction::kAtoB];
  ASSERT_EQ(st.size(), 5u);
  EXPECT_EQ(st[4].stage, "forward");
  EXPECT_GE(st[2].mean_ms, 2 * 0.0121);  // two 1 Gbit/s serialisations at least
  EXPECT_EQ(r, Simulation(run).run());   // deterministic
}

TEST(SimulationNetwork, ASlowRouterCoreCapsTheGoodput) {
  // 100 us per forwarded packet (data and ACKs share the core): at most ~10 kpps in total.
  const config::Run run = dumbbell(kTcpAndPing, Rate::gbit(1), Duration::us(100));
  const report::Run r = Simulation(run).run();
  const double mbit = r.goodput_bps[report::Direction::kAtoB] / 1e6;
  // 2 data segments + 1 ACK per 3 jobs: ~6.6 k segments/s of 1448 B = ~77 Mbit/s at most.
  EXPECT_LT(mbit, 80.0);
  EXPECT_GT(mbit, 40.0);
}

// GRO (issue 17): a 10 Gbit/s receiver on one desktop core. Without GRO every frame pays the
// whole receive cost and the core caps the flow; with GRO the frames of a poll merge, the stack
// cost is paid per merged packet and the flow gets more goodput at a lower CPU cost per byte.
TEST(Simulation, GroMergesFramesAndRaisesGoodputAt10Gbit) {
  const std::string text = R"(
[scenario]
name = "gro 10G"
duration = "1s"
seed = 1
[hosts.a]
cpu = "x86-desktop"
nic = "generic-10g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-10g"
[wire]
rate = "10Gbit"
delay = "50us"
[[traffic.tcp]]
from = "a"
to = "b"
[vary]
"hosts.b.nic.gro" = [false, true]
)";
  config::LoadedScenario s = load(text);
  ASSERT_EQ(s.runs.size(), 2u);
  report::Run off = Simulation(s.runs[0]).run();
  report::Run on = Simulation(s.runs[1]).run();
  // A run varying gro reports both runs' receivers; host a (gro off in both) too.
  ASSERT_TRUE(off.rx_batching.contains("b"));
  ASSERT_TRUE(on.rx_batching.contains("b"));
  const report::RxBatching& b0 = off.rx_batching.at("b");
  const report::RxBatching& b1 = on.rx_batching.at("b");
  EXPECT_FALSE(b0.gro);
  EXPECT_TRUE(b1.gro);
  EXPECT_EQ(b0.frames, b0.packets);
  EXPECT_DOUBLE_EQ(b0.frames_per_packet, 1.0);
  EXPECT_GT(b1.frames, 0u);
  EXPECT_LT(b1.packets * 4, b1.frames) << "GRO merges several frames per packet";
  EXPECT_GT(b1.largest, 10u);
  EXPECT_LE(b1.largest, 45u) << "52 + 45 x 1448 bytes is the largest packet below 64 KiB";
  EXPECT_LT(b1.rx_cpu_ns_per_byte, b0.rx_cpu_ns_per_byte);
  const double g0 = off.goodput_bps[report::Direction::kAtoB];
  const double g1 = on.goodput_bps[report::Direction::kAtoB];
  EXPECT_GT(g1, g0 * 1.3) << g0 << " -> " << g1;
  // One ACK per merged packet (or fewer, by delayed ACK): far fewer ACK frames than data frames.
  EXPECT_LT(on.rx_batching.at("a").frames * 4, b1.frames);
}

// Deferred hard IRQs (issue 17 item 3): a 2 Gbit/s UDP flood into a receiver without hardware
// moderation. With napi_defer_hard_irqs 10 and gro_flush_timeout 20 us the 20 us hrtimer polls
// instead of an interrupt per frame: far fewer interrupts per frame, less CPU per frame (the
// IRQ and per-poll costs are shared), and each frame waits for the timer (more latency).
TEST(Simulation, DeferHardIrqsCutsInterruptsPerFrameAndAddsLatency) {
  const std::string text = R"(
[scenario]
name = "defer"
duration = "200ms"
seed = 1
[hosts.a]
cpu = "x86-desktop"
nic = "generic-10g"
[hosts.b]
cpu = "x86-desktop"
[hosts.b.nic]
preset = "generic-10g"
rx_coalesce.usecs = "0us"
rx_coalesce.frames = 1
gro_flush_timeout = "20us"
[wire]
rate = "10Gbit"
delay = "50us"
[[traffic.udp_flood]]
from = "a"
to = "b"
rate = "2Gbit"
[[traffic.ping]]
from = "a"
to = "b"
interval = "1ms"
[vary]
"hosts.b.nic.napi_defer_hard_irqs" = [0, 10]
)";
  config::LoadedScenario s = load(text);
  ASSERT_EQ(s.runs.size(), 2u);
  report::Run off = Simulation(s.runs[0]).run();
  report::Run on = Simulation(s.runs[1]).run();
  ASSERT_TRUE(off.rx_batching.contains("b"));
  ASSERT_TRUE(on.rx_batching.contains("b"));
  const report::RxBatching& b0 = off.rx_batching.at("b");
  const report::RxBatching& b1 = on.rx_batching.at("b");
  ASSERT_GT(b0.frames, 10000u);
  const double ipf0 = static_cast<double>(b0.rx_irqs + b0.tx_irqs) / static_cast<double>(b0.frames);
  const double ipf1 = static_cast<double>(b1.rx_irqs + b1.tx_irqs) / static_cast<double>(b1.frames);
  EXPECT_GT(ipf0, 0.9) << "rx-frames 1: about one interrupt per frame";
  EXPECT_LT(ipf1, 0.01) << "deferred: the timer polls, the IRQ stays masked";
  EXPECT_GT(b1.napi_timer_polls, b1.frames / 10);
  EXPECT_LT(b1.cpu_busy_s / static_cast<double>(b1.frames),
            b0.cpu_busy_s / static_cast<double>(b0.frames));
  EXPECT_GT(on.latency_ms.at("ping").rtt.p50, off.latency_ms.at("ping").rtt.p50);
}

// Busy polling (issue 17 item 3): the pinging application spins up to busy_read for the reply
// and polls it itself: the rx-usecs wait and the IRQ go, the spin is CPU time.
TEST(Simulation, BusyPollingCutsLatencyAndBurnsCpu) {
  const std::string text = R"(
[scenario]
name = "busy poll"
duration = "200ms"
seed = 1
[hosts.a]
cpu = "x86-desktop"
nic = "generic-10g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-10g"
[wire]
rate = "10Gbit"
delay = "5us"
[[traffic.ping]]
from = "a"
to = "b"
interval = "1ms"
[vary]
"hosts.a.nic.busy_read" = ["0s", "200us"]
)";
  config::LoadedScenario s = load(text);
  ASSERT_EQ(s.runs.size(), 2u);
  report::Run off = Simulation(s.runs[0]).run();
  report::Run on = Simulation(s.runs[1]).run();
  ASSERT_TRUE(on.rx_batching.contains("a"));
  ASSERT_TRUE(off.rx_batching.contains("a"));
  const report::RxBatching& a0 = off.rx_batching.at("a");
  const report::RxBatching& a1 = on.rx_batching.at("a");
  // 50 us of rx-usecs on a's side are gone from every round trip.
  EXPECT_LT(on.latency_ms.at("ping").rtt.p50 + 0.04, off.latency_ms.at("ping").rtt.p50);
  EXPECT_EQ(a0.busy_poll_sessions, 0u);
  EXPECT_EQ(a1.busy_poll_sessions, a1.frames) << "every reply is polled by the application";
  EXPECT_GT(a1.busy_spin_s, 0.0);
  EXPECT_GT(a1.cpu_busy_s, 10 * a0.cpu_busy_s) << "the spin is counted as busy time";
  EXPECT_LT(a1.rx_irqs + a1.tx_irqs, a0.rx_irqs + a0.tx_irqs) << "no RX interrupts for the replies";
}

}  // namespace
}  // namespace nicsim::sim

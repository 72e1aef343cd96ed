// Scenario files: the layer-neutral Scenario, [vary] expansion (order, labels, params), the
// dump round trip, and strictness - every error names file:line:column and the full key path
// (docs/scenarios.md: one file for both back-ends; unknown keys and missing units are errors).

#include "nicsim/config/scenario.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nicsim/algo/codel.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/tbf.h"
#include "nicsim/config/traffic_plan.h"

namespace nicsim::config {
namespace {

LoadOptions test_options() {
  LoadOptions o;
  o.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
  o.standard_presets = false;
  return o;
}

LoadedScenario load(const std::string& text, const std::string& file = "scenarios/x.toml") {
  return load_scenario_text(text, file, test_options());
}

std::string testdata(const std::string& name) {
  return std::string(NICSIM_TEST_SCENARIOS_DIR) + "/" + name;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

std::string error_of_text(const std::string& text) {
  return error_of([&] { load(text); });
}

// A small valid scenario; tests append to it or replace lines. Line numbers:
//  1 [scenario]            7 [hosts.b]              13 [[traffic.tcp]]
//  2 name = "t"            8 cpu = "x86-desktop"    14 from = "a"
//  3 duration = "10s"      9 nic = "generic-1g"     15 to = "b"
//  4 [hosts.a]            10 [wire]
//  5 cpu = "arm-cortex-a5" 11 rate = "100Mbit"
//  6 nic = "stmmac"       12 delay = "100us"
const std::vector<std::string> kBase = {"[scenario]",
                                        "name = \"t\"",
                                        "duration = \"10s\"",
                                        "[hosts.a]",
                                        "cpu = \"arm-cortex-a5\"",
                                        "nic = \"stmmac\"",
                                        "[hosts.b]",
                                        "cpu = \"x86-desktop\"",
                                        "nic = \"generic-1g\"",
                                        "[wire]",
                                        "rate = \"100Mbit\"",
                                        "delay = \"100us\"",
                                        "[[traffic.tcp]]",
                                        "from = \"a\"",
                                        "to = \"b\""};

// kBase with line `n` (1-based) replaced by `with` (which may span several lines), plus `tail`.
std::string base(int n = 0, const std::string& with = "", const std::string& tail = "") {
  std::string out;
  for (size_t i = 0; i < kBase.size(); ++i) {
    out += (static_cast<int>(i) + 1 == n ? with : kBase[i]) + "\n";
  }
  return out + tail;
}

// kBase with several lines replaced.
std::string edit(const std::vector<std::pair<int, std::string>>& repl,
                 const std::string& tail = "") {
  std::string out;
  for (size_t i = 0; i < kBase.size(); ++i) {
    std::string line = kBase[i];
    for (const auto& [n, with] : repl) {
      if (static_cast<int>(i) + 1 == n) {
        line = with;
      }
    }
    out += line + "\n";
  }
  return out + tail;
}

TEST(Scenario, LoadsTheSeedS3Example) {
  const LoadedScenario ls = load_scenario_file(testdata("stmmac_bql.toml"), test_options());
  const Scenario& s = ls.scenario;
  EXPECT_EQ(s.name, "stmmac BQL (seed S3)");
  EXPECT_EQ(s.duration, Duration::s(30));
  EXPECT_EQ(s.seed, 1u);
  ASSERT_EQ(s.hosts.size(), 2u);
  EXPECT_EQ(s.hosts[0].name, "board");  // file order, not alphabetical
  EXPECT_EQ(s.hosts[1].name, "pc");
  const HostConfig& board = *s.host("board");
  EXPECT_EQ(board.cpu_preset, "arm-cortex-a5");
  EXPECT_EQ(board.cpu.per_rx_frame, Duration::us(10));
  EXPECT_EQ(board.nic.preset, "stmmac");
  EXPECT_EQ(board.nic.model, NicModel::kPlatform);
  EXPECT_TRUE(board.nic.platform.doorbell.bql);
  EXPECT_EQ(board.qdisc.kind(), "pfifo_fast");
  EXPECT_TRUE(board.nic.platform.qdisc_bypass);  // pfifo_fast sets TCQ_F_CAN_BYPASS
  EXPECT_EQ(board.tcp.cc, "cubic");
  EXPECT_EQ(s.host("pc")->qdisc.kind(), "pfifo_fast");  // the default qdisc
  EXPECT_EQ(s.wire.rate, Rate::mbit(100));
  EXPECT_EQ(s.wire.delay, Duration::us(100));
  EXPECT_EQ(s.wire.params(7).seed, 7u);
  ASSERT_EQ(s.traffic.tcp.size(), 1u);
  EXPECT_EQ(s.traffic.tcp[0].streams, 4);
  ASSERT_EQ(s.traffic.ping.size(), 1u);
  EXPECT_EQ(s.traffic.ping[0].interval, Duration::ms(10));
  EXPECT_EQ(s.traffic.ping[0].start, Duration::s(5));
  EXPECT_EQ(s.traffic.ping[0].size, 56);

  // [vary]: the product, first key outermost, labels with short names.
  ASSERT_EQ(ls.runs.size(), 4u);
  EXPECT_EQ(ls.runs[0].label, "bql=false rate=100Mbit");
  EXPECT_EQ(ls.runs[1].label, "bql=false rate=1Gbit");
  EXPECT_EQ(ls.runs[2].label, "bql=true rate=100Mbit");
  EXPECT_EQ(ls.runs[3].label, "bql=true rate=1Gbit");
  const auto& p = ls.runs[1].params;
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].first, "hosts.board.nic.bql");
  EXPECT_EQ(p[0].second, VaryValue(false));
  EXPECT_EQ(p[1].first, "wire.rate");
  EXPECT_EQ(p[1].second, VaryValue(std::string("1Gbit")));
  for (size_t i = 0; i < 4; ++i) {
    const Scenario& r = ls.runs[i].scenario;
    EXPECT_EQ(r.host("board")->nic.platform.doorbell.bql, i >= 2) << i;
    EXPECT_EQ(r.wire.rate, i % 2 == 0 ? Rate::mbit(100) : Rate::gbit(1)) << i;
    EXPECT_TRUE(r.vary.empty());
    EXPECT_TRUE(r.published.empty());
    EXPECT_EQ(r.name, s.name);
  }
  // [published]: run-level metrics; "source" applies to every run.
  using PV = PublishedValue;
  using M = std::vector<std::pair<std::string, PV>>;
  EXPECT_EQ(ls.runs[0].published,
            (M{{"source", PV(std::string("S3 (netdev, 2014-12-28)"))}, {"ping_ms", PV(10.0)}}));
  EXPECT_EQ(ls.runs[1].published, (M{{"source", PV(std::string("S3 (netdev, 2014-12-28)"))}}));
  EXPECT_EQ(ls.runs[2].published,
            (M{{"source", PV(std::string("S3 (netdev, 2014-12-28)"))}, {"ping_ms", PV(3.0)}}));

  // Where keys were written (for back-ends that cannot honour one).
  EXPECT_EQ(s.where("hosts.board.nic.bql").to_string(), testdata("stmmac_bql.toml") + ":15:1");
  EXPECT_EQ(ls.runs[3].scenario.where("hosts.board.nic.bql").to_string(),
            testdata("stmmac_bql.toml") + ":40:33");  // the [vary] value
}

TEST(Scenario, WithoutVaryThereIsOneUnlabelledRun) {
  const LoadedScenario ls = load(base());
  ASSERT_EQ(ls.runs.size(), 1u);
  EXPECT_EQ(ls.runs[0].label, "");
  EXPECT_TRUE(ls.runs[0].params.empty());
  EXPECT_EQ(ls.runs[0].scenario, ls.scenario);
  EXPECT_EQ(ls.scenario.host("b")->nic.preset, "generic-1g");
  EXPECT_EQ(ls.scenario.seed, 1u);  // default seed
  EXPECT_EQ(ls.scenario.traffic.tcp[0].streams, 1);
}

TEST(Scenario, VaryExpandsInOrderWithUniqueShortNames) {
  const LoadedScenario ls = load(base(0, "",
                                      "[vary]\n"
                                      "\"hosts.a.nic.bql\" = [true, false]\n"
                                      "\"hosts.b.nic.bql\" = [false, true]\n"
                                      "\"traffic.tcp[0].streams\" = [1, 2, 8]\n"));
  ASSERT_EQ(ls.scenario.vary.size(), 3u);
  EXPECT_EQ(ls.scenario.vary[0].short_name, "a.nic.bql");
  EXPECT_EQ(ls.scenario.vary[1].short_name, "b.nic.bql");
  EXPECT_EQ(ls.scenario.vary[2].short_name, "streams");
  ASSERT_EQ(ls.runs.size(), 12u);
  EXPECT_EQ(ls.runs[0].label, "a.nic.bql=true b.nic.bql=false streams=1");
  EXPECT_EQ(ls.runs[1].label, "a.nic.bql=true b.nic.bql=false streams=2");
  EXPECT_EQ(ls.runs[2].label, "a.nic.bql=true b.nic.bql=false streams=8");
  EXPECT_EQ(ls.runs[3].label, "a.nic.bql=true b.nic.bql=true streams=1");
  EXPECT_EQ(ls.runs[11].label, "a.nic.bql=false b.nic.bql=true streams=8");
  EXPECT_EQ(ls.runs[5].scenario.traffic.tcp[0].streams, 8);
  EXPECT_TRUE(ls.runs[5].scenario.host("a")->nic.platform.doorbell.bql);
  EXPECT_TRUE(ls.runs[5].scenario.host("b")->nic.platform.doorbell.bql);
  EXPECT_FALSE(ls.runs[11].scenario.host("a")->nic.platform.doorbell.bql);
  EXPECT_EQ(ls.runs[11].params[2].first, "traffic.tcp[0].streams");
  EXPECT_EQ(ls.runs[11].params[2].second, VaryValue(int64_t{8}));
}

// The three seed knobs varied through a scenario reach the model Params.
TEST(Scenario, SeedKnobsVaryTheModelParams) {
  const std::string text =
      base(6, "nic = \"smsc95xx\"", "[vary]\n\"hosts.a.nic.turbo_mode\" = [false, true]\n");
  const LoadedScenario ls = load(text);
  ASSERT_EQ(ls.runs.size(), 2u);
  EXPECT_EQ(ls.runs[0].label, "turbo_mode=false");
  EXPECT_EQ(ls.runs[0].scenario.host("a")->nic.usb.rx_aggregation.mode,
            algo::UsbRxAggregator::Mode::kSingleFrame);
  EXPECT_EQ(ls.runs[1].scenario.host("a")->nic.usb.rx_aggregation.mode,
            algo::UsbRxAggregator::Mode::kMultiFrame);

  const LoadedScenario asix =
      load(base(6, "[hosts.a.nic]\npreset = \"ax88178\"\ndriver = \"linux_usbnet\"",
                "[vary]\n\"hosts.a.nic.rx_burst\" = [\"2KiB\", \"16KiB\"]\n"));
  ASSERT_EQ(asix.runs.size(), 2u);
  EXPECT_EQ(asix.runs[0].label, "rx_burst=2KiB");
  EXPECT_EQ(asix.runs[0].scenario.host("a")->nic.usb.rx_aggregation.burst_cap_bytes, 2048);
  EXPECT_EQ(asix.runs[1].scenario.host("a")->nic.usb.rx_aggregation.burst_cap_bytes, 16'384);
  EXPECT_EQ(asix.runs[1].scenario.host("a")->nic.usb.rx_urb_bytes, 16'384);
  EXPECT_EQ(asix.runs[1].scenario.host("a")->nic.usb.driver, model::UsbNic::Driver::kLinux);
}

TEST(Scenario, VaryingPresetNamesKeepsOverrides) {
  const LoadedScenario ls =
      load(base(6, "[hosts.a.nic]\npreset = \"stmmac\"\nbql = false",
                "[vary]\n\"hosts.a.nic\" = [\"stmmac\", \"generic-1g\"]\n"
                "\"hosts.b.qdisc\" = [\"pfifo_fast\", \"fq_codel\", \"codel\"]\n"));
  ASSERT_EQ(ls.runs.size(), 6u);
  EXPECT_EQ(ls.runs[3].label, "nic=generic-1g qdisc=pfifo_fast");
  const HostConfig& a = *ls.runs[3].scenario.host("a");
  EXPECT_EQ(a.nic.preset, "generic-1g");
  EXPECT_FALSE(a.nic.platform.doorbell.bql);  // the override still applies
  EXPECT_TRUE(a.nic.platform.tso);            // from the generic-1g preset
  const HostConfig& b4 = *ls.runs[4].scenario.host("b");
  EXPECT_EQ(b4.qdisc.kind(), "fq_codel");
  EXPECT_TRUE(b4.nic.platform.qdisc_bypass);
  const HostConfig& b5 = *ls.runs[5].scenario.host("b");
  EXPECT_EQ(b5.qdisc.kind(), "codel");
  EXPECT_FALSE(b5.nic.platform.qdisc_bypass);  // sch_codel has no TCQ_F_CAN_BYPASS
}

TEST(Scenario, FullExampleParsesEverySection) {
  const LoadedScenario ls = load_scenario_file(testdata("full.toml"), test_options());
  const Scenario& s = ls.scenario;
  EXPECT_EQ(s.duration, Duration::ms(12'500));
  EXPECT_EQ(s.seed, 42u);
  const HostConfig& a = *s.host("a");
  EXPECT_EQ(a.cpu.per_rx_frame, Duration::us(11));
  EXPECT_EQ(a.nic.usb.driver, model::UsbNic::Driver::kLinux);
  EXPECT_EQ(a.nic.usb.pause_time, Duration::us(400));
  EXPECT_EQ(a.qdisc.kind(), "htb");
  EXPECT_EQ(a.qdisc.params<HtbConfig>().htb.default_class, 0x20u);
  ASSERT_EQ(a.qdisc.params<HtbConfig>().classes.size(), 3u);
  EXPECT_EQ(a.qdisc.params<HtbConfig>().classes[1].id, 0x10u);
  EXPECT_EQ(a.qdisc.params<HtbConfig>().classes[1].parent, 0x1u);
  EXPECT_EQ(a.qdisc.params<HtbConfig>().classes[1].ceil, Rate::mbit(90));
  ASSERT_EQ(a.qdisc.params<HtbConfig>().classes[1].leaf.size(), 1u);
  EXPECT_EQ(a.qdisc.params<HtbConfig>().classes[1].leaf[0].kind(), "fq_codel");
  EXPECT_EQ(a.qdisc.params<HtbConfig>().classes[1].leaf[0].params<algo::FqCodel::Params>().quantum,
            300);
  EXPECT_EQ(a.qdisc.params<HtbConfig>().classes[2].burst, 15 * 1024);
  EXPECT_EQ(
      a.qdisc.params<HtbConfig>().classes[2].leaf[0].params<algo::Codel::Params>().ce_threshold,
      Duration::ms(1));
  EXPECT_FALSE(a.nic.platform.qdisc_bypass);
  EXPECT_NO_THROW(a.qdisc.build());
  EXPECT_EQ(a.tcp, (TcpConfig{"reno", 1448, 4 << 20, 1 << 20, 256 << 10, true, true, 4}));
  const HostConfig& b = *s.host("b");
  EXPECT_EQ(b.nic.platform.tx_ring_size, 1024);
  EXPECT_EQ(b.nic.platform.rx_coalesce.usecs, Duration::us(100));
  EXPECT_EQ(b.qdisc.params<algo::Tbf::Params>().rate, Rate::mbit(50));
  EXPECT_EQ(b.qdisc.params<algo::Tbf::Params>().latency, Duration::ms(50));
  EXPECT_EQ(s.wire.loss_ppb, 100'000);
  EXPECT_DOUBLE_EQ(s.wire.params(1).loss, 0.0001);
  EXPECT_EQ(s.wire.jitter, Duration::us(100));
  ASSERT_EQ(s.traffic.tcp.size(), 2u);
  EXPECT_EQ(s.traffic.tcp[0].dscp, 8);  // CS1
  EXPECT_EQ(s.traffic.tcp[1].dscp, 10);
  EXPECT_EQ(s.traffic.tcp[1].stop, Duration::s(10));
  EXPECT_EQ(s.traffic.tcp[1].cc, "cubic");
  EXPECT_EQ(s.traffic.udp_probe[0].dscp, 46);  // EF
  EXPECT_EQ(s.traffic.udp_probe[0].size, 64);
  EXPECT_EQ(s.traffic.rrul[0].probe_interval, Duration::ms(50));
  EXPECT_EQ(s.traffic.rrul[0].idle, Duration::s(1));
  EXPECT_EQ(s.traffic.rrul[0].load, Duration::s(5));
  EXPECT_EQ(s.traffic.rrul[0].bin, Duration::ms(100));
  EXPECT_EQ(s.traffic.rrul[0].load_start(), Duration::s(3));
  EXPECT_EQ(s.traffic.rrul[0].load_end(), Duration::s(8));
  EXPECT_EQ(s.traffic.rrul[0].end(), Duration::s(9));
  ASSERT_EQ(ls.runs.size(), 4u);
  EXPECT_EQ(ls.runs[3].label, "turbo_mode=true rate=80Mbit");
  EXPECT_EQ(ls.runs[3].scenario.host("b")->qdisc.params<algo::Tbf::Params>().rate, Rate::mbit(80));
  EXPECT_EQ(ls.runs[2].published.size(), 2u);  // turbo_mode=true, rate=50Mbit
  EXPECT_TRUE(ls.runs[3].published.empty());
}

// parse -> dump -> parse -> equal, for the file as written (with [vary] and [published]) and for
// every run's effective configuration; the dump is stable.
TEST(Scenario, DumpRoundTrip) {
  for (const char* name : {"full.toml", "stmmac_bql.toml"}) {
    SCOPED_TRACE(name);
    const LoadedScenario ls = load_scenario_file(testdata(name), test_options());
    const std::string d = dump(ls.scenario);
    const LoadedScenario again = load(d, "dump.toml");
    EXPECT_EQ(again.scenario, ls.scenario) << d;
    EXPECT_EQ(dump(again.scenario), d);
    ASSERT_EQ(again.runs.size(), ls.runs.size());
    for (size_t i = 0; i < ls.runs.size(); ++i) {
      const std::string rd = dump(ls.runs[i].scenario);
      const LoadedScenario r = load(rd, "run.toml");
      EXPECT_EQ(r.scenario, ls.runs[i].scenario) << rd;
      EXPECT_EQ(again.runs[i].label, ls.runs[i].label);
      EXPECT_EQ(again.runs[i].published, ls.runs[i].published);
    }
  }
  // The dump states every value with its unit.
  const std::string d =
      dump(load_scenario_file(testdata("stmmac_bql.toml"), test_options()).scenario);
  for (const char* line :
       {"duration = \"30s\"\n", "rx_coalesce.usecs = \"391.7us\"\n", "per_rx_frame = \"10us\"\n",
        "mss = \"1448B\"\n", "rate = \"100Mbit\"\n", "loss = \"0%\"\n", "jitter = \"0s\"\n",
        "\"hosts.board.nic.bql\" = [false, true]\n", "kind = \"pfifo_fast\"\n", "limit = 1000\n"}) {
    EXPECT_NE(d.find(line), std::string::npos) << line;
  }
}

TEST(Scenario, EqualityNoticesEveryPart) {
  const Scenario s = load(base()).scenario;
  EXPECT_FALSE(load(base(2, "name = \"u\"")).scenario == s);
  EXPECT_FALSE(load(base(12, "delay = \"101us\"")).scenario == s);
  EXPECT_FALSE(load(base(5, "cpu = { preset = \"arm-cortex-a5\", per_kick = \"1us\" }")).scenario ==
               s);
  EXPECT_FALSE(load(base(6, "[hosts.a.nic]\npreset = \"stmmac\"\nnapi_budget = 32")).scenario == s);
  EXPECT_FALSE(load(base(15, "to = \"b\"\nstreams = 2")).scenario == s);
  EXPECT_FALSE(load(base(9, "nic = \"generic-1g\"\nqdisc = \"fq_codel\"")).scenario == s);
  EXPECT_FALSE(load(base(9, "nic = \"generic-1g\"\n[hosts.b.tcp]\necn = true")).scenario == s);
  EXPECT_TRUE(load(base(), "other/file.toml").scenario == s);  // the file name is not compared
}

// TCP pacing ratios are the kernel-era sysctls tcp_pacing_ss_ratio / tcp_pacing_ca_ratio (Linux
// 4.4+ defaults 200 / 120; 3.12-4.3 used 200 in both phases, the S3 era): parsed, dumped,
// compared, range-checked at the key.
TEST(Scenario, TcpPacingRatiosAreKernelEraSysctls) {
  const Scenario d = load(base()).scenario;
  EXPECT_EQ(d.host("a")->tcp.pacing_ss_ratio, 200);
  EXPECT_EQ(d.host("a")->tcp.pacing_ca_ratio, 120);
  const Scenario s =
      load(base(6, "nic = \"stmmac\"\n[hosts.a.tcp]\npacing_ca_ratio = 200")).scenario;
  EXPECT_EQ(s.host("a")->tcp.pacing_ca_ratio, 200);
  EXPECT_EQ(s.host("a")->tcp.pacing_ss_ratio, 200);
  EXPECT_FALSE(s == d);
  const std::string dumped = dump(s);
  EXPECT_NE(dumped.find("pacing_ca_ratio = 200\n"), std::string::npos) << dumped;
  EXPECT_EQ(load(dumped, "dump.toml").scenario, s);
  EXPECT_EQ(error_of_text(base(6, "nic = \"stmmac\"\n[hosts.a.tcp]\npacing_ss_ratio = 0")),
            "scenarios/x.toml:8:1: hosts.a.tcp.pacing_ss_ratio: must be 1..1000 (percent), got 0");
}

// --- strictness: every error with file:line:column and the full key path ---------------------

TEST(ScenarioErrors, WrongTypeAtTheKey) {
  EXPECT_EQ(error_of_text(base(6, "[hosts.a.nic]\npreset = \"stmmac\"\nbql = \"yes\"")),
            "scenarios/x.toml:8:1: hosts.a.nic.bql: expected a boolean, got \"yes\"");
  EXPECT_EQ(error_of_text(base(15, "to = \"b\"\nstreams = \"4\"")),
            "scenarios/x.toml:16:1: traffic.tcp[0].streams: expected an integer, got \"4\"");
  EXPECT_EQ(error_of_text(base(2, "name = 5")),
            "scenarios/x.toml:2:1: scenario.name: expected a string, got 5");
  EXPECT_EQ(error_of_text(edit({{4, "[hosts]"}, {5, "a = 3"}, {6, "# a is not a table"}})),
            "scenarios/x.toml:5:1: hosts.a: expected a table, got 3");
}

TEST(ScenarioErrors, MissingUnits) {
  EXPECT_EQ(error_of_text(base(12, "delay = \"100\"")),
            "scenarios/x.toml:12:1: wire.delay: expected a duration with a unit (ns, us, ms, s), "
            "got '100'");
  EXPECT_EQ(error_of_text(base(11, "rate = 100")),
            "scenarios/x.toml:11:1: wire.rate: expected a rate with a unit (bit, kbit, Mbit, Gbit, "
            "Tbit, optionally /s), got 100 (write it as a string, e.g. \"100Mbit\")");
  EXPECT_EQ(error_of_text(base(3, "duration = \"0\"")),
            "scenarios/x.toml:3:1: scenario.duration: expected a duration with a unit (ns, us, ms, "
            "s), got '0'");
  EXPECT_EQ(error_of_text(base(0, "", "[wire.x]\n")).substr(0, 28), "scenarios/x.toml:16:7: wire.");
}

TEST(ScenarioErrors, UnknownKeysWithSuggestions) {
  EXPECT_EQ(error_of_text(base(0, "", "[wir]\nrate = \"1Gbit\"\n")),
            "scenarios/x.toml:16:2: wir: unknown key (did you mean 'wire'?)");
  EXPECT_EQ(error_of_text(base(12, "delay = \"100us\"\njiter = \"1ms\"")),
            "scenarios/x.toml:13:1: wire.jiter: unknown key (did you mean 'jitter'?)");
  EXPECT_EQ(error_of_text(base(6, "[hosts.a.nic]\npreset = \"stmmac\"\nbqll = true")),
            "scenarios/x.toml:8:1: hosts.a.nic.bqll: unknown key (did you mean 'bql'?)");
  EXPECT_EQ(error_of_text(base(6, "nic = \"stmmac\"\n[hosts.a.tcp]\ncongestion = \"reno\"")),
            "scenarios/x.toml:8:1: hosts.a.tcp.congestion: unknown key");
  EXPECT_EQ(
      error_of_text(base(6, "nic = \"stmmac\"\nqdisc = { kind = \"fq_codel\", targt = \"5ms\" }")),
      "scenarios/x.toml:7:30: hosts.a.qdisc.targt: unknown key (did you mean 'target'?)");
  EXPECT_EQ(error_of_text(base(15, "to = \"b\"\nstream = 4")),
            "scenarios/x.toml:16:1: traffic.tcp[0].stream: unknown key (did you mean 'streams'?)");
}

// A host has no forwarding or shaping cost to pay: an override of one is refused, not ignored.
// (scenario_fuzz found it: the host's dump leaves them out, so the round trip changed the
// scenario.) A router takes both.
TEST(ScenarioErrors, AHostRefusesTheRouterOnlyCosts) {
  for (const std::string key : {"per_forward", "per_qdisc_op"}) {
    const std::string e =
        error_of_text(base(5, "cpu = { preset = \"arm-cortex-a5\", " + key + " = \"5us\" }"));
    EXPECT_EQ(e.substr(0, e.find(" (docs")),
              "scenarios/x.toml:5:" + std::to_string(38 + key.size()) + ": hosts.a.cpu." + key +
                  ": is a router's cost")
        << e;
  }
}

TEST(ScenarioErrors, UnknownPresetsAndHosts) {
  const std::string p = error_of_text(base(6, "nic = \"e1000\""));
  EXPECT_EQ(p.substr(0, p.find(" (available")),
            "scenarios/x.toml:6:1: hosts.a.nic: unknown nic preset 'e1000'");
  EXPECT_NE(p.find("available: ax88178, ax88772, generic-10g, generic-1g, smsc95xx, stmmac"),
            std::string::npos);
  const std::string c = error_of_text(base(5, "cpu = { preset = \"z80\" }"));
  EXPECT_EQ(c.substr(0, c.find(" (available")),
            "scenarios/x.toml:5:9: hosts.a.cpu.preset: unknown cpu preset 'z80'");
  EXPECT_EQ(error_of_text(base(15, "to = \"c\"")),
            "scenarios/x.toml:15:1: traffic.tcp[0].to: unknown host \"c\" (hosts: a, b)");
  EXPECT_EQ(error_of_text(base(15, "to = \"a\"")),
            "scenarios/x.toml:15:1: traffic.tcp[0].to: must differ from `from` (\"a\")");
  EXPECT_EQ(error_of_text(base(0, "", "[hosts.c]\ncpu = \"x86-desktop\"\nnic = \"generic-1g\"\n")),
            "scenarios/x.toml:4:2: hosts: a scenario with routers or more than two hosts needs "
            "[[links]]");
  EXPECT_EQ(error_of_text(base(9, "")), "scenarios/x.toml:7:1: hosts.b.nic: required");
}

TEST(ScenarioErrors, TomlSyntaxErrorsHaveThePosition) {
  const std::string e = error_of_text(base(11, "rate = \"100Mbit"));
  EXPECT_EQ(e.substr(0, 20), "scenarios/x.toml:11:");
  const std::string dup = error_of_text(base(12, "delay = \"1us\"\ndelay = \"2us\""));
  EXPECT_EQ(dup.substr(0, 20), "scenarios/x.toml:13:");
}

// Params::validate() failures are reported at the scenario key (or preset line) that set them.
TEST(ScenarioErrors, ValidationMappedToTheKey) {
  EXPECT_EQ(error_of_text(base(6, "[hosts.a.nic]\npreset = \"stmmac\"\ntx_wake_free = 10")),
            "scenarios/x.toml:8:1: hosts.a.nic.tx_wake_free: must be >= tx_stop_free, got 10");
  EXPECT_EQ(error_of_text(base(6,
                               "nic = \"stmmac\"\n[hosts.a.qdisc]\nkind = \"fq_codel\"\n"
                               "quantum = \"0B\"")),
            "scenarios/x.toml:9:1: hosts.a.qdisc.quantum: must be >= 1 byte, got 0");
  EXPECT_EQ(
      error_of_text(base(6, "nic = \"stmmac\"\nqdisc = { kind = \"tbf\", rate = \"10Mbit\" }")),
      "scenarios/x.toml:7:9: hosts.a.qdisc.burst: required, must be >= 1 byte, got 0");
  EXPECT_EQ(error_of_text(base(6,
                               "nic = \"stmmac\"\n[hosts.a.qdisc]\nkind = \"htb\"\n"
                               "[[hosts.a.qdisc.class]]\nid = \"1:1\"\nrate = \"10Mbit\"\n"
                               "[[hosts.a.qdisc.class]]\nid = \"1:10\"\nparent = \"1:1\"\n"
                               "rate = \"5Mbit\"\nceil = \"4Mbit\"")),
            "scenarios/x.toml:16:1: hosts.a.qdisc.class[1].ceil: must be >= rate (rate 5000000 "
            "bit/s, ceil 4000000 bit/s)");
  EXPECT_EQ(error_of_text(base(6,
                               "nic = \"stmmac\"\n[hosts.a.qdisc]\nkind = \"htb\"\n"
                               "[[hosts.a.qdisc.class]]\nid = \"1:10\"\nparent = \"1:1\"\n"
                               "rate = \"5Mbit\"")),
            "scenarios/x.toml:11:1: hosts.a.qdisc.class[0].parent: no class 1:1 (add it first)");
  EXPECT_EQ(error_of_text(base(6,
                               "nic = \"stmmac\"\n[hosts.a.qdisc]\nkind = \"htb\"\n"
                               "default = \"10\"")),
            "scenarios/x.toml:9:1: hosts.a.qdisc.default: expected a class id like \"1:10\" (tc "
            "notation: major 1, minor 1..ffff in hex), got \"10\"");
  // A default naming no class, or an inner class, would leave unclassified traffic unshaped
  // (htb_classify's direct queue): refused at the key.
  const std::string htb_tree =
      "nic = \"stmmac\"\n[hosts.a.qdisc]\nkind = \"htb\"\ndefault = \"1:%s\"\n"
      "[[hosts.a.qdisc.class]]\nid = \"1:1\"\nrate = \"10Mbit\"\n"
      "[[hosts.a.qdisc.class]]\nid = \"1:10\"\nparent = \"1:1\"\nrate = \"5Mbit\"";
  const auto with_default = [&](const std::string& minor) {
    std::string t = htb_tree;
    t.replace(t.find("%s"), 2, minor);
    return t;
  };
  EXPECT_EQ(error_of_text(base(6, with_default("30"))),
            "scenarios/x.toml:9:1: hosts.a.qdisc.default: names no class (1:30 is not among the "
            "[[class]] ids); unclassified packets would bypass shaping through the direct queue");
  EXPECT_EQ(error_of_text(base(6, with_default("1"))),
            "scenarios/x.toml:9:1: hosts.a.qdisc.default: 1:1 is an inner class; the default must "
            "be a leaf (unclassified packets would bypass shaping through the direct queue)");
  EXPECT_EQ(error_of_text(base(6, with_default("10"))), "");
  EXPECT_EQ(error_of_text(base(6, "nic = \"smsc95xx\"")), "");  // 100 Mbit fits its PHY
  EXPECT_EQ(error_of_text(edit({{6, "nic = \"smsc95xx\""}, {11, "rate = \"1Gbit\""}})),
            "scenarios/x.toml:11:1: wire.rate: 1Gbit is faster than host a's nic (smsc95xx links "
            "at up to 100Mbit)");
  // A [vary] value that makes a qdisc invalid is reported at the [vary] value.
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"hosts.b.qdisc\" = [\"pfifo_fast\", \"tbf\"]\n")),
            "scenarios/x.toml:17:34: hosts.b.qdisc.rate: required, must be >= 8 bit/s (1 byte/s), "
            "got 0 bit/s");
}

TEST(ScenarioErrors, TrafficWindowsAndValues) {
  EXPECT_EQ(error_of_text(base(15, "to = \"b\"\nstart = \"10s\"")),
            "scenarios/x.toml:16:1: traffic.tcp[0].start: must be before the end of the scenario "
            "(duration 10s), got 10s");
  EXPECT_EQ(error_of_text(base(15, "to = \"b\"\nstart = \"2s\"\nstop = \"1s\"")),
            "scenarios/x.toml:17:1: traffic.tcp[0].stop: must be after start (2s), got 1s");
  EXPECT_EQ(error_of_text(base(15, "to = \"b\"\ndscp = \"XX\"")),
            "scenarios/x.toml:16:1: traffic.tcp[0].dscp: expected a DSCP name (BE, LE, CS0..CS7, "
            "AF11..AF43, EF, VA) or 0..63, got \"XX\"");
  EXPECT_EQ(error_of_text(base(0, "",
                               "[[traffic.ping]]\nfrom = \"a\"\nto = \"b\"\n"
                               "interval = \"0ms\"\n")),
            "scenarios/x.toml:19:1: traffic.ping[0].interval: must be > 0");
}

// Runtime bounds (docs/scenarios.md "Limits"): probes every 100 us at most, 10 million probes
// per run, 4096 entries per traffic kind — each refusal names the key.
TEST(ScenarioErrors, RuntimeBounds) {
  EXPECT_EQ(error_of_text(base(0, "",
                               "[[traffic.ping]]\nfrom = \"a\"\nto = \"b\"\n"
                               "interval = \"1ns\"\n")),
            "scenarios/x.toml:19:1: traffic.ping[0].interval: must be at least 100us, got 1ns");
  EXPECT_EQ(
      error_of_text(base(0, "",
                         "[[traffic.udp_probe]]\nfrom = \"a\"\nto = \"b\"\n"
                         "interval = \"99us\"\n")),
      "scenarios/x.toml:19:1: traffic.udp_probe[0].interval: must be at least 100us, got 99us");
  EXPECT_EQ(error_of_text(base(0, "",
                               "[[traffic.udp_probe]]\nfrom = \"a\"\nto = \"b\"\n"
                               "interval = \"100us\"\n")),
            "");
  // 600 s at 100 us is 6,000,001 probes; two such probes are over budget, and the second
  // entry is the one named.
  const std::string probe = "from = \"a\"\nto = \"b\"\ninterval = \"100us\"\n";
  EXPECT_EQ(error_of_text(edit({{3, "duration = \"600s\""}},
                               "[[traffic.ping]]\n" + probe + "[[traffic.udp_probe]]\n" + probe)),
            "scenarios/x.toml:23:1: traffic.udp_probe[0].interval: the probes of this scenario "
            "would exceed 10000000 per run (12000002 so far): use a longer interval");
  std::string many;
  for (int i = 0; i < 4097; ++i) {
    many += "[[traffic.ping]]\nfrom = \"a\"\nto = \"b\"\ninterval = \"1s\"\n";
  }
  EXPECT_EQ(error_of_text(base(0, "", many)),
            "scenarios/x.toml:16:11: traffic.ping: at most 4096 entries, got 4097");
  // A [vary] value names every run (and every exported row): at most 128 bytes.
  const std::string e =
      error_of_text(base(0, "", "[vary]\n\"hosts.a.nic\" = [\"" + std::string(200, 'x') + "\"]\n"));
  EXPECT_EQ(e.rfind("scenarios/x.toml:17:", 0), 0u) << e;
  EXPECT_NE(
      e.find("vary.\"hosts.a.nic\": a value is at most 128 bytes (it names its runs), got 200"),
      std::string::npos)
      << e;
}

TEST(ScenarioErrors, AWrongPresetsVariableIsAnError) {
  ::setenv("NICSIM_PRESETS", "/nonexistent/presets", 1);
  EXPECT_EQ(error_of([] { (void)PresetSearch::standard("", true); }),
            "$NICSIM_PRESETS: '/nonexistent/presets' does not exist (a colon-separated list of "
            "preset directories)");
  ::setenv("NICSIM_PRESETS", "/dev/null", 1);
  EXPECT_EQ(error_of([] { (void)PresetSearch::standard("", true); }),
            "$NICSIM_PRESETS: '/dev/null' is not a directory (a colon-separated list of preset "
            "directories)");
  ::unsetenv("NICSIM_PRESETS");
}

// rrul: flent's defaults (5 s idle, 60 s load, 200 ms step), limits (probes down to 1 ms, bins
// down to 10 ms), the whole test within the scenario, one per scenario, no `stop`.
TEST(ScenarioErrors, RrulTimingAndLimits) {
  const std::string rrul = "[[traffic.rrul]]\nfrom = \"a\"\nto = \"b\"\n";
  const LoadedScenario ok = load(base(3, "duration = \"70s\"", rrul));
  const RrulConfig& r = ok.scenario.traffic.rrul.at(0);
  EXPECT_EQ(r.idle, Duration::s(5));
  EXPECT_EQ(r.load, Duration::s(60));
  EXPECT_EQ(r.probe_interval, Duration::ms(200));
  EXPECT_EQ(r.bin, Duration::ms(200));
  EXPECT_EQ(r.end(), Duration::s(70));
  // Lines 16-18 hold the rrul table, 19 the first extra key.
  EXPECT_EQ(error_of_text(base(0, "", rrul)),
            "scenarios/x.toml:16:1: traffic.rrul[0]: rrul needs start + idle + load + idle = 70s, "
            "more than the scenario duration 10s");
  EXPECT_EQ(error_of_text(base(0, "", rrul + "idle = \"1s\"\nload = \"9s\"\n")),
            "scenarios/x.toml:20:1: traffic.rrul[0].load: rrul needs start + idle + load + idle = "
            "11s, more than the scenario duration 10s");
  const std::string fits = rrul + "idle = \"1s\"\nload = \"2s\"\n";
  EXPECT_EQ(load(base(0, "", fits + "probe_interval = \"1ms\"\nbin = \"10ms\"\n"))
                .scenario.traffic.rrul.at(0)
                .bin,
            Duration::ms(10));
  EXPECT_EQ(error_of_text(base(0, "", fits + "probe_interval = \"999us\"\n")),
            "scenarios/x.toml:21:1: traffic.rrul[0].probe_interval: must be at least 1ms, got "
            "999us");
  EXPECT_EQ(error_of_text(base(0, "", fits + "bin = \"9ms\"\n")),
            "scenarios/x.toml:21:1: traffic.rrul[0].bin: must be at least 10ms (throughput bins), "
            "got 9ms");
  EXPECT_EQ(error_of_text(base(0, "", rrul + "idle = \"0s\"\nload = \"2s\"\n")),
            "scenarios/x.toml:19:1: traffic.rrul[0].idle: must be at least 1ms, got 0s");
  EXPECT_TRUE(error_of_text(base(0, "", fits + "stop = \"5s\"\n")).find("unknown key") !=
              std::string::npos);
  EXPECT_EQ(error_of_text(base(0, "", fits + fits)),
            "scenarios/x.toml:21:1: traffic.rrul[1]: at most one rrul per scenario (its phases "
            "are the run's)");
}

TEST(ScenarioErrors, VaryKeysMustNameExistingKeys) {
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"hosts.a.nic.bqll\" = [true]\n")),
            "scenarios/x.toml:17:23: hosts.a.nic.bqll: unknown key (did you mean 'bql'?)");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"hosts.c.nic.bql\" = [true]\n")),
            "scenarios/x.toml:17:1: vary.\"hosts.c.nic.bql\": no host \"c\" in [hosts]");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"hosts.a.nic.bql\" = [true, \"yes\"]\n")),
            "scenarios/x.toml:17:28: vary.\"hosts.a.nic.bql\": all values must have the same type "
            "as the first (true), got \"yes\"");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"hosts.a.nic.bql\" = [\"yes\"]\n")),
            "scenarios/x.toml:17:22: hosts.a.nic.bql: expected a boolean, got \"yes\"");
  EXPECT_EQ(
      error_of_text(base(0, "", "[vary]\n\"wire.rate\" = [\"100Mbit\", \"fast\"]\n")),
      "scenarios/x.toml:17:27: wire.rate: expected a rate with a unit as tc writes it (bit, "
      "kbit, mbit, gbit, tbit, kibit..tibit; bps, kbps, mbps, gbps, tbps, kibps..tibps = bytes "
      "per second), got 'fast'");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"traffic.tcp[3].streams\" = [1]\n")),
            "scenarios/x.toml:17:1: vary.\"traffic.tcp[3].streams\": no traffic.tcp[3] in the "
            "scenario");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"wire\" = [1]\n")),
            "scenarios/x.toml:17:1: vary.wire: names a whole section; vary a key inside it");
  EXPECT_EQ(
      error_of_text(base(0, "", "[vary]\n\"published.x\" = [1]\n")),
      "scenarios/x.toml:17:1: vary.\"published.x\": can only vary keys under scenario, hosts, "
      "wire, traffic, routers, links or routes, got \"published\"");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"wire.rate\" = []\n")),
            "scenarios/x.toml:17:1: vary.\"wire.rate\": needs at least one value");
  EXPECT_EQ(error_of_text(base(0, "", "[vary]\n\"wire.rate\" = \"1Gbit\"\n")),
            "scenarios/x.toml:17:1: vary.\"wire.rate\": expected an array, got \"1Gbit\"");
}

TEST(ScenarioErrors, PublishedSelectorsMustMatchRuns) {
  const std::string v = "[vary]\n\"wire.rate\" = [\"10Mbit\", \"100Mbit\"]\n[published]\n";
  EXPECT_EQ(error_of_text(base(0, "", v + "\"rate=1Gbit\".ping_ms = 1.0\n")),
            "scenarios/x.toml:19:1: published.\"rate=1Gbit\": no run has rate=1Gbit (values: "
            "10Mbit, 100Mbit)");
  EXPECT_EQ(error_of_text(base(0, "", v + "\"bql=true\".ping_ms = 1.0\n")),
            "scenarios/x.toml:19:1: published.\"bql=true\": no varied key \"bql\" (varied: rate)");
  EXPECT_EQ(error_of_text(base(0, "", v + "\"rate=10Mbit\".ping_ms = \"fast\"\n")),
            "scenarios/x.toml:19:15: published.\"rate=10Mbit\".ping_ms: expected a number, got "
            "\"fast\"");
  const LoadedScenario ok = load(base(0, "", v + "\"rate=10Mbit\".ping_ms = 1\n"));
  EXPECT_EQ(ok.runs[0].published.size(), 1u);
  EXPECT_TRUE(ok.runs[1].published.empty());
}

// docs/scenarios.md's annotated example loads (the block after the "example" marker).
TEST(Scenario, TheDocumentedExampleLoads) {
  std::ifstream in(NICSIM_TEST_DOCS_DIR "/scenarios.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const size_t marker = doc.find("<!-- example:");
  ASSERT_NE(marker, std::string::npos);
  const size_t begin = doc.find("```toml\n", marker);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = doc.find("```\n", begin + 8);
  ASSERT_NE(end, std::string::npos);
  const LoadedScenario ls = load(doc.substr(begin + 8, end - begin - 8), "docs/scenarios.md");
  ASSERT_EQ(ls.runs.size(), 4u);
  EXPECT_EQ(ls.runs[1].label, "bql=false rate=1Gbit");
  EXPECT_EQ(ls.scenario.host("pc")->qdisc.kind(), "fq_codel");
  EXPECT_EQ(ls.scenario.host("board")->tcp.tsq_limit, 128 * 1024);
  EXPECT_EQ(ls.runs[0].published.size(), 2u);
  EXPECT_EQ(load(dump(ls.scenario), "dump.toml").scenario, ls.scenario);
}

// --- preset search path ------------------------------------------------------------------------

class ScenarioFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) /
            ("nicsim_scen_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(root_ / "scenarios" / "deep");
    std::filesystem::create_directories(root_ / "presets" / "nic");
    std::filesystem::create_directories(root_ / "presets" / "cpu");
    const std::filesystem::path shipped(NICSIM_TEST_PRESETS_DIR);
    for (const char* f : {"nic/stmmac.toml", "nic/generic-1g.toml", "cpu/arm-cortex-a5.toml",
                          "cpu/x86-desktop.toml"}) {
      std::filesystem::copy_file(shipped / f, root_ / "presets" / f);
    }
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

// presets/ is found next to the scenario's directory (or a parent), and a ".toml" preset name
// is a path relative to the scenario file.
TEST_F(ScenarioFiles, PresetsAreFoundRelativeToTheScenarioFile) {
  const auto file = root_ / "scenarios" / "deep" / "x.toml";
  std::ofstream(file) << base();
  LoadOptions o;
  o.standard_presets = true;
  ::unsetenv("NICSIM_PRESETS");
  const LoadedScenario ls = load_scenario_file(file.string(), o);
  EXPECT_EQ(ls.scenario.host("a")->nic.preset_file,
            (root_ / "presets" / "nic" / "stmmac.toml").string());

  std::ofstream(root_ / "scenarios" / "deep" / "mynic.toml")
      << "model = \"platform\"\ndescription = \"mine\"\nmax_link_rate = \"1Gbit\"\n"
         "tx_ring_size = 64\ntx_wake_free = 30\n";
  std::ofstream(file) << base(6, "nic = \"mynic.toml\"");
  const LoadedScenario own = load_scenario_file(file.string(), o);
  EXPECT_EQ(own.scenario.host("a")->nic.platform.tx_ring_size, 64);
  EXPECT_EQ(own.scenario.host("a")->nic.description, "mine");

  // $NICSIM_PRESETS comes first.
  std::filesystem::create_directories(root_ / "env" / "nic");
  std::ofstream(root_ / "env" / "nic" / "stmmac.toml")
      << "model = \"platform\"\ndescription = \"from env\"\nmax_link_rate = \"1Gbit\"\n";
  ::setenv("NICSIM_PRESETS", (root_ / "env").string().c_str(), 1);
  std::ofstream(file) << base();
  const LoadedScenario env = load_scenario_file(file.string(), o);
  EXPECT_EQ(env.scenario.host("a")->nic.description, "from env");
  ::unsetenv("NICSIM_PRESETS");

  EXPECT_EQ(error_of([&] { load_scenario_file((root_ / "nope.toml").string(), o); }),
            (root_ / "nope.toml").string() + ": cannot read the file: no such file");
}

}  // namespace
}  // namespace nicsim::config

namespace nicsim::config {
namespace {

// [[traffic.udp_flood]] (issue 12): iperf 2's defaults, the keys, the dump round trip, and the
// bounds of docs/scenarios.md "Limits", each refusal at its key.
TEST(Scenario, UdpFloodKeysDefaultsAndDump) {
  const LoadedScenario d = load(base(0, "", "[[traffic.udp_flood]]\nfrom = \"b\"\nto = \"a\"\n"));
  ASSERT_EQ(d.scenario.traffic.udp_flood.size(), 1u);
  const UdpFloodConfig& f = d.scenario.traffic.udp_flood[0];
  EXPECT_EQ(f.rate, Rate::mbit(1));
  EXPECT_EQ(f.size, 1470);
  EXPECT_EQ(f.from, "b");
  const LoadedScenario s = load(base(0, "",
                                     "[[traffic.udp_flood]]\nfrom = \"a\"\nto = \"b\"\n"
                                     "rate = \"250Mbit\"\nsize = \"1000B\"\nstart = \"1s\"\n"
                                     "stop = \"9s\"\ndscp = \"EF\"\n"));
  const UdpFloodConfig& g = s.scenario.traffic.udp_flood[0];
  EXPECT_EQ(g.rate, Rate::mbit(250));
  EXPECT_EQ(g.size, 1000);
  EXPECT_EQ(g.start, Duration::s(1));
  EXPECT_EQ(g.stop, Duration::s(9));
  EXPECT_EQ(g.dscp, 46);
  const std::string text = dump(s.scenario);
  EXPECT_EQ(load(text, "dump.toml").scenario, s.scenario) << text;
  EXPECT_NE(text.find("[[traffic.udp_flood]]"), std::string::npos);
}

TEST(ScenarioErrors, UdpFloodBounds) {
  const std::string head = "[[traffic.udp_flood]]\nfrom = \"a\"\nto = \"b\"\n";
  EXPECT_EQ(error_of_text(base(0, "", head + "rate = \"0bit\"\n")),
            "scenarios/x.toml:19:1: traffic.udp_flood[0].rate: must be > 0 and at most 100Gbit, "
            "got 0bit");
  EXPECT_EQ(error_of_text(base(0, "", head + "rate = \"200Gbit\"\n")),
            "scenarios/x.toml:19:1: traffic.udp_flood[0].rate: must be > 0 and at most 100Gbit, "
            "got 200Gbit");
  EXPECT_EQ(error_of_text(base(0, "", head + "size = \"1500B\"\n")),
            "scenarios/x.toml:19:1: traffic.udp_flood[0].size: must be 32B..1472B (UDP payload "
            "in one 1500-byte MTU datagram), got 1500B");
  EXPECT_EQ(error_of_text(base(0, "", head + "size = \"31B\"\n")),
            "scenarios/x.toml:19:1: traffic.udp_flood[0].size: must be 32B..1472B (UDP payload "
            "in one 1500-byte MTU datagram), got 31B");
  EXPECT_NE(error_of_text(base(0, "", head + "colour = \"red\"\n"))
                .find("scenarios/x.toml:19:1: traffic.udp_flood[0].colour"),
            std::string::npos);
  EXPECT_EQ(error_of_text(base(0, "", head + "stop = \"11s\"\n")),
            "scenarios/x.toml:19:1: traffic.udp_flood[0].stop: must be at most the scenario "
            "duration (10s), got 11s");
  EXPECT_EQ(error_of_text(base(0, "", "[[traffic.udp_flood]]\nfrom = \"a\"\nto = \"c\"\n"))
                .find("scenarios/x.toml:18:"),
            0u);
  // 10 s of 40 Gbit/s in 32-byte datagrams: 1,562,500,001 datagrams, over the 50 million bound.
  EXPECT_EQ(error_of_text(base(0, "", head + "rate = \"40Gbit\"\nsize = \"32B\"\n")),
            "scenarios/x.toml:19:1: traffic.udp_flood[0].rate: the udp_flood datagrams of this "
            "scenario would exceed 50000000 per run (1562500001 so far): lower the rate or raise "
            "the size");
}

}  // namespace
}  // namespace nicsim::config

namespace nicsim::config {
namespace {

// [[traffic.voip]] and [[traffic.transfers]] (issue 12): defaults, dump round trip, errors at
// their keys.
TEST(Scenario, VoipAndTransfersKeysAndDump) {
  const LoadedScenario s =
      load(base(0, "",
                "[[traffic.voip]]\nfrom = \"b\"\nto = \"a\"\ncodec = \"g729a\"\n"
                "[[traffic.transfers]]\nfrom = \"a\"\nto = \"b\"\nsizes = \"exponential\"\n"
                "size = \"50kB\"\ninterval = \"20ms\"\ncc = \"reno\"\n"
                "[[traffic.transfers]]\nfrom = \"a\"\nto = \"b\"\nsizes = \"websearch\"\n"));
  ASSERT_EQ(s.scenario.traffic.voip.size(), 1u);
  EXPECT_EQ(s.scenario.traffic.voip[0].codec, "g729a");
  EXPECT_EQ(s.scenario.traffic.voip[0].dscp, 46);  // EF by default
  ASSERT_EQ(s.scenario.traffic.transfers.size(), 2u);
  EXPECT_EQ(s.scenario.traffic.transfers[0].size, 50'000);
  EXPECT_EQ(s.scenario.traffic.transfers[0].interval, Duration::ms(20));
  EXPECT_EQ(s.scenario.traffic.transfers[0].cc, "reno");
  const std::string text = dump(s.scenario);
  EXPECT_EQ(load(text, "dump.toml").scenario, s.scenario) << text;
  // The plan: voip as a constant-rate stream of 172 B... here 32 B every 20 ms; transfers drawn
  // from the seed, the same twice; the server's cc.
  const TrafficPlan p = plan(s.scenario);
  ASSERT_EQ(p.floods.size(), 1u);
  EXPECT_EQ(p.floods[0].name, "voip");
  EXPECT_EQ(p.floods[0].rate, Rate::bps(32 * 8 * 50));
  EXPECT_EQ(p.floods[0].from, 1u);
  ASSERT_EQ(p.transfer_sets.size(), 2u);
  EXPECT_EQ(p.transfer_sets[0].name, "transfers");
  EXPECT_EQ(p.transfer_sets[1].name, "transfers-2");
  EXPECT_EQ(p.transfer_sets[0].server, 1u);
  EXPECT_EQ(p.transfer_sets[0].cc, "reno");
  EXPECT_GT(p.transfers.size(), 400u);  // ~500 + ~100 in 10 s
  EXPECT_EQ(plan(s.scenario).transfers, p.transfers);
}

TEST(ScenarioErrors, VoipAndTransfers) {
  EXPECT_EQ(
      error_of_text(base(0, "", "[[traffic.voip]]\nfrom = \"a\"\nto = \"b\"\ncodec = \"opus\"\n")),
      "scenarios/x.toml:19:1: traffic.voip[0].codec: unknown codec \"opus\" (codecs: g711, "
      "g729a)");
  const std::string head = "[[traffic.transfers]]\nfrom = \"a\"\nto = \"b\"\n";
  EXPECT_EQ(error_of_text(base(0, "", head + "sizes = \"pareto\"\n")),
            "scenarios/x.toml:19:1: traffic.transfers[0].sizes: unknown distribution \"pareto\" "
            "(fixed, exponential, websearch)");
  EXPECT_EQ(error_of_text(base(0, "", head + "sizes = \"websearch\"\nsize = \"1kB\"\n")),
            "scenarios/x.toml:20:1: traffic.transfers[0].size: websearch sizes come from their "
            "distribution: remove `size`");
  EXPECT_EQ(error_of_text(base(0, "", head + "size = \"2GiB\"\n")),
            "scenarios/x.toml:19:1: traffic.transfers[0].size: must be 1B..1GiB, got 2048MiB");
  EXPECT_EQ(error_of_text(base(0, "", head + "interval = \"10us\"\n")),
            "scenarios/x.toml:19:1: traffic.transfers[0].interval: the transfers of this scenario "
            "would exceed 100000 per run on average (1000001 so far): use a longer interval");
}

}  // namespace
}  // namespace nicsim::config

namespace nicsim::config {
namespace {

// [[traffic.flent]] (issue 12): one of flent's tests with rrul's timing keys; dump round trip;
// errors at their keys; one rrul or flent per scenario.
TEST(Scenario, FlentTestEntry) {
  const LoadedScenario s =
      load(base(0, "",
                "[[traffic.flent]]\ntest = \"tcp_nup\"\nfrom = \"a\"\nto = \"b\"\nstreams = 3\n"
                "idle = \"1s\"\nload = \"5s\"\n"));
  ASSERT_EQ(s.scenario.traffic.rrul.size(), 1u);
  EXPECT_EQ(s.scenario.traffic.rrul[0].test, "tcp_nup");
  EXPECT_EQ(s.scenario.traffic.rrul[0].streams, 3);
  const std::string text = dump(s.scenario);
  EXPECT_NE(text.find("[[traffic.flent]]\ntest = \"tcp_nup\""), std::string::npos) << text;
  EXPECT_EQ(load(text, "dump.toml").scenario, s.scenario) << text;
  const TrafficPlan p = plan(s.scenario);
  EXPECT_EQ(p.flent_test, "tcp_nup");
  EXPECT_EQ(p.flows.size(), 4u);  // the file's [[traffic.tcp]] and 3 uploads
  EXPECT_EQ(p.flows[3].name, "TCP upload::3");
  const std::string head = "[[traffic.flent]]\nfrom = \"a\"\nto = \"b\"\n";
  EXPECT_EQ(error_of_text(base(0, "", head + "test = \"voipx\"\n"))
                .find("scenarios/x.toml:19:1: traffic.flent[0].test: unknown flent test \"voipx\" "
                      "(presets: rrul, rrul_be, tcp_nup"),
            0u);
  EXPECT_EQ(error_of_text(base(0, "", head + "test = \"rrul\"\nstreams = 2\n")),
            "scenarios/x.toml:20:1: traffic.flent[0].streams: \"rrul\" has no streams parameter");
  EXPECT_EQ(error_of_text(base(0, "", head + "test = \"tcp_ndown\"\nstreams = 65\n")),
            "scenarios/x.toml:20:1: traffic.flent[0].streams: must be 1..64, got 65");
  EXPECT_NE(error_of_text(base(0, "",
                               "[[traffic.rrul]]\nfrom = \"a\"\nto = \"b\"\nidle = \"1s\"\n"
                               "load = \"1s\"\n" +
                                   head + "test = \"tcp_bidirectional\"\n"))
                .find("at most one rrul or flent test per scenario"),
            std::string::npos);
}

// flent's test parameters as [[traffic.flent]] keys: markings (rrul_var), rate (udp_flood,
// bursts), size (udp_flood); dump round trip; each refused where the test has no such
// parameter; rtt_fair without a second server fails in the plan naming the entry.
TEST(Scenario, FlentTestParameters) {
  const LoadedScenario s = load(base(0, "",
                                     "[[traffic.flent]]\ntest = \"rrul_var\"\nfrom = \"a\"\nto = "
                                     "\"b\"\nstreams = 2\nmarkings = \"CS1,EF\"\n"
                                     "idle = \"1s\"\nload = \"5s\"\n"));
  EXPECT_EQ(s.scenario.traffic.rrul[0].markings, (std::vector<uint8_t>{8, 46}));
  EXPECT_EQ(load(dump(s.scenario), "dump.toml").scenario, s.scenario) << dump(s.scenario);
  EXPECT_EQ(plan(s.scenario).flows[1].name, "TCP upload::0 (CS1)");
  const LoadedScenario f = load(base(0, "",
                                     "[[traffic.flent]]\ntest = \"udp_flood\"\nfrom = \"a\"\nto = "
                                     "\"b\"\nrate = \"20Mbit\"\nsize = \"1000B\"\n"
                                     "idle = \"1s\"\nload = \"5s\"\n"));
  EXPECT_EQ(load(dump(f.scenario), "dump.toml").scenario, f.scenario) << dump(f.scenario);
  const TrafficPlan fp = plan(f.scenario);
  ASSERT_EQ(fp.floods.size(), 1u);
  EXPECT_EQ(fp.floods[0].rate, Rate::mbit(20));
  EXPECT_EQ(fp.floods[0].size, 1000);
  const std::string head = "[[traffic.flent]]\nfrom = \"a\"\nto = \"b\"\n";
  EXPECT_EQ(error_of_text(base(0, "", head + "test = \"tcp_nup\"\nmarkings = \"CS1\"\n")),
            "scenarios/x.toml:20:1: traffic.flent[0].markings: \"tcp_nup\" has no markings "
            "parameter");
  EXPECT_NE(error_of_text(base(0, "", head + "test = \"rrul_var\"\nmarkings = \"CS1,XX\"\n"))
                .find("traffic.flent[0].markings: markings: 'XX' is neither"),
            std::string::npos);
  EXPECT_NE(error_of_text(base(0, "",
                               head + "test = \"udp_flood\"\nrate = \"100Gbit\"\nsize = \"32B\"\n"
                                      "idle = \"1s\"\nload = \"5s\"\n"))
                .find("traffic.flent[0].rate: udp_flood's datagrams would exceed 50000000"),
            std::string::npos);
  EXPECT_EQ(error_of_text(base(0, "", head + "test = \"udp_flood\"\nsize = \"2000B\"\n")),
            "scenarios/x.toml:20:1: traffic.flent[0].size: must be 32B..1472B, got 2000B");
  const LoadedScenario r =
      load(base(0, "", head + "test = \"rtt_fair\"\nidle = \"1s\"\nload = \"1s\"\n"));
  try {
    plan(r.scenario);
    ADD_FAILURE() << "rtt_fair with one server planned";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("traffic.flent[0]: rtt_fair needs one client and at least "
                                         "two servers"),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace nicsim::config

#pragma once
// Scenario files (TOML) -> a layer-neutral Scenario that both back-ends interpret: the
// simulator (nicsim run) and the emulator (nicsim emulate). docs/scenarios.md documents the
// format with a complete annotated example; in short:
//
//   [scenario]   name, description, duration, seed, repeat
//   [hosts.<h>]  two or more hosts (more need [[links]]; network.h has the network syntax:
//                [routers.<r>], [[links]], [[routes]]): cpu (preset name or table with `preset` +
//                CpuCosts keys), nic (preset name or table with `preset` + the preset's keys as
//                overrides), qdisc (kind or table, see qdisc.h; default pfifo_fast),
//                [hosts.<h>.tcp]
//   [wire]       rate, delay (one way), loss, jitter — the same in both directions
//   [[traffic.tcp]] [[traffic.ping]] [[traffic.udp_probe]] [[traffic.rrul]]
//   [[traffic.udp_flood]] [[traffic.voip]] [[traffic.transfers]] [[traffic.flent]]
//   [[traffic.replay]] (a recorded emulation's frames)
//   [vary]       "key.path" = [values...]: the cartesian product (first key outermost) becomes
//                labelled runs
//   [published]  numbers from the seed report per run selector, for the comparison table
//
// Strictness: unknown keys, missing units, bad values, wrong types, unknown presets, unknown
// host names → ConfigError "file:line:col: key.path: message". Params::validate() failures
// are reported at the key (in the scenario, or the preset file) that set the value.
//
// dump(scenario) writes the effective configuration (every value with its unit) as TOML that
// parses back to an equal Scenario (given the same presets).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/network.h"
#include "nicsim/config/presets.h"
#include "nicsim/config/qdisc.h"
#include "nicsim/config/replay_file.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/wire.h"

namespace nicsim::config {

// Layer-neutral TCP settings of a host (the simulator's TCP model / the emulator's sysctls).
// Defaults: Linux 6.1 (Debian 12).
struct TcpConfig {
  std::string cc = "cubic";         // tcp_congestion_control: cubic|reno|bbr|dctcp|prague
  int64_t mss = 1448;               // bytes: 1500 MTU - 20 IP - 20 TCP - 12 timestamp option
  int64_t rmem = 6 * 1024 * 1024;   // bytes: tcp_rmem[2] (max receive buffer), 6 MiB
  int64_t wmem = 4 * 1024 * 1024;   // bytes: tcp_wmem[2] (max send buffer), 4 MiB
  int64_t tsq_limit = 1024 * 1024;  // bytes: tcp_limit_output_bytes (1 MiB; 4 MiB since 6.6)
  bool pacing = false;              // TCP internal pacing (sch_fq or EDT); off for cubic by default
  bool ecn = false;                 // request ECN (tcp_ecn = 1); Linux default 2 only accepts it
  int64_t init_cwnd = 10;           // segments: TCP_INIT_CWND (RFC 6928)
  // sk_pacing_rate = ratio% x cwnd x mss / srtt, also used by TSQ and GSO autosizing:
  // tcp_pacing_ss_ratio (cwnd < ssthresh / 2) and tcp_pacing_ca_ratio (otherwise), Linux 4.4+;
  // 3.12-4.3 (the 2014 seed era) used 200 in both phases.
  int64_t pacing_ss_ratio = 200;  // percent: tcp_pacing_ss_ratio
  int64_t pacing_ca_ratio = 120;  // percent: tcp_pacing_ca_ratio
  bool operator==(const TcpConfig&) const = default;
};

struct HostConfig {
  std::string name;
  std::string cpu_preset;
  model::CpuCosts cpu;
  NicConfig nic;  // for platform NICs, nic.platform.qdisc_bypass follows qdisc.can_bypass()
  QdiscConfig qdisc;
  TcpConfig tcp;
  bool operator==(const HostConfig& o) const;
};

// Bulk TCP flows from `from` to `to` (the data direction).
struct TcpFlowConfig {
  std::string from;
  std::string to;
  int64_t streams = 1;
  Duration start;
  std::optional<Duration> stop;   // unset: until the end of the run
  uint8_t dscp = 0;               // DSCP (0..63) of the data packets
  std::optional<std::string> cc;  // overrides the sender's tcp.cc
  // "off" | "classic" (RFC 3168, ECT(0)) | "l4s" (RFC 9331, ECT(1), scalable cc only); unset:
  // dctcp "classic", prague "l4s", otherwise the sender's tcp.ecn ("classic" when true)
  std::optional<std::string> ecn;
  bool operator==(const TcpFlowConfig&) const = default;
};

// ICMP echo from `from` to `to`.
struct PingConfig {
  std::string from;
  std::string to;
  Duration interval = Duration::s(1);  // ping -i default
  int64_t size = 56;                   // ICMP payload bytes (ping -s default)
  Duration start;
  std::optional<Duration> stop;
  uint8_t dscp = 0;
  bool operator==(const PingConfig&) const = default;
};

// Isochronous one-way-delay UDP probes from `from` to `to`.
struct UdpProbeConfig {
  std::string from;
  std::string to;
  Duration interval = Duration::ms(1);
  int64_t size = 64;  // UDP payload bytes
  Duration start;
  std::optional<Duration> stop;
  uint8_t dscp = 0;
  bool operator==(const UdpProbeConfig&) const = default;
};

// flent's rrul (tohojo/flent flent/tests/rrul.conf) between `from` (client) and `to` (server):
// 4 TCP uploads (from -> to) + 4 downloads (to -> from) marked BE, BK (CS1), CS5, EF during the
// load phase; three UDP latency probes (EF, BK, BE) and one ICMP ping every `probe_interval`
// from `start` for idle + load + idle. At most one per scenario (phases are per run).
struct RrulConfig {
  std::string from;
  std::string to;
  // "rrul" ([[traffic.rrul]]) or another of flent's tests ([[traffic.flent]] test = "...",
  // config/flent_tests.h) with the same timing keys
  std::string test = "rrul";
  int64_t streams = 1;  // tcp_nup / tcp_ndown / rrul_var
  // rrul_var: each stream's DSCP (flent -t markings=CS0,CS1); CS0 beyond the list
  std::vector<uint8_t> markings{};
  // udp_flood: the flood's rate and UDP payload (flent -t udp_bandwidth / udp_pktsize);
  // bursts: the bursts' rate. Unset: the preset's defaults (config/flent_tests.h).
  std::optional<Rate> rate{};
  std::optional<int64_t> size{};
  Duration start;                               // the first idle phase begins here
  Duration idle = Duration::s(5);               // flent -d/--delay: probes only, before and after
  Duration load = Duration::s(60);              // flent -l/--length: the 8 TCP flows
  Duration probe_interval = Duration::ms(200);  // flent -s/--step-size; >= 1ms
  Duration bin = Duration::ms(200);             // throughput bins (the run's intervals); >= 10ms
  Duration load_start() const { return start + idle; }
  Duration load_end() const { return start + idle + load; }
  Duration end() const { return start + idle + load + idle; }
  bool operator==(const RrulConfig&) const = default;
};

// Unresponsive constant-rate UDP from `from` to `to` (flent's udp_flood: `iperf -u -b RATE
// -l SIZE`, tohojo/flent flent/tests/udp_flood.conf). `rate` counts UDP payload bits, as
// iperf's -b does; datagram k leaves at start + k * size * 8 / rate exactly (no drift).
struct UdpFloodConfig {
  std::string from;
  std::string to;
  Rate rate = Rate::mbit(1);  // iperf 2's UDP default bandwidth (-b 1M)
  int64_t size = 1470;        // UDP payload bytes: iperf 2's UDP default length (-l 1470)
  Duration start;
  std::optional<Duration> stop;
  uint8_t dscp = 0;
  bool operator==(const UdpFloodConfig&) const = default;
};

// Isochronous voice packets from `from` to `to`: one RTP packet per codec interval
// (report::voip_codec: "g711" 172 B / 20 ms, "g729a" 32 B / 20 ms); one-way delay, IPDV,
// loss bursts and a G.107 MOS in the results. EF by default (RFC 4594 §4.1: telephony).
struct VoipConfig {
  std::string from;
  std::string to;
  std::string codec = "g711";
  Duration start;
  std::optional<Duration> stop;
  uint8_t dscp = 46;
  bool operator==(const VoipConfig&) const = default;
};

// Short request/response transfers (config/flow_sizes.h): Poisson arrivals with mean gap
// `interval` from `start` to `stop`; each one a new TCP connection on which `to` (the server)
// sends the response to `from` (the client); flow completion times in the results.
struct TransfersConfig {
  std::string from;                       // the client: requests, receives
  std::string to;                         // the server: answers with the response's bytes
  std::string sizes = "fixed";            // "fixed" | "exponential" | "websearch"
  int64_t size = 10'000;                  // fixed: every response; exponential: the mean (bytes)
  Duration interval = Duration::ms(100);  // mean gap between arrivals (Poisson)
  Duration start;
  std::optional<Duration> stop;
  uint8_t dscp = 0;
  std::optional<std::string> cc;  // the server's (sending) socket; default its tcp.cc
  bool operator==(const TransfersConfig&) const = default;
};

// The frames a recorded emulation handed to its NIC models (`nicsim emulate --record`,
// config/replay_file.h), injected into the same hosts' NICs at the same times as open-loop
// packets: the arrival process, without TCP's reaction (docs/emu.md "Replay"). Each frame
// enters the NIC of the scenario host named like its recorded host; `from` keeps only that
// host's frames. The file is read and checked when the scenario loads.
struct ReplayConfig {
  std::string file;                 // resolved path (relative paths: to the scenario's directory)
  std::optional<std::string> from;  // only the frames this host sent; none: every host's
  std::shared_ptr<const ReplayRecording> recording;  // never null once loaded
  bool operator==(const ReplayConfig& o) const { return file == o.file && from == o.from; }
};

struct TrafficConfig {
  std::vector<TcpFlowConfig> tcp;
  std::vector<PingConfig> ping;
  std::vector<UdpProbeConfig> udp_probe;
  std::vector<RrulConfig> rrul;
  std::vector<UdpFloodConfig> udp_flood;
  std::vector<VoipConfig> voip;
  std::vector<TransfersConfig> transfers;
  std::vector<ReplayConfig> replay;
  bool operator==(const TrafficConfig&) const = default;
};

// A value in [vary] or a run's params, as written.
using VaryValue = std::variant<bool, int64_t, double, std::string>;
std::string format_vary_value(const VaryValue& v);  // true, 16, 1.5, 100Mbit (no quotes)
std::string toml_vary_value(const VaryValue& v);    // TOML literal: true, 16, 1.5, "100Mbit"

struct VaryAxis {
  std::string key;         // as written, e.g. "hosts.a.nic.bql"
  std::string short_name;  // for labels: the shortest unique suffix, e.g. "bql"
  std::vector<VaryValue> values;
  bool operator==(const VaryAxis&) const = default;
};

using PublishedValue = std::variant<double, std::string>;  // number, or text for `source`
struct PublishedEntry {
  std::string selector;  // as written: "bql=false,rate=100Mbit"; "" applies to every run
  std::vector<std::pair<std::string, std::string>> match;  // parsed name=value pairs
  std::vector<std::pair<std::string, PublishedValue>> metrics;
  bool operator==(const PublishedEntry&) const = default;
};

// [scenario] repeat: at most this many repetitions per run (a typo such as 1000000 would
// otherwise queue a million simulations).
inline constexpr int64_t kMaxRepeat = 10000;

struct Scenario {
  std::string name;
  std::string description;
  Duration duration;
  uint64_t seed = 1;
  // Repetitions of every run with seeds derived from `seed` (a campaign; docs/campaigns.md).
  // 1: one run per combination, with `seed` itself.
  uint32_t repeat = 1;
  std::vector<HostConfig> hosts;      // two or more, in the order written (network.h)
  WireConfig wire;                    // the two-host form's link (no [[links]]); unused otherwise
  std::vector<RouterConfig> routers;  // network.h: [routers.<r>]
  std::vector<LinkConfig> links;      // [[links]]; empty: the two-host form (hosts + [wire])
  std::vector<RouteConfig> routes;    // [[routes]] overrides
  TrafficConfig traffic;
  std::vector<VaryAxis> vary;  // empty in a run's scenario
  std::vector<PublishedEntry> published;

  // Not part of equality:
  std::string file;                         // the scenario file
  std::map<std::string, Location> origins;  // key path -> where it was written

  const HostConfig* host(std::string_view name) const;
  // Where `key_path` was written (for back-ends that cannot honour a setting); the file
  // without a position if it was not written explicitly.
  Location where(std::string_view key_path) const;
  bool operator==(const Scenario& o) const;
};

struct Run {
  std::string label;  // "bql=true rate=1Gbit" ("" without [vary])
  std::vector<std::pair<std::string, VaryValue>> params;  // varied key as written -> value
  Scenario scenario;  // the effective configuration of this run (no vary, no published)
  std::vector<std::pair<std::string, PublishedValue>> published;  // metrics matching this run
};

struct LoadedScenario {
  Scenario scenario;      // the file as written (with vary and published)
  std::vector<Run> runs;  // one per [vary] combination (one run without [vary])
};

struct LoadOptions {
  // Extra preset directories searched before the standard path.
  std::vector<std::string> preset_dirs;
  // Use $NICSIM_PRESETS and the standard path (PresetSearch::standard). Tests turn it off.
  bool standard_presets = true;
};

// Throws ConfigError.
LoadedScenario load_scenario_file(const std::string& path, const LoadOptions& options = {});
// `file_name` is used in messages and for locating presets.
LoadedScenario load_scenario_text(std::string_view text, const std::string& file_name,
                                  const LoadOptions& options = {});

// The effective configuration as TOML (every value, with units). load_scenario_text(dump(s))
// gives a Scenario equal to s.
std::string dump(const Scenario& s);

}  // namespace nicsim::config

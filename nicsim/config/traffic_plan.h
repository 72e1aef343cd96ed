#pragma once
// TrafficPlan — what a scenario's [[traffic.*]] entries ask every back-end to run, decided once:
// the TCP flows (who sends to whom, with which congestion control and DSCP, when), the latency
// probes (ICMP echo and UDP, their names, rates and sizes), the phases (rrul's idle / load /
// idle) and the interval table's bins. `sim::Simulation` and `live` (emulation and real
// networks) both run a plan from plan(); neither expands [[traffic.*]] itself.
//
// Decisions the back-ends used to make differently (issue 9), fixed here:
//   - Congestion control is a property of the sending socket (Linux TCP_CONGESTION,
//     net.ipv4.tcp_congestion_control; the receiver's setting does not act on the data
//     direction), so a flow without its own `cc` uses its SENDER's tcp.cc. That includes rrul's
//     downloads: flent runs them as netperf TCP_MAERTS, where the netserver on the far host sends
//     (tohojo/flent flent/tests/rrul.conf).
//   - Probes are created in flent's DATA_SETS order (rrul.conf): UDP EF, UDP BK, UDP BE, ICMP.
//   - An rrul's client and server may be any two hosts: its uploads go client -> server, its
//     downloads server -> client.
//
// run_info() and recorder_layout() turn a run and its plan into what report::RunRecorder needs
// (docs/ARCHITECTURE.md, "Adding a back-end").

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/core/time.h"
#include "nicsim/report/run_recorder.h"

namespace nicsim::config {

// Bulk TCP from host `from` to host `to` (indexes into Scenario::hosts: the data direction).
struct FlowPlan {
  size_t from = 0;
  size_t to = 1;
  uint8_t dscp = 0;
  std::string cc;  // the sending socket's congestion control; "" = the sender's system default
  Duration start;
  Duration stop;
  std::string name;  // "" or flent's series name, e.g. "TCP upload BE"
  // "off" | "classic" (RFC 3168, ECT(0)) | "l4s" (RFC 9331, ECT(1)): config::flow_ecn
  std::string ecn = "off";
  bool operator==(const FlowPlan&) const = default;
};

// A latency probe: requests from `from` to `to`, answered at once by `to`.
struct ProbePlan {
  std::string name;  // result key: "ping", "udp", "ping-2", "udp_ef", ...
  bool icmp = false;
  size_t from = 0;
  size_t to = 1;
  Duration interval = Duration::s(1);
  int64_t size = 64;  // payload bytes (ICMP: after the 8-byte header; UDP: the datagram's)
  Duration start;
  Duration stop;
  uint8_t dscp = 0;
  bool operator==(const ProbePlan&) const = default;
};

// Unresponsive constant-rate UDP (flent's udp_flood): datagram k (0-based) of `size` payload
// bytes leaves `from` at start + rate.transmit_time(k * size) while that is before `stop`.
struct FloodPlan {
  std::string name;  // result key: "udp_flood", "udp_flood-2", ..., "voip", "voip-2", ...
  size_t from = 0;
  size_t to = 1;
  Rate rate;         // UDP payload bits per second (iperf -b)
  int64_t size = 0;  // UDP payload bytes
  Duration start;
  Duration stop;
  uint8_t dscp = 0;
  // "" for udp_flood; a [[traffic.voip]]'s codec (report::voip_codec), whose packets are
  // `size` bytes every codec interval (rate = size * 8 / interval, exact)
  std::string codec;
  bool operator==(const FloodPlan&) const = default;
};

// One [[traffic.transfers]] entry: where its transfers run and under which result key.
struct TransferSetPlan {
  std::string name;   // "transfers", "transfers-2", ...
  size_t client = 0;  // requests and receives
  size_t server = 1;  // sends each response on a new TCP connection
  uint8_t dscp = 0;
  std::string cc;  // the server's sending socket
  std::string ecn = "off";
  bool operator==(const TransferSetPlan&) const = default;
};

// One request/response: at `at` the client asks, the server answers with `size` bytes.
struct TransferPlan {
  size_t set = 0;  // index into TrafficPlan::transfer_sets
  Duration at;
  int64_t size = 0;
  bool operator==(const TransferPlan&) const = default;
};

struct PhasePlan {
  std::string name;
  Duration start;
  Duration end;
  bool operator==(const PhasePlan&) const = default;
};

struct TrafficPlan {
  Duration duration;
  // The hosts' names by index (Scenario::hosts order; FlowPlan / ProbePlan from and to index it).
  std::vector<std::string> hosts;
  // The scenario has [[links]] (a network, network.h): results name each flow's and probe's
  // hosts and add per-pair totals and Jain's index (docs/results.md). False for the two-host form,
  // whose results stay as they were.
  bool network = false;
  // Interval table bins; set by rrul (its `bin`), else the back-end's default (1 s).
  std::optional<Duration> interval;
  std::vector<FlowPlan> flows;
  std::vector<ProbePlan> probes;  // in creation order: result keys and probe ids follow it
  std::vector<PhasePlan> phases;  // rrul: idle_before, load, idle_after
  std::vector<FloodPlan> floods;  // [[traffic.udp_flood]] in order, then [[traffic.voip]]
  std::vector<TransferSetPlan> transfer_sets;  // [[traffic.transfers]] in order
  // Every transfer of the run, drawn once from the scenario's seed (config/flow_sizes.h), in
  // arrival order within each set, sets one after the other.
  std::vector<TransferPlan> transfers;
  // [[traffic.flent]]: flent's test name (not rrul: rrul's results are recognised by their
  // series names); "" otherwise. The flent export names the file's test after it.
  std::string flent_test;
  bool operator==(const TrafficPlan&) const = default;
};

// The scenario's traffic, between any two distinct hosts (the loader has checked that each
// entry's hosts reach each other). Throws std::invalid_argument naming the entry
// ("traffic.tcp[0]: ...") for an unknown host or one that sends to itself.
TrafficPlan plan(const Scenario& s);
// A flow's ECN mode: the flow's `ecn` when set, else "classic" for dctcp, "l4s" for prague
// (TCP_CONG_NEEDS_ECN: they request ECN whatever tcp_ecn says), else the sending host's
// tcp.ecn ("classic" when true, "off" otherwise).
std::string flow_ecn(const std::optional<std::string>& ecn, const std::string& cc,
                     const TcpConfig& sender);

// flent's rrul between host `client` and host `server` (rrul.conf): 4 TCP uploads client ->
// server and 4 downloads server -> client marked BE, BK (CS1), CS5, EF over
// [load_start, load_end); UDP probes EF, BK, BE and an ICMP ping client -> server every
// `probe_interval` over [start, end); phases idle_before, load, idle_after. Each flow's cc is
// its sender's (`client_cc` for uploads, `server_cc` for downloads).
struct RrulPlan {
  size_t client = 0;
  size_t server = 1;
  Duration start;
  Duration load_start;
  Duration load_end;
  Duration end;
  Duration probe_interval = Duration::ms(200);
  std::string client_cc;
  std::string server_cc;
  std::string client_ecn = "off";  // FlowPlan::ecn of the uploads / downloads
  std::string server_ecn = "off";
};
void add_rrul(TrafficPlan& plan, const RrulPlan& rrul);

// The run's identity for report::RunRecorder: label, params, seed, the effective configuration
// (dump) and the [published] numbers that match it.
report::RunInfo run_info(const Run& run, std::string backend);

// The recorder's view of a plan: flows and probes in plan order with their directions (a->b
// when the sender was written before the receiver: host 0 -> host 1 in the two-host form) and,
// for a network, their hosts' names; phases, bins (`default_interval` unless the plan sets them).
report::RunLayout recorder_layout(const TrafficPlan& plan, Duration default_interval);

}  // namespace nicsim::config

#pragma once
// Results of one nicsim invocation: plain data that the back-ends (sim, emu) fill and that
// nicsim/report writes as JSON (json.h) and prints as iperf3/ping-style text (text.h).
//
// The JSON layout, every field and its unit are documented in docs/results.md and checked by
// the JSON Schema docs/results.schema.json. Field names here carry their unit as a suffix
// (_s seconds, _ms milliseconds, _bytes, _bps / bits_per_second); the JSON keys are the same.
//
// Determinism: everything except `Results::meta` is a function of the scenario and the seed, so
// two runs with the same seed must produce byte-identical JSON outside "meta" (json.h writes
// keys in a fixed order and numbers with a fixed algorithm). Wall-clock facts (start time, wall
// seconds, events per second, host name, command line) go ONLY in Meta.
//
// Layering: report depends on core only; nothing here knows sim, emu, model, config or algo.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace nicsim::report {

// The two directions of traffic between hosts "a" and "b", and their JSON keys: a->b is from the
// first host written to the second. In a network (more hosts), a->b holds the flows and probes
// whose sender was written before their receiver, b->a the others (docs/results.md).
enum class Direction { kAtoB = 0, kBtoA = 1 };
inline constexpr Direction kDirections[] = {Direction::kAtoB, Direction::kBtoA};
constexpr std::string_view direction_key(Direction d) {
  return d == Direction::kAtoB ? "a->b" : "b->a";
}
// The host that sends in direction d ("a" for a->b).
constexpr std::string_view sender_host(Direction d) { return d == Direction::kAtoB ? "a" : "b"; }

// One value per direction; written as {"a->b": ..., "b->a": ...}.
template <typename T>
struct PerDirection {
  T a_to_b{};
  T b_to_a{};
  T& operator[](Direction d) { return d == Direction::kAtoB ? a_to_b : b_to_a; }
  const T& operator[](Direction d) const { return d == Direction::kAtoB ? a_to_b : b_to_a; }
  bool operator==(const PerDirection&) const = default;
};

// A varied scenario value as written ([vary] in the scenario): same alternatives, same order, as
// nicsim::config::VaryValue, so the config layer's values copy over without conversion.
using ParamValue = std::variant<bool, int64_t, double, std::string>;
struct RunParam {
  std::string key;  // the varied key as written in the scenario, e.g. "hosts.a.nic.bql"
  ParamValue value;
  bool operator==(const RunParam&) const = default;
};

// Latency statistics in milliseconds (LatencyRecorder::stats() produces them).
// Percentiles use linear interpolation between order statistics (numpy's default, "type 7";
// flent and irtt medians agree with it); see latency_recorder.h. mdev is the population standard
// deviation, as ping's "mdev"/"stddev". When count == 0 the statistics are undefined: they are
// zero here and written as null in JSON.
struct LatencyStats {
  double min = 0;
  double mean = 0;
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
  double max = 0;
  double mdev = 0;
  uint64_t count = 0;  // samples received
  uint64_t lost = 0;   // probes sent and never answered (or never delivered, for one-way)
  bool operator==(const LatencyStats&) const = default;
};

// Every sample of one probe in send order (latency CDFs, flent export, per-phase statistics).
// Columns: `time_s` gives the send times; `rtt_ms` has exactly as many entries; each one-way
// column is either empty (not measured) or exactly as long as `time_s`. nullopt = lost (JSON
// null): the request or the reply for rtt_ms, that direction's packet for a one-way column.
struct ProbeSeries {
  std::vector<double> time_s;                            // send time, seconds since run start
  std::vector<std::optional<double>> rtt_ms;             // nullopt = lost -> JSON null
  std::vector<std::optional<double>> one_way_a_to_b_ms;  // empty = not measured
  std::vector<std::optional<double>> one_way_b_to_a_ms;  // empty = not measured
  bool operator==(const ProbeSeries&) const = default;
};

// One latency probe (ICMP ping or an isochronous UDP probe). `rtt` holds round-trip times; a
// UDP probe that timestamps both ways also has one-way delays (exact: both hosts share the
// back-end's clock).
struct ProbeLatency {
  std::string kind;  // "icmp" | "udp"
  LatencyStats rtt;
  std::optional<PerDirection<LatencyStats>> one_way;
  uint8_t dscp = 0;      // DSCP the probe's packets carry (0..63; EF = 46, CS1 = 8)
  ProbeSeries series{};  // every sample (may be empty when the back-end keeps statistics only)
  // The requesting and the answering host, in a network ("" in the two-host form, where the
  // probe's one-way directions say it).
  std::string from{};
  std::string to{};
  bool operator==(const ProbeLatency&) const = default;
};

// Totals of one direction, in the shape of iperf3's end-of-test "sender" / "receiver" lines.
struct SenderTotals {
  double start_s = 0;
  double end_s = 0;
  uint64_t bytes = 0;          // bytes the sending application handed to TCP
  double bits_per_second = 0;  // bytes * 8 / (end_s - start_s)
  uint64_t retransmits = 0;    // TCP segments retransmitted
  bool operator==(const SenderTotals&) const = default;
};
struct ReceiverTotals {
  double start_s = 0;
  double end_s = 0;
  uint64_t bytes = 0;          // bytes delivered in order to the receiving application
  double bits_per_second = 0;  // bytes * 8 / (end_s - start_s): the goodput
  bool operator==(const ReceiverTotals&) const = default;
};
// A TCP flow's ECN outcome (present only for flows that negotiated ECN).
struct FlowEcn {
  std::string codepoint;         // "ect0" (RFC 3168) or "ect1" (L4S, RFC 9331) on the data
  uint64_t ce_marked = 0;        // data segments that reached the receiver CE-marked
  uint64_t ce_echoed = 0;        // segments the sender learned were CE-marked (tp->delivered_ce)
  uint64_t cwnd_reductions = 0;  // entries into the CWR state (ECN echo, local congestion)
  bool operator==(const FlowEcn&) const = default;
};

struct FlowTransfer {
  int64_t id = 0;  // stream id shown as "[  5]" (iperf3 numbers streams 5, 7, 9, ...)
  SenderTotals sender;
  ReceiverTotals receiver;
  // Last, with initializers, so that {id, sender, receiver} still initializes a FlowTransfer.
  std::string name{};  // e.g. "TCP upload BE" (flent's rrul series names); "" when unnamed
  uint8_t dscp = 0;    // DSCP of the flow's data packets (0..63)
  // Sending and receiving host, in a network ("" in the two-host form: the direction says it).
  std::string from{};
  std::string to{};
  std::optional<FlowEcn> ecn{};  // flows that negotiated ECN
  bool operator==(const FlowTransfer&) const = default;
};
// Sum over the direction's flows plus each flow. A direction without traffic has no flows.
struct DirectionTransfer {
  SenderTotals sender;
  ReceiverTotals receiver;
  std::vector<FlowTransfer> flows;
  bool operator==(const DirectionTransfer&) const = default;
};

// Totals of the flows between one pair of hosts in one direction (a network's "from->to").
struct PairTransfer {
  SenderTotals sender;
  ReceiverTotals receiver;
  bool operator==(const PairTransfer&) const = default;
};

// Per-interval samples (iperf3's interval lines). `bytes` are bytes delivered to the receiving
// application during the interval; cwnd is sampled at the interval's end.
struct FlowInterval {
  int64_t id = 0;
  uint64_t bytes = 0;
  double bits_per_second = 0;
  uint64_t retransmits = 0;
  uint64_t cwnd_bytes = 0;
  // Sender's smoothed RTT (RFC 6298 SRTT, Linux tcpi_rtt, iperf3's interval "rtt") at the
  // interval's end; absent before the flow's first RTT sample or when the back-end cannot see
  // it. The "self probes" of the responsiveness metric (latency_under_load.h).
  std::optional<double> srtt_ms{};
  bool operator==(const FlowInterval&) const = default;
};
struct DirectionInterval {
  uint64_t bytes = 0;               // summed over the direction's flows
  double bits_per_second = 0;       // bytes * 8 / (end_s - start_s)
  uint64_t retransmits = 0;         // summed over flows
  uint64_t cwnd_bytes = 0;          // SUM of the flows' congestion windows (bytes)
  std::vector<FlowInterval> flows;  // per flow (may be empty when the back-end has one flow)
  bool operator==(const DirectionInterval&) const = default;
};
// One udp_flood's or voip stream's share of an interval: its datagrams SENT in the interval
// (flent's per-sample series of iperf -u and irtt: udp_flood.conf "UDP upload", voip.inc
// "VoIP::delay", "VoIP::jitter", "VoIP::loss").
struct FloodInterval {
  double bits_per_second = 0;  // payload of those that arrived, per second of the interval
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t lost = 0;  // never arrived and sent at least kLossHorizon before the end
  std::optional<double> one_way_ms{};  // mean one-way delay of those that arrived
  // voip: mean |IPDV| (RFC 3393) over consecutive packets both arrived, the later one sent in
  // the interval; absent for udp_flood and without such a pair
  std::optional<double> ipdv_ms{};
  bool operator==(const FloodInterval&) const = default;
};

struct Interval {
  double start_s = 0;
  double end_s = 0;
  PerDirection<DirectionInterval> directions;
  // Mean round-trip time per probe over the samples received in this interval; a probe with
  // no sample in the interval is absent.
  std::map<std::string, double> latency_ms;
  // By udp_flood / voip name (Run::udp_flood, Run::voip); empty without floods.
  std::map<std::string, FloodInterval> floods{};
  bool operator==(const Interval&) const = default;
};

// Queue and BQL occupancy of one host, sampled over time, stored by column. `time_s` gives the
// sample times; every other column is either empty (not applicable to this host's NIC, e.g. no
// BQL, no USB device FIFO) or exactly as long as `time_s`.
struct QueueSeries {
  std::vector<double> time_s;
  std::vector<uint64_t> qdisc_bytes;
  std::vector<uint64_t> qdisc_packets;
  std::vector<uint64_t> ring_bytes;  // TX ring (driver + device descriptors)
  std::vector<uint64_t> ring_packets;
  std::vector<uint64_t> bql_limit_bytes;     // dql.limit
  std::vector<uint64_t> bql_inflight_bytes;  // dql num_queued - num_completed
  std::vector<uint64_t> device_fifo_bytes;   // USB adapter's TX FIFO / device buffer
  bool operator==(const QueueSeries&) const = default;
};

// Mean time packets spent in one stage of the path, per direction. Recommended stage names, in
// path order: "qdisc", "ring", "usb", "wire", "rx" (device RX + coalescing + NAPI), "stack".
struct StageTime {
  std::string stage;
  double mean_ms = 0;
  uint64_t packets = 0;  // packets that completed the stage (the mean's denominator)
  bool operator==(const StageTime&) const = default;
};

// One row of the comparison with numbers published in a seed report ([published] in the
// scenario). relative_error = (simulated - published) / published; absent when published is 0
// or the run did not measure the metric.
struct Comparison {
  std::string metric;  // as written in [published], unit in the name: "ping_ms", "goodput_mbit"
  double published = 0;
  std::optional<double> simulated;
  std::optional<double> relative_error;
  std::string source;  // [published] source text, may be empty
  bool operator==(const Comparison&) const = default;
};

// A phase of a run, e.g. rrul's idle / load / idle. Recommended names: "idle_before", "load",
// "idle_after"; phases are in time order and do not overlap.
struct Phase {
  std::string name;
  double start_s = 0;
  double end_s = 0;
  bool operator==(const Phase&) const = default;
};

// Latency under load: computed by report/latency_under_load.h from a run's probe series, phases
// and per-flow intervals, identically for sim, emu and live runs. docs/results.md and
// docs/rrul.md define every field.
struct LatencyUnderLoad {
  LatencyStats idle_rtt;    // RTT samples of all latency probes sent in idle phases
  LatencyStats loaded_rtt;  // ... sent during the load phase
  std::optional<PerDirection<LatencyStats>> idle_one_way, loaded_one_way;
  double induced_latency_ms = 0;  // loaded_rtt.mean - idle_rtt.mean (docs/rrul.md)
  std::string grade;              // "A+","A","B","C","D","F" (Waveform thresholds, docs/rrul.md)
  double rpm = 0;  // responsiveness (draft-ietf-ippm-responsiveness), round trips per minute
  double rpm_foreign_ms = 0;          // trimmed mean of the foreign probes' loaded RTTs
  std::optional<double> rpm_self_ms;  // trimmed mean of the load flows' SRTTs (self probes)
  PerDirection<double> fairness;      // Jain's index over that direction's flows (load phase)
  double fairness_all = 0;            // Jain's index over all load flows
  std::map<std::string, LatencyStats> per_dscp;  // "EF","CS5","BE","CS1" -> loaded probe RTTs
  std::map<std::string, LatencyStats> per_dscp_flow_srtt;  // load flows' SRTT by DSCP (load)
  PerDirection<double> goodput_bps;                        // during the load phase only
  bool operator==(const LatencyUnderLoad&) const = default;
};

// One interface of a network run (a host's NIC or a router interface's), over the whole run.
// Present only for scenarios with [[links]]; the two-host form has none.
struct InterfaceResult {
  std::string node;         // the owning node
  uint64_t tx_packets = 0;  // frames put on the wire
  uint64_t tx_bytes = 0;
  uint64_t rx_packets = 0;  // frames delivered to the node's stack
  uint64_t rx_bytes = 0;
  uint64_t qdisc_drops = 0;    // packets the egress qdisc dropped (refused or head-dropped)
  uint64_t rx_drops = 0;       // frames lost in the NIC (RX ring / FIFO overflow)
  uint64_t forwarded_out = 0;  // routers: frames the router sent out here
  // The qdisc kind's own counters as `tc -s qdisc show` names them (ecn_mark, new_flow_count,
  // ...); empty for kinds with only the common counters.
  std::map<std::string, uint64_t> qdisc;
  bool operator==(const InterfaceResult&) const = default;
};

// One node of a network run: its CPU and, for a router, its forwarding counters.
struct NodeResult {
  bool router = false;
  double cpu_busy_s = 0;       // time its core was busy
  double cpu_utilization = 0;  // cpu_busy_s / the run's duration
  uint64_t forwarded = 0;      // routers: frames accepted by an egress interface
  uint64_t no_route = 0;       // routers: dropped, no route to the destination host
  uint64_t ttl_expired = 0;    // routers: dropped at TTL expiry (emulator frames only)
  bool operator==(const NodeResult&) const = default;
};

// One [[traffic.udp_flood]]: unresponsive constant-rate UDP (flent's udp_flood). Loss follows
// the probes' rule: a datagram still missing at the end counts as lost only if it was sent at
// least kLossHorizon (1 s) before the end (in 10 ms steps of send time, run_recorder.h).
struct FloodResult {
  std::string direction;  // "a->b" | "b->a": the data direction
  uint8_t dscp = 0;
  double rate_bps = 0;      // offered UDP payload rate (iperf -b)
  int64_t size = 0;         // UDP payload bytes per datagram
  uint64_t sent = 0;        // datagrams the application sent
  uint64_t received = 0;    // datagrams that arrived
  uint64_t lost = 0;        // sent before the loss horizon and never arrived
  double loss_pct = 0;      // lost / datagrams sent before the loss horizon, in %
  double received_bps = 0;  // payload bits that arrived per second of the flood's window
  LatencyStats one_way;     // one-way delay of the datagrams that arrived (ms); `lost` as above
  std::string from{};       // sending host, in a network ("" in the two-host form)
  std::string to{};
  bool operator==(const FloodResult&) const = default;
};

// One [[traffic.voip]]: isochronous voice packets (one RTP packet per codec interval), with
// RFC 3393 IPDV, loss bursts and an ITU-T G.107 E-model estimate (emodel.h). Packets are judged
// lost by the probes' rule (sent at least kLossHorizon before the end, never arrived).
struct VoipResult {
  std::string direction;  // "a->b" | "b->a"
  uint8_t dscp = 0;
  std::string codec;       // "g711", "g729a"
  double interval_ms = 0;  // one packet per interval
  int64_t size = 0;        // UDP payload bytes (RTP header + codec frames)
  uint64_t sent = 0;       // packets sent
  uint64_t received = 0;   // packets that arrived
  uint64_t lost = 0;       // judged packets that never arrived
  double loss_pct = 0;     // lost / judged x 100
  LatencyStats one_way;    // one-way delay of the packets that arrived (ms)
  // IPDV (RFC 3393): D(i+1) - D(i) for every pair of consecutive packets (by sequence number)
  // that both arrived; mean of |IPDV| and the 99th percentile of |IPDV|, ms. 0 with < 2 pairs.
  double ipdv_mean_abs_ms = 0;
  double ipdv_p99_ms = 0;
  uint64_t loss_bursts = 0;    // runs of consecutive lost packets
  uint64_t longest_burst = 0;  // the longest run, packets
  double burst_ratio = 1;      // G.107 BurstR = 1 / (p + q) (two-state Markov fit); 1 = random
  // E-model: Ta = p99 one-way delay + the codec interval (packetisation); Ppl = loss_pct.
  double mouth_to_ear_ms = 0;
  double r_factor = 0;
  double mos = 0;
  std::string from{};
  std::string to{};
  bool operator==(const VoipResult&) const = default;
};

// One [[traffic.transfers]] entry: flow completion times (FCT: from the client's request to
// the last response byte delivered to the client's application), overall and per size bucket.
// A transfer not complete at the end counts in `lost` if it started at least kLossHorizon
// before the end, else it is left out (it may still finish).
struct TransfersResult {
  std::string direction;  // the responses' data direction, "a->b" | "b->a"
  uint8_t dscp = 0;
  uint64_t started = 0;    // requests made
  uint64_t completed = 0;  // responses delivered in full
  uint64_t bytes = 0;      // response bytes delivered to the client
  LatencyStats fct_ms;     // completed transfers (count), incomplete ones (lost)
  // By response size: "<10KB", "10KB-100KB", "100KB-1MB", ">=1MB" (KB = 1000 B); all four.
  std::map<std::string, LatencyStats> buckets;
  std::string from{};  // the client, in a network
  std::string to{};    // the server
  bool operator==(const TransfersResult&) const = default;
};

// Receive-side batching of one host's NIC over the run (docs/rx-batching.md): written for a
// host whose NIC has GRO, deferred IRQs, threaded NAPI, busy polling, an Intel ITR mode or
// several queue pairs, and for every platform-NIC host of a run that varies one of those keys
// (so the off and on runs of a sweep compare). Absent otherwise.
struct RxBatching {
  bool gro = false;               // GRO on at this NIC
  uint64_t frames = 0;            // frames the driver took from the RX ring
  uint64_t packets = 0;           // packets handed to the stack (after GRO; = frames without)
  double frames_per_packet = 0;   // frames / packets (1 without GRO)
  uint64_t largest = 0;           // most frames merged into one packet
  double rx_cpu_s = 0;            // receive work on the core: per frame, per packet, copy
  double rx_cpu_ns_per_byte = 0;  // rx_cpu_s per received frame byte, in nanoseconds
  double cpu_busy_s = 0;          // the host's cores' whole busy time (IRQ, polls, TX, ACKs)
  // The knee (issue 17 item 5; optional in documents written before them, read as 0): what
  // interrupt moderation trades. CPU per frame counts the whole core (IRQ and poll entry, the
  // receive work, the ACKs and TX cleaning it causes), the cost that coalescing and GRO lower.
  bool adaptive_rx = false;     // adaptive moderation (net_dim) on at this NIC
  uint64_t rx_irqs = 0;         // interrupts the NIC raised for received frames
  uint64_t tx_irqs = 0;         // ... for TX completions (with one NAPI context for RX and TX,
                                // as ixgbe's queue vectors, these polls receive too)
  uint64_t polls = 0;           // NAPI poll invocations (RX and TX contexts)
  double irqs_per_s = 0;        // (rx_irqs + tx_irqs) per second of the run
  double cpu_ns_per_frame = 0;  // cpu_busy_s per received frame, in nanoseconds
  // Latency the receive path added to each frame that reached the stack: from its last bit on
  // the wire to its delivery to the stack (coalescing wait, RX ring wait, poll work, GRO hold),
  // ms; the `rx` stage of this host's incoming frames. Lost frames are not counted.
  LatencyStats rx_latency_ms{};
  // NAPI deferral / busy polling (optional in documents written before them).
  uint64_t napi_timer_polls = 0;    // polls the gro_flush_timeout hrtimer scheduled
  uint64_t busy_poll_sessions = 0;  // napi_busy_loop sessions of the application
  double busy_spin_s = 0;           // time the application spun (part of cpu_busy_s)
  // A multi-queue NIC (NIC key `queues` > 1): frames per RX queue, and the busy time of each
  // queue's core (queue 0: the host's own core). Empty for one queue pair.
  std::vector<uint64_t> queue_frames;
  std::vector<double> queue_cpu_busy_s;
  bool operator==(const RxBatching&) const = default;
};

struct Run {
  std::string label;             // "bql=true rate=1Gbit" ("" for a scenario without [vary])
  std::vector<RunParam> params;  // in [vary] order
  std::string backend = "sim";   // "sim" | "emu"
  uint64_t seed = 0;
  double duration_s = 0;                           // simulated (or emulated) seconds
  PerDirection<double> goodput_bps;                // receiver bits per second per direction
  uint64_t retransmits = 0;                        // both directions
  std::map<std::string, ProbeLatency> latency_ms;  // by probe name
  PerDirection<DirectionTransfer> transfer;
  // A network's totals per "from->to" host pair, summed from the flows that name their hosts
  // (empty in the two-host form).
  std::map<std::string, PairTransfer> pairs;
  // Jain's index over every flow's goodput over its own window (flow_fairness()); set for a
  // network's runs (the two-host form's results keep their fields).
  std::optional<double> fairness;
  std::vector<Interval> intervals;
  // Two-host form: "a", "b" (the first / second host); networks: per interface, a host's name
  // or "router.iface".
  std::map<std::string, QueueSeries> queues;
  PerDirection<std::vector<StageTime>> stages;
  std::vector<Comparison> comparison;
  std::vector<Phase> phases;  // empty when the run has no phases
  std::optional<LatencyUnderLoad> latency_under_load;
  std::string config_toml;  // the run's effective configuration (config::dump), TOML
  // Networks only (empty in the two-host form): by interface label and by node name.
  std::map<std::string, InterfaceResult> interfaces;
  std::map<std::string, NodeResult> nodes;
  // By host name: see RxBatching (absent for runs without GRO).
  std::map<std::string, RxBatching> rx_batching;
  // Campaigns with repetitions ([scenario] repeat, --repeat; docs/campaigns.md): this run's
  // repetition, 0-based (its seed is derived from the scenario's); absent without repetitions.
  std::optional<uint64_t> repetition{};
  // [[traffic.udp_flood]] results by name ("udp_flood", "udp_flood-2", ...); absent without.
  std::map<std::string, FloodResult> udp_flood{};
  // [[traffic.voip]] results by name ("voip", "voip-2", ...); absent without.
  std::map<std::string, VoipResult> voip{};
  // [[traffic.transfers]] results by name ("transfers", "transfers-2", ...); absent without.
  std::map<std::string, TransfersResult> transfers{};
  // flent's test this run's traffic is ([[traffic.flent]], nicsim flent-test), except rrul;
  // "" otherwise. The flent export uses it as the file's test name.
  std::string flent_test{};
  bool operator==(const Run&) const = default;
};

// A confidence interval of one metric over a run's repetitions (report/run_statistics.h).
struct ConfidenceInterval {
  double low = 0;
  double high = 0;
  double half_width = 0;  // (high - low) / 2
  double level = 0;       // coverage: 0.95 (Student t) or what the order statistics give
  std::string method;     // "student-t" (means) | "order-statistic" (the median, percentiles)
  bool operator==(const ConfidenceInterval&) const = default;
};

// One metric over the repetitions of one run (a [vary] combination).
struct MetricStatistics {
  std::string unit;  // "Mbit/s", "ms", "count", "RPM"
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one repetition
  double median = 0;
  double min = 0;
  double max = 0;
  std::optional<ConfidenceInterval> ci;  // absent below two repetitions
  bool operator==(const MetricStatistics&) const = default;
};

// The statistics of one [vary] combination over its repetitions (report/run_statistics.h).
struct RunStatistics {
  std::string label;             // the runs' label without " rep=N"
  std::vector<RunParam> params;  // in [vary] order
  uint64_t repetitions = 0;
  std::vector<uint64_t> seeds;                      // in repetition order
  std::map<std::string, MetricStatistics> metrics;  // by metric name (docs/campaigns.md)
  bool operator==(const RunStatistics&) const = default;
};

// Per-run wall-clock facts.
struct RunMeta {
  std::string label;
  double wall_s = 0;
  uint64_t events = 0;
  double events_per_s = 0;
  bool operator==(const RunMeta&) const = default;
};

// Wall-clock and machine facts: the only part of Results that may differ between two runs with
// the same seed.
struct Meta {
  std::string nicsim_version;
  std::optional<std::string> git_commit;
  std::string start_time;  // ISO 8601 UTC, e.g. "2024-05-01T12:00:00Z" (iso8601_utc)
  double wall_s = 0;
  std::string host;
  uint64_t events = 0;      // simulator events executed (all runs)
  double events_per_s = 0;  // events / wall_s
  std::vector<std::string> command_line;
  std::vector<RunMeta> runs;
  // A part written by `nicsim run --shard K/N`: which part, and each run's index in the whole
  // campaign (nicsim merge restores the serial order from them).
  struct Shard {
    uint64_t index = 0;  // K, 1-based
    uint64_t count = 0;  // N
    uint64_t total_runs = 0;
    std::vector<uint64_t> run_indexes;
    bool operator==(const Shard&) const = default;
  };
  std::optional<Shard> shard{};
  bool operator==(const Meta&) const = default;
};

struct Results {
  Meta meta;
  std::vector<Run> runs;
  std::vector<RunStatistics> statistics{};  // campaigns with repetitions; empty otherwise
  bool operator==(const Results&) const = default;
};

// --- helpers for back-ends ---------------------------------------------------------------

// (simulated - published) / published, or nullopt when published == 0.
std::optional<double> relative_error(double published, double simulated);

// Fills each direction's sender and receiver totals from its flows (transfer[d].flows): bytes
// and retransmits summed, the window from the earliest flow start to the latest flow end, the
// rates over that window; a direction without flows is left alone. Flows that name their hosts
// (a network) are also summed per "from->to" pair into run.pairs, the same way. Then
// derive_totals(run).
void sum_flows(Run& run);

// Jain's fairness index over every flow of the run (both directions), from each flow's goodput
// over its own window (receiver.bits_per_second): 1 when all are equal, 1/n when one of n flows
// gets everything, 0 without flows (latency_under_load.h: jain_fairness).
double flow_fairness(const Run& run);

// Fills goodput_bps from transfer[d].receiver.bits_per_second and retransmits from the senders'
// retransmits (both directions).
void derive_totals(Run& run);

// bytes * 8 / seconds (0 when seconds <= 0).
double bits_per_second(uint64_t bytes, double seconds);

// iperf3's stream ids: 5, 7, 9, ... for the index-th flow (0-based).
constexpr int64_t iperf3_stream_id(int64_t index) { return 5 + 2 * index; }

// Seconds since the Unix epoch -> "YYYY-MM-DDThh:mm:ssZ" (UTC; fractional seconds dropped).
std::string iso8601_utc(int64_t unix_seconds);

// DSCP name as flent and tc write it: "BE" (0), "CS1".."CS7", "AF11".."AF43", "EF" (46),
// "VA" (44); other code points as their decimal number.
std::string dscp_name(uint8_t dscp);

// Structural checks the JSON Schema cannot express (equal column lengths, interval and phase
// order, finite numbers, backend name, DSCP range). Returns one message per problem; empty when
// consistent.
std::vector<std::string> check_results(const Results& results);

}  // namespace nicsim::report

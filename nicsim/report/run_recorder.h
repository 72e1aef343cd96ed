#pragma once
// RunRecorder — turns a back-end's samples into a report::Run, the same way for every back-end
// (the simulator, the emulator's and the live traffic engine). A back-end only measures:
//
//   - at every interval boundary (next_boundary()) the cumulative counters of each flow
//     (FlowCounters: receiver bytes, retransmits, cwnd, SRTT) -> close_interval();
//   - each probe request it sends (probe_sent) and each answer (probe_answered, and for a
//     probe that measures one-way delays probe_forward);
//   - at the end, each flow's totals (FlowTotals) -> finish().
//
// The recorder owns everything derived: interval rows (byte and retransmit deltas, rates,
// per-probe mean RTT), the loss rule (kLossHorizon), probe statistics and series, phases,
// direction totals, latency under load, the run's identity (RunInfo) and the comparison with
// published numbers. report depends on core only: flows and probes are described here by
// direction and name, never by sim, config or live types.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/report/latency_recorder.h"
#include "nicsim/report/results.h"

namespace nicsim::report {

// A probe still unanswered at the end of a run counts as lost only if it was sent at least this
// long before the end; one sent later may still be on its way and is left out of both the
// statistics and the series (ping's -w deadline and irtt's wait play the same role).
inline constexpr Duration kLossHorizon = Duration::s(1);

// The interval table's bin when a scenario names none: iperf3's -i default.
inline constexpr Duration kDefaultInterval = Duration::s(1);

// A [published] value: a number, or text for `source` (as nicsim::config::PublishedValue).
using PublishedValue = std::variant<double, std::string>;

// Who the run is (not measured): copied into the Run as given.
struct RunInfo {
  std::string label;
  std::vector<RunParam> params;
  std::string backend = "sim";
  uint64_t seed = 0;
  std::string config_toml;
  // Metrics to compare with (metric -> published value); "source" names where they come from.
  std::vector<std::pair<std::string, PublishedValue>> published;
};

struct FlowSpec {
  Direction dir = Direction::kAtoB;  // the data direction
  std::string name;                  // "" or flent's series name
  uint8_t dscp = 0;
  Duration start;
  Duration stop;
  std::string from{};  // sending host, in a network ("" in the two-host form)
  std::string to{};    // receiving host, idem
};

struct ProbeSpec {
  std::string name;  // the result key
  bool icmp = false;
  Direction dir = Direction::kAtoB;  // the request leg
  uint8_t dscp = 0;
  bool one_way = false;  // the back-end reports one-way delays (probe_forward / back)
  std::string from{};    // requesting host, in a network ("" in the two-host form)
  std::string to{};      // answering host, idem
};

// A constant-rate UDP flood (udp_flood): its datagrams are counted, not stored one by one.
struct FloodSpec {
  std::string name;  // the result key
  Direction dir = Direction::kAtoB;
  uint8_t dscp = 0;
  double rate_bps = 0;  // offered UDP payload rate
  int64_t size = 0;     // UDP payload bytes
  Duration start;
  Duration stop;
  std::string from{};  // in a network ("" in the two-host form)
  std::string to{};
  std::string codec{};  // "" for udp_flood; a voip codec (report::voip_codec): Run::voip
};

// A set of request/response transfers (one [[traffic.transfers]]).
struct TransferSetSpec {
  std::string name;
  Direction dir = Direction::kBtoA;  // the responses' direction (server -> client)
  uint8_t dscp = 0;
  std::string from{};  // the client, in a network
  std::string to{};    // the server
};

// Floods count sends and arrivals per step of send time, so that the loss rule (kLossHorizon)
// needs no per-datagram storage.
inline constexpr Duration kFloodStep = Duration::ms(10);

struct PhaseSpec {
  std::string name;
  Duration start;
  Duration end;
};

// What the back-end runs, in its order (flow and probe indexes below are into these).
struct RunLayout {
  Duration duration;
  Duration interval = kDefaultInterval;  // interval table bins
  std::vector<FlowSpec> flows;
  std::vector<ProbeSpec> probes;
  std::vector<PhaseSpec> phases;  // in time order; cut at the end of a run stopped early
  // A network's run: Run::fairness is set (flows and probes name their hosts in from / to).
  bool network = false;
  std::vector<FloodSpec> floods{};
  std::vector<TransferSetSpec> transfer_sets{};
  std::string flent_test{};  // Run::flent_test
};

// One flow's counters at an interval boundary (cumulative since the flow started).
struct FlowCounters {
  uint64_t received_bytes = 0;  // delivered in order to the receiving application
  uint64_t retransmits = 0;
  uint64_t cwnd_bytes = 0;        // at the boundary
  std::optional<double> srtt_ms;  // the sender's smoothed RTT, when it has one
};

// One flow's totals at the end of the run.
struct FlowTotals {
  uint64_t sender_bytes = 0;  // handed to TCP by the sending application (no retransmissions)
  uint64_t retransmits = 0;
  uint64_t received_bytes = 0;
  std::optional<FlowEcn> ecn{};  // when the flow negotiated ECN
};

class RunRecorder {
 public:
  RunRecorder(RunInfo info, RunLayout layout);

  const RunLayout& layout() const { return layout_; }

  // ---- intervals ----
  // The next interval boundary: one bin after the last, never after the run's duration.
  Time next_boundary() const;
  Time last_boundary() const { return last_boundary_; }
  // Closes the interval ending at `at` with each flow's counters (one per layout flow, in
  // order). Nothing happens when `at` is not after the last boundary.
  void close_interval(Time at, std::span<const FlowCounters> flows);

  // ---- probes (sample = the 0-based index of a probe's request, in send order) ----
  uint64_t probe_sent(size_t probe, Time sent);
  size_t probe_samples(size_t probe) const { return probes_[probe].samples.size(); }
  Time probe_sent_at(size_t probe, uint64_t sample) const {
    return probes_[probe].samples[sample].sent;
  }
  bool probe_is_answered(size_t probe, uint64_t sample) const {
    return probes_[probe].samples[sample].rtt.has_value();
  }
  // The request's one-way delay (it reached the far end), reported before or with the answer.
  void probe_forward(size_t probe, uint64_t sample, Duration forward) {
    probes_[probe].samples[sample].forward = forward;
  }
  // The answer: round-trip time and, for a one-way probe, the reply's one-way delay.
  void probe_answered(size_t probe, uint64_t sample, Duration rtt,
                      std::optional<Duration> back = std::nullopt);

  // ---- floods (udp_flood) ----
  // A datagram of flood `flood` left the application at `sent`; returns its sequence number
  // (0, 1, ... in send order).
  uint64_t flood_sent(size_t flood, Time sent);
  // Datagram `seq`, sent at `sent`, arrived `one_way` later.
  void flood_received(size_t flood, uint64_t seq, Time sent, Duration one_way);

  // ---- transfers ----
  // Transfer of set `set` and `size` bytes requested at `at`; returns its id (0, 1, ...).
  uint64_t transfer_started(size_t set, int64_t size, Time at);
  // Its last byte reached the client's application at `at`.
  void transfer_completed(uint64_t id, Time at);

  // ---- the end ----
  // The Run: closes the last interval at `end` (with `counters`) if it is still open, then
  // transfer totals (one FlowTotals per layout flow), probe statistics and series (kLossHorizon
  // before `end`), phases cut at `end`, latency under load and the published comparison.
  // `end` is the layout's duration unless the run stopped early. Call once.
  Run finish(Time end, std::span<const FlowCounters> counters, std::span<const FlowTotals> totals);

 private:
  struct Sample {
    Time sent;
    std::optional<Duration> rtt, forward, back;
  };
  struct ProbeState {
    std::vector<Sample> samples;
    Duration interval_sum;  // RTTs answered in the current interval
    int64_t interval_count = 0;
  };
  struct FlowState {
    uint64_t last_received = 0;
    uint64_t last_retransmits = 0;
  };

  struct FloodState {
    // Per kFloodStep of send time since the run's start: datagrams sent and arrived.
    std::vector<uint64_t> sent, received;
    std::vector<double> delay_ms;  // per step: one-way delays of the arrivals, summed
    uint64_t sent_total = 0, received_total = 0;
    LatencyRecorder one_way;
    // voip only: every packet's send time and one-way delay by sequence number.
    std::vector<Time> sent_at;
    std::vector<std::optional<Duration>> delay;
  };

  void add_transfers(Time end, std::span<const FlowTotals> totals);
  struct Transfer {
    size_t set = 0;
    int64_t size = 0;
    Time start;
    std::optional<Time> end;
  };

  FloodResult flood_result(size_t flood, Time end) const;
  TransfersResult transfers_result(size_t set, Time end) const;
  VoipResult voip_result(size_t flood, Time end) const;
  // Each interval's share of flood `flood` (Interval::floods), by send time.
  void add_flood_intervals(size_t flood, Time end);
  ProbeLatency probe_result(size_t probe, Time end) const;
  std::optional<double> measured(const std::string& metric) const;
  void compare_published();

  RunInfo info_;
  RunLayout layout_;
  std::vector<FlowState> flows_;
  std::vector<ProbeState> probes_;
  std::vector<FloodState> floods_;
  std::vector<Transfer> transfers_;
  Time last_boundary_;
  Run out_;
};

}  // namespace nicsim::report

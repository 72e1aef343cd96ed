#pragma once
// Human-readable output in the formats users already read:
//
// - iperf3's interval table and end summary (esnet/iperf src/iperf_locale.c formats,
//   src/iperf_api.c layout, src/units.c unit_snprintf): "[ ID] Interval ... Retr  Cwnd", lines
//   "[  5]   0.00-1.00   sec  7.27 MBytes  61.0 Mbits/sec   34   31.2 KBytes       ", the
//   "- - - -" separator, "sender"/"receiver" lines, "[SUM]" lines for several flows. Units as
//   iperf3: Transfer and Cwnd in binary units (KByte = 1024 bytes, MByte = 2^20), Bitrate in
//   decimal units (Mbit = 10^6 bits), four significant places ("%4.2f" below 9.995, "%4.1f"
//   below 99.95, "%4.0f" above). Lines are byte-identical to iperf3's, trailing blanks included.
// - ping's summary (Linux iputils by default, FreeBSD on request):
//     --- host ping statistics ---
//     21 packets transmitted, 21 received, 0% packet loss
//     rtt min/avg/max/mdev = 0.344/0.432/0.558/0.057 ms
//   iputils measures whole microseconds and truncates (avg = sum / n, mdev = integer square
//   root); nicsim truncates its nanosecond statistics to microseconds the same way, so the same
//   samples give the same line.
// - a per-probe latency table (RTT, and one-way delays for UDP probes), a per-stage latency
//   table, the comparison table "metric | published | simulated | error", and a progress line.
//
// Everything returns std::string; print(FILE*, text) writes it. Nothing here reads a clock.

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

// --- iperf3 ----------------------------------------------------------------------------------

inline constexpr std::string_view kIperf3IntervalHeader =
    "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd";
inline constexpr std::string_view kIperf3SummaryHeader =
    "[ ID] Interval           Transfer     Bitrate         Retr";
inline constexpr std::string_view kIperf3Separator =
    "- - - - - - - - - - - - - - - - - - - - - - - - -";

// "7.27 MBytes", "31.2 KBytes", " 512 Bytes" (adaptive binary units, 4 places).
std::string iperf3_bytes(double bytes);
// "61.0 Mbits/sec", " 950 Mbits/sec", "1.23 Gbits/sec" (adaptive decimal units, 4 places).
std::string iperf3_bitrate(double bits_per_second);

// One line each, without the newline. `id` nullopt prints "[SUM]".
std::string iperf3_interval_line(int64_t id, double start_s, double end_s, uint64_t bytes,
                                 double bits_per_second, uint64_t retransmits, uint64_t cwnd_bytes);
std::string iperf3_sum_interval_line(double start_s, double end_s, uint64_t bytes,
                                     double bits_per_second, uint64_t retransmits);
std::string iperf3_sender_line(std::optional<int64_t> id, const SenderTotals& s);
std::string iperf3_receiver_line(std::optional<int64_t> id, const ReceiverTotals& r);

// The whole table of one direction as the sending iperf3 client prints it (header, interval
// lines, per-flow + [SUM] lines when there are several flows, separator, summary). Empty when
// the direction carried no traffic.
std::string format_iperf3(const Run& run, Direction d);

// --- ping ------------------------------------------------------------------------------------

enum class PingStyle {
  kLinux,    // iputils: "N received, X% packet loss" / "rtt min/avg/max/mdev"
  kFreeBsd,  // "N packets received, X.X% packet loss" / "round-trip min/avg/max/stddev"
};

// The statistics block ping prints at the end (three lines, each ending in '\n'; the rtt line
// only when something was received). `time_ms`: iputils' ", time 2003ms" (Linux style only).
std::string format_ping_summary(std::string_view host, const LatencyStats& s,
                                PingStyle style = PingStyle::kLinux,
                                std::optional<double> time_ms = std::nullopt);

// --- tables and lines ------------------------------------------------------------------------

// The run's two hosts by name, as its configuration (config_toml, [hosts.NAME.*] tables in
// order) lists them; {"a", "b"} when it names none (e.g. a live run). Tables label the
// directions with them ("board->pc") and ICMP summaries are headed by the probe's name
// ("--- ping statistics ---", "--- ping-2 statistics ---": a Run does not record a probe's
// destination host, and its name is the key the latency table and the JSON use).
std::array<std::string, 2> host_names(const Run& run);

// One row per probe (RTT) plus, for probes with one-way delays, one row per direction.
std::string format_latency_table(const Run& run);
// The latency-under-load block (rrul): idle / loaded RTT and one-way statistics, per-DSCP
// loaded RTT and flow SRTT, induced latency and bufferbloat grade, RPM, Jain's fairness, load
// goodput. Empty when the run has no latency_under_load.
std::string format_latency_under_load(const Run& run);
// Mean time per stage and direction; empty when the run has no stage data.
std::string format_stage_table(const Run& run);
// Networks: per node CPU busy and router counters, per interface packets, drops and the qdisc's
// own counters; "" in the two-host form.
// One line per [[traffic.udp_flood]] (iperf -u's server report in spirit): offered rate, what
// arrived, lost/sent with the loss %, one-way delay mean / p50 / p99; then one line per
// [[traffic.voip]]: loss, bursts, one-way delay, IPDV, R and MOS; then one per
// [[traffic.transfers]]: completed / started and FCT p50 / p99 per size bucket. "" without any.
std::string format_workload_tables(const Run& run);
std::string format_network_table(const Run& run);
// GRO: per host frames, packets after GRO, frames per packet and receive CPU per byte; "" when
// the run has no rx_batching.
std::string format_rx_batching(const Run& run);
// "metric | published | simulated | error"; empty when there are no comparison rows.
std::string format_comparison_table(const std::vector<Comparison>& rows);
// "run 2/4 bql=true rate=1Gbit: 12.5/30 s simulated, 41x real time" (no newline).
// `speed` = simulated seconds per wall-clock second.
std::string format_progress(size_t run_number, size_t run_count, std::string_view label,
                            double simulated_s, double duration_s, double speed);

// The whole human report of one run: heading, iperf3 table per direction with traffic, ping
// summaries of ICMP probes, latency table, latency under load, stage table, comparison table.
// The iperf3 tables merge intervals shorter than 1 s (rrul bins) into rows of >= 1 s.
std::string format_run_report(const Run& run);
// Runs with rrul side by side, one row each: idle and loaded RTT means, induced latency, the
// EF probe's loaded median, grade, RPM and load-phase goodput per direction (docs/rrul.md).
// Empty unless at least two runs have a latency-under-load block.
std::string format_latency_under_load_summary(const std::vector<Run>& runs);
std::string format_results_report(const Results& results);

// Writes text to f (no-op for nullptr). Returns false on a write error.
bool print(std::FILE* f, std::string_view text);

}  // namespace nicsim::report

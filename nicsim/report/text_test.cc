#include "nicsim/report/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "nicsim/report/latency_recorder.h"
#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

uint64_t mbytes(double x) { return static_cast<uint64_t>(std::llround(x * 1048576.0)); }
uint64_t kbytes(double x) { return static_cast<uint64_t>(std::llround(x * 1024.0)); }

// Collapses every run of whitespace to one blank, as the seed texts quote iperf3 output.
std::string collapse(const std::string& s) {
  std::istringstream in(s);
  std::string word;
  std::string out;
  while (in >> word) {
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

struct Row {
  double start, end, mbytes, mbits;
  uint64_t retr;
  double cwnd_kbytes;
};

// A run whose a->b direction carries the numbers of one iperf3 table from seed S1.
Run seed_run(const std::vector<Row>& rows, Row sender, Row receiver) {
  report::Run run;
  for (const Row& r : rows) {
    Interval iv;
    iv.start_s = r.start;
    iv.end_s = r.end;
    iv.directions.a_to_b = {mbytes(r.mbytes), r.mbits * 1e6, r.retr, kbytes(r.cwnd_kbytes), {}};
    run.intervals.push_back(iv);
  }
  DirectionTransfer& t = run.transfer.a_to_b;
  t.sender = {sender.start, sender.end, mbytes(sender.mbytes), sender.mbits * 1e6, sender.retr};
  t.receiver = {receiver.start, receiver.end, mbytes(receiver.mbytes), receiver.mbits * 1e6};
  t.flows.push_back({5, t.sender, t.receiver});
  return run;
}

// Seed S1 (FreeBSD PR 254884, if_smsc turbo mode), iperf3 "Turbo on", as quoted in the seed.
const std::vector<Row> kTurboOn = {{0, 1, 7.27, 61.0, 34, 31.2}, {1, 2, 7.54, 63.2, 33, 36.9},
                                   {2, 3, 7.53, 63.2, 36, 21.2}, {3, 4, 7.57, 63.5, 33, 26.9},
                                   {4, 5, 7.49, 62.9, 34, 35.5}, {5, 6, 7.48, 62.8, 33, 36.9},
                                   {6, 7, 7.46, 62.6, 36, 5.66}, {7, 8, 7.56, 63.4, 35, 25.5},
                                   {8, 9, 7.53, 63.1, 34, 32.6}, {9, 10, 7.44, 62.4, 35, 36.9}};
const char kTurboOnSeed[] =
    "[ ID] Interval Transfer Bitrate Retr Cwnd [ 5] 0.00-1.00 sec 7.27 MBytes 61.0 Mbits/sec 34 "
    "31.2 KBytes [ 5] 1.00-2.00 sec 7.54 MBytes 63.2 Mbits/sec 33 36.9 KBytes [ 5] 2.00-3.00 sec "
    "7.53 MBytes 63.2 Mbits/sec 36 21.2 KBytes [ 5] 3.00-4.00 sec 7.57 MBytes 63.5 Mbits/sec 33 "
    "26.9 KBytes [ 5] 4.00-5.00 sec 7.49 MBytes 62.9 Mbits/sec 34 35.5 KBytes [ 5] 5.00-6.00 sec "
    "7.48 MBytes 62.8 Mbits/sec 33 36.9 KBytes [ 5] 6.00-7.00 sec 7.46 MBytes 62.6 Mbits/sec 36 "
    "5.66 KBytes [ 5] 7.00-8.00 sec 7.56 MBytes 63.4 Mbits/sec 35 25.5 KBytes [ 5] 8.00-9.00 sec "
    "7.53 MBytes 63.1 Mbits/sec 34 32.6 KBytes [ 5] 9.00-10.00 sec 7.44 MBytes 62.4 Mbits/sec 35 "
    "36.9 KBytes - - - - - - - - - - - - - - - - - - - - - - - - - [ ID] Interval Transfer "
    "Bitrate Retr [ 5] 0.00-10.00 sec 74.9 MBytes 62.8 Mbits/sec 343 sender [ 5] 0.00-10.01 sec "
    "74.8 MBytes 62.7 Mbits/sec receiver";

// "Turbo off", with its uneven interval boundaries (1.01, 6.01, 8.01).
const std::vector<Row> kTurboOff = {
    {0, 1.01, 1.80, 14.9, 22, 60.8}, {1.01, 2, 4.27, 36.3, 50, 21.3},
    {2, 3, 4.31, 36.2, 43, 19.8},    {3, 4, 2.36, 19.8, 37, 60.8},
    {4, 5, 1.44, 12.1, 40, 2.84},    {5, 6.01, 1.91, 15.9, 42, 48.1},
    {6.01, 7, 3.08, 26.0, 48, 14.1}, {7, 8.01, 3.59, 29.9, 43, 60.8},
    {8.01, 9, 2.62, 22.1, 45, 18.4}, {9, 10, 1.89, 15.9, 43, 1.41}};
const char kTurboOffSeed[] =
    "[ ID] Interval Transfer Bitrate Retr Cwnd [ 5] 0.00-1.01 sec 1.80 MBytes 14.9 Mbits/sec 22 "
    "60.8 KBytes [ 5] 1.01-2.00 sec 4.27 MBytes 36.3 Mbits/sec 50 21.3 KBytes [ 5] 2.00-3.00 sec "
    "4.31 MBytes 36.2 Mbits/sec 43 19.8 KBytes [ 5] 3.00-4.00 sec 2.36 MBytes 19.8 Mbits/sec 37 "
    "60.8 KBytes [ 5] 4.00-5.00 sec 1.44 MBytes 12.1 Mbits/sec 40 2.84 KBytes [ 5] 5.00-6.01 sec "
    "1.91 MBytes 15.9 Mbits/sec 42 48.1 KBytes [ 5] 6.01-7.00 sec 3.08 MBytes 26.0 Mbits/sec 48 "
    "14.1 KBytes [ 5] 7.00-8.01 sec 3.59 MBytes 29.9 Mbits/sec 43 60.8 KBytes [ 5] 8.01-9.00 sec "
    "2.62 MBytes 22.1 Mbits/sec 45 18.4 KBytes [ 5] 9.00-10.00 sec 1.89 MBytes 15.9 Mbits/sec 43 "
    "1.41 KBytes - - - - - - - - - - - - - - - - - - - - - - - - - [ ID] Interval Transfer "
    "Bitrate Retr [ 5] 0.00-10.00 sec 27.3 MBytes 22.9 Mbits/sec 413 sender [ 5] 0.00-10.00 sec "
    "27.2 MBytes 22.8 Mbits/sec receiver";

// The iperf3 table reproduces seed S1's tables when fed S1's numbers.
TEST(Iperf3Text, ReproducesSeedS1Tables) {
  const report::Run on =
      seed_run(kTurboOn, {0, 10, 74.9, 62.8, 343, 0}, {0, 10.01, 74.8, 62.7, 0, 0});
  EXPECT_EQ(collapse(format_iperf3(on, Direction::kAtoB)), kTurboOnSeed);
  const report::Run off =
      seed_run(kTurboOff, {0, 10, 27.3, 22.9, 413, 0}, {0, 10, 27.2, 22.8, 0, 0});
  EXPECT_EQ(collapse(format_iperf3(off, Direction::kAtoB)), kTurboOffSeed);
  EXPECT_EQ(format_iperf3(off, Direction::kBtoA), "");  // no traffic b->a
}

// Exact spacing, as iperf3's format strings produce it (trailing blanks included).
TEST(Iperf3Text, ExactLines) {
  const report::Run on =
      seed_run(kTurboOn, {0, 10, 74.9, 62.8, 343, 0}, {0, 10.01, 74.8, 62.7, 0, 0});
  const std::string table = format_iperf3(on, Direction::kAtoB);
  std::vector<std::string> lines;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 15u);
  EXPECT_EQ(lines[0], "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd");
  EXPECT_EQ(lines[1],
            "[  5]   0.00-1.00   sec  7.27 MBytes  61.0 Mbits/sec   34   31.2 KBytes       ");
  EXPECT_EQ(lines[7],
            "[  5]   6.00-7.00   sec  7.46 MBytes  62.6 Mbits/sec   36   5.66 KBytes       ");
  EXPECT_EQ(lines[10],
            "[  5]   9.00-10.00  sec  7.44 MBytes  62.4 Mbits/sec   35   36.9 KBytes       ");
  EXPECT_EQ(lines[11], "- - - - - - - - - - - - - - - - - - - - - - - - -");
  EXPECT_EQ(lines[12], "[ ID] Interval           Transfer     Bitrate         Retr");
  EXPECT_EQ(lines[13],
            "[  5]   0.00-10.00  sec  74.9 MBytes  62.8 Mbits/sec  343             sender");
  EXPECT_EQ(lines[14],
            "[  5]   0.00-10.01  sec  74.8 MBytes  62.7 Mbits/sec                  receiver");
}

// iperf3 units: Transfer/Cwnd binary (KByte = 1024 B), Bitrate decimal (Mbit = 10^6 bit), four
// places; the scale changes only at 1024 (bytes) / 1000 (bits), hence "1023 Bytes" and iperf3's
// own "1000 Mbits/sec" for 999.6 Mbit/s.
TEST(Iperf3Text, Units) {
  EXPECT_EQ(iperf3_bytes(0), "0.00 Bytes");
  EXPECT_EQ(iperf3_bytes(512), " 512 Bytes");
  EXPECT_EQ(iperf3_bytes(1023), "1023 Bytes");
  EXPECT_EQ(iperf3_bytes(1024), "1.00 KBytes");
  EXPECT_EQ(iperf3_bytes(10234), "9.99 KBytes");
  EXPECT_EQ(iperf3_bytes(10235), "10.0 KBytes");  // 9.9951 KiB rounds past 9.995
  EXPECT_EQ(iperf3_bytes(7'623'148), "7.27 MBytes");
  EXPECT_EQ(iperf3_bytes(1e9), " 954 MBytes");
  EXPECT_EQ(iperf3_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GBytes");
  EXPECT_EQ(iperf3_bitrate(0), "0.00 bits/sec");
  EXPECT_EQ(iperf3_bitrate(999), " 999 bits/sec");
  EXPECT_EQ(iperf3_bitrate(61e6), "61.0 Mbits/sec");
  EXPECT_EQ(iperf3_bitrate(950e6), " 950 Mbits/sec");
  EXPECT_EQ(iperf3_bitrate(999.6e6), "1000 Mbits/sec");
  EXPECT_EQ(iperf3_bitrate(1.23e9), "1.23 Gbits/sec");
  EXPECT_EQ(iperf3_bitrate(9.41e9), "9.41 Gbits/sec");
}

// Several flows: per-flow lines, a [SUM] line per interval, the separator between intervals
// (iperf3 -P 2), per-flow and [SUM] sender/receiver lines at the end.
TEST(Iperf3Text, SeveralFlowsLayout) {
  const report::Run run = samples::full_sample_results().runs[0];
  EXPECT_EQ(format_iperf3(run, Direction::kAtoB),
            "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n"
            "[  5]   0.00-1.00   sec   488 KBytes  4.00 Mbits/sec    0   14.1 KBytes       \n"
            "[  7]   0.00-1.00   sec   488 KBytes  4.00 Mbits/sec    0   28.3 KBytes       \n"
            "[SUM]   0.00-1.00   sec   977 KBytes  8.00 Mbits/sec    0             \n"
            "- - - - - - - - - - - - - - - - - - - - - - - - -\n"
            "[  5]   1.00-2.00   sec   489 KBytes  4.01 Mbits/sec    1   14.1 KBytes       \n"
            "[  7]   1.00-2.00   sec   489 KBytes  4.01 Mbits/sec    1   28.3 KBytes       \n"
            "[SUM]   1.00-2.00   sec   979 KBytes  8.02 Mbits/sec    2             \n"
            "- - - - - - - - - - - - - - - - - - - - - - - - -\n"
            "[ ID] Interval           Transfer     Bitrate         Retr\n"
            "[  5]   0.00-2.00   sec   977 KBytes  4.00 Mbits/sec    7             sender\n"
            "[  5]   0.00-2.01   sec   976 KBytes  3.98 Mbits/sec                  receiver\n"
            "[  7]   0.00-2.00   sec   977 KBytes  4.00 Mbits/sec    7             sender\n"
            "[  7]   0.00-2.01   sec   976 KBytes  3.98 Mbits/sec                  receiver\n"
            "[SUM]   0.00-2.00   sec  1.91 MBytes  8.00 Mbits/sec   14             sender\n"
            "[SUM]   0.00-2.01   sec  1.91 MBytes  7.95 Mbits/sec                  receiver\n");
}

// Linux iputils summary, reproducing a real `ping -c3` (samples 0.049, 0.037, 0.058 ms):
//   3 packets transmitted, 3 received, 0% packet loss, time 2000ms
//   rtt min/avg/max/mdev = 0.037/0.048/0.058/0.008 ms
// (iputils truncates: mdev = floor(sqrt(74)) us.)
TEST(PingText, LinuxSummaryFromSamples) {
  LatencyRecorder r;
  for (int64_t us : {49, 37, 58}) {
    r.add(Duration::us(us));
  }
  EXPECT_EQ(format_ping_summary("172.16.9.1", r.stats(), PingStyle::kLinux, 2000.0),
            "--- 172.16.9.1 ping statistics ---\n"
            "3 packets transmitted, 3 received, 0% packet loss, time 2000ms\n"
            "rtt min/avg/max/mdev = 0.037/0.048/0.058/0.008 ms\n");
  // Five samples 15, 49, 44, 49, 54 us: iputils prints 0.015/0.042/0.054/0.013.
  LatencyRecorder five;
  for (int64_t us : {15, 49, 44, 49, 54}) {
    five.add(Duration::us(us));
  }
  EXPECT_EQ(format_ping_summary("172.17.0.3", five.stats()),
            "--- 172.17.0.3 ping statistics ---\n"
            "5 packets transmitted, 5 received, 0% packet loss\n"
            "rtt min/avg/max/mdev = 0.015/0.042/0.054/0.013 ms\n");
}

// The brief's example numbers (seed S1 turbo off), loss printed with %g like iputils, and no
// rtt line when nothing came back.
TEST(PingText, LinuxSummaryFormat) {
  LatencyStats s{.min = 0.344, .mean = 0.432, .max = 0.558, .mdev = 0.057, .count = 21};
  EXPECT_EQ(format_ping_summary("b", s),
            "--- b ping statistics ---\n"
            "21 packets transmitted, 21 received, 0% packet loss\n"
            "rtt min/avg/max/mdev = 0.344/0.432/0.558/0.057 ms\n");
  s.count = 20;
  s.lost = 1;
  EXPECT_EQ(format_ping_summary("b", s),
            "--- b ping statistics ---\n"
            "21 packets transmitted, 20 received, 4.7619% packet loss\n"
            "rtt min/avg/max/mdev = 0.344/0.432/0.558/0.057 ms\n");
  s = LatencyStats{.count = 0, .lost = 3};
  EXPECT_EQ(format_ping_summary("b", s),
            "--- b ping statistics ---\n"
            "3 packets transmitted, 0 received, 100% packet loss\n");
  s.mean = 1234.5678;  // values above a second keep all digits
  s.min = s.max = s.mean;
  s.count = 1;
  s.lost = 0;
  const std::string text = format_ping_summary("b", s);
  EXPECT_EQ(text.substr(text.find("rtt")),
            "rtt min/avg/max/mdev = 1234.567/1234.567/1234.567/0.000 ms\n");
}

// FreeBSD ping's summary reproduces seed S1's ping lines (the seed was measured on FreeBSD).
TEST(PingText, FreeBsdSummaryReproducesSeedS1) {
  const LatencyStats off{.min = 0.344, .mean = 0.432, .max = 0.558, .mdev = 0.057, .count = 21};
  const LatencyStats on{.min = 0.425, .mean = 0.581, .max = 0.676, .mdev = 0.085, .count = 21};
  EXPECT_EQ(collapse(format_ping_summary("h", off, PingStyle::kFreeBsd)).substr(26),
            "21 packets transmitted, 21 packets received, 0.0% packet loss "
            "round-trip min/avg/max/stddev = 0.344/0.432/0.558/0.057 ms");
  EXPECT_EQ(format_ping_summary("h", on, PingStyle::kFreeBsd),
            "--- h ping statistics ---\n"
            "21 packets transmitted, 21 packets received, 0.0% packet loss\n"
            "round-trip min/avg/max/stddev = 0.425/0.581/0.676/0.085 ms\n");
}

TEST(ReportText, LatencyTable) {
  const report::Run run = samples::full_sample_results().runs[0];
  // ping: samples 344, 432, 558, 401, 399 us + 1 loss; mdev = sqrt(25534.8 / 5) us = 71.5 us,
  // p90: h = 3.6 -> 432 + 0.6 * 126 = 507.6 us.
  EXPECT_EQ(format_latency_table(run),
            "latency (ms)\n"
            "probe               sent   lost    loss       min      mean       p50       p90"
            "       p99       max      mdev\n"
            "ping    icmp rtt       6      1   16.7%     0.344     0.427     0.401     0.508"
            "     0.553     0.558     0.071\n"
            "udp_bk  udp rtt        3      3  100.0%         -         -         -         -"
            "         -         -         -\n"
            "udp_ef  udp rtt        3      0    0.0%     1.000     1.100     1.100     1.180"
            "     1.198     1.200     0.082\n"
            "udp_ef  a->b           3      0    0.0%     0.500     0.570     0.510     0.662"
            "     0.696     0.700     0.092\n"
            "udp_ef  b->a           3      2   66.7%     0.500     0.500     0.500     0.500"
            "     0.500     0.500     0.000\n");
}

TEST(ReportText, StageTable) {
  const report::Run run = samples::full_sample_results().runs[0];
  EXPECT_EQ(format_stage_table(run),
            "time per stage (mean ms)\n"
            "stage        a->b        b->a\n"
            "qdisc       0.250           -\n"
            "ring        0.333           -\n"
            "wire        0.012       0.012\n"
            "rx              -       0.050\n"
            "stack           -       0.002\n");
  EXPECT_EQ(format_stage_table(report::Run{}), "");
}

TEST(ReportText, ComparisonTable) {
  const report::Run run = samples::full_sample_results().runs[0];
  EXPECT_EQ(format_comparison_table(run.comparison),
            "metric       | published | simulated | error\n"
            "-------------+-----------+-----------+------\n"
            "ping_ms      |        10 |      10.4 | +4.0%\n"
            "goodput_mbit |         0 |        95 |     -\n"
            "idle_ping_ms |     0.432 |         - |     -\n"
            "source: stmmac BQL thread (seed 004)\n");
  EXPECT_EQ(format_comparison_table({}), "");
}

// Runs with rrul side by side (nicsim run prints it after the runs); runs without a
// latency-under-load block are skipped, and one such run alone gives no table.
TEST(ReportText, LatencyUnderLoadSummary) {
  report::Run a;
  a.label = "qdisc=pfifo";
  a.latency_under_load = report::LatencyUnderLoad{};
  a.latency_under_load->idle_rtt.mean = 10.25;
  a.latency_under_load->loaded_rtt.mean = 130.5;
  a.latency_under_load->induced_latency_ms = 120.25;
  a.latency_under_load->per_dscp["EF"].p50 = 128;
  a.latency_under_load->grade = "C";
  a.latency_under_load->rpm = 460;
  a.latency_under_load->goodput_bps = {18.94e6, 18.46e6};
  report::Run b = a;
  b.label = "qdisc=fq_codel";
  b.latency_under_load->induced_latency_ms = 1.5;
  b.latency_under_load->per_dscp.clear();
  EXPECT_EQ(format_latency_under_load_summary({a, report::Run{}, b}),
            "latency under load, by run\n"
            "run            | idle ms | loaded ms | induced ms | EF p50 ms | grade | RPM | "
            "a->b Mbit/s | b->a Mbit/s\n" +
                std::string(103, '-') + "\n" +
                "qdisc=pfifo    |   10.25 |    130.50 |     120.25 |    128.00 |     C | 460 | "
                "       18.9 |        18.5\n"
                "qdisc=fq_codel |   10.25 |    130.50 |       1.50 |         - |     C | 460 | "
                "       18.9 |        18.5\n");
  EXPECT_EQ(format_latency_under_load_summary({a}), "");
}

TEST(ReportText, LatencyUnderLoadBlock) {
  // The full sample's second run: idle RTT 344, 399 us; loaded 432, 558, 401, 1000 us + 3 lost;
  // one-way, per-DSCP and SRTT rows; RPM 100000 with a self term.
  const report::Run run = samples::full_sample_results().runs[1];
  EXPECT_EQ(format_latency_under_load(run),
            "latency under load (idle_before 0.5 s, load 1 s, idle_after 0.5 s)\n"
            "latency (ms)              sent   lost      mean       p50       p99       max\n"
            "idle RTT                     2      0     0.371     0.371     0.398     0.399\n"
            "loaded RTT                   7      3     0.598     0.495     0.987     1.000\n"
            "idle one-way a->b            1      0     0.500     0.500     0.500     0.500\n"
            "loaded one-way a->b          2      0     0.605     0.605     0.698     0.700\n"
            "idle one-way b->a            1      0     0.500     0.500     0.500     0.500\n"
            "loaded one-way b->a          2      2         -         -         -         -\n"
            "loaded RTT BE                4      1     0.464     0.432     0.555     0.558\n"
            "loaded RTT CS1               3      3         -         -         -         -\n"
            "loaded RTT EF                3      2     1.000     1.000     1.000     1.000\n"
            "TCP SRTT CS5                 1      0     2.250     2.250     2.250     2.250\n"
            "induced latency   0.226 ms   bufferbloat grade A+\n"
            "responsiveness    100000 RPM (foreign 0.600 ms, self 2.250 ms)\n"
            "fairness (Jain)   a->b 0.990   b->a 0.500   all 0.750\n"
            "goodput (load)    a->b 4.00 Mbits/sec   b->a 12.0 Mbits/sec\n");
  const std::string no_self = format_latency_under_load(samples::full_sample_results().runs[0]);
  EXPECT_NE(no_self.find("(foreign 0.600 ms, no self probes)\n"), std::string::npos) << no_self;
  EXPECT_EQ(no_self.find("one-way"), std::string::npos);
  EXPECT_EQ(format_latency_under_load(report::Run{}), "");
  EXPECT_NE(format_run_report(run).find("\nlatency under load ("), std::string::npos);
}

// rrul's short throughput bins (all < 0.5 s) print as 1 s iperf3 rows (bytes and retransmits
// summed, rate recomputed, cwnd of the last bin); a trailing partial second is its own row.
TEST(Iperf3Text, ShortBinsMergeIntoSecondRows) {
  report::Run run;
  for (int k = 0; k < 10; ++k) {
    Interval iv;
    iv.start_s = k * 0.25;
    iv.end_s = (k + 1) * 0.25;
    DirectionInterval& d = iv.directions.a_to_b;
    d.bytes = 125'000;  // 4 Mbit/s over 0.25 s
    d.bits_per_second = 4e6;
    d.retransmits = k == 5 ? 2 : 0;
    d.cwnd_bytes = 1024 * static_cast<uint64_t>(k + 1);
    run.intervals.push_back(iv);
  }
  run.transfer.a_to_b.flows.push_back({5, {0, 2.5, 1'250'000, 4e6, 2}, {0, 2.5, 1'250'000, 4e6}});
  run.transfer.a_to_b.sender = run.transfer.a_to_b.flows[0].sender;
  run.transfer.a_to_b.receiver = run.transfer.a_to_b.flows[0].receiver;
  const std::string t = format_iperf3(run, Direction::kAtoB);
  EXPECT_NE(t.find("[  5]   0.00-1.00   sec   488 KBytes  4.00 Mbits/sec    0   4.00 KBytes"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("[  5]   1.00-2.00   sec   488 KBytes  4.00 Mbits/sec    2   8.00 KBytes"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("[  5]   2.00-2.50   sec   244 KBytes  4.00 Mbits/sec    0   10.0 KBytes"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("0.00-0.25"), std::string::npos);
}

TEST(ReportText, ProgressLine) {
  EXPECT_EQ(format_progress(2, 4, "bql=true rate=1Gbit", 12.5, 30, 41.3),
            "run 2/4 bql=true rate=1Gbit: 12.5/30 s simulated, 41x real time");
  EXPECT_EQ(format_progress(1, 1, "", 0.25, 2.5, 0.98),
            "run 1/1: 0.2/2.5 s simulated, 1.0x real time");
}

TEST(ReportText, RunReportHasEverySection) {
  const Results res = samples::full_sample_results();
  const std::string text = format_results_report(res);
  for (const char* part :
       {"=== bql=false rate=1Gbit (sim, seed 42, 2 s) ===\n", "\na->b (TCP, sender a)\n[ ID]",
        "\nb->a (TCP, sender b)\n[ ID]", "--- ping statistics ---\n", "latency (ms)\n",
        "time per stage (mean ms)\n", "metric       | published", "=== bql=true rate=1Gbit"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(text.find("udp_ef statistics"), std::string::npos);  // ICMP probes only
  EXPECT_EQ(text.find("ping ping"), std::string::npos);
  EXPECT_TRUE(print(nullptr, text));
}

// Tables name the hosts as the scenario does (issue 9: they printed a->b for hosts board / pc).
TEST(ReportText, DirectionsAreLabelledWithTheConfiguredHostNames) {
  Results res = samples::full_sample_results();
  report::Run& run = res.runs[0];
  run.config_toml =
      "[scenario]\nname = \"x\"\n[hosts.board.cpu]\nkind = \"a5\"\n"
      "[hosts.board.nic]\n[hosts.pc.cpu]\n";
  EXPECT_EQ(host_names(run), (std::array<std::string, 2>{"board", "pc"}));
  const std::string text = format_run_report(run);
  for (const char* part : {"\nboard->pc (TCP, sender board)\n[ ID]",
                           "\npc->board (TCP, sender pc)\n[ ID]", "board->pc", "pc->board"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part;
  }
  EXPECT_NE(format_stage_table(run).find("board->pc"), std::string::npos);
  EXPECT_EQ(text.find("a->b"), std::string::npos) << text;
  EXPECT_EQ(text.find("b->a"), std::string::npos) << text;
  if (run.latency_under_load) {
    EXPECT_NE(format_latency_under_load(run).find("fairness (Jain)   board->pc "),
              std::string::npos);
  }

  run.config_toml = "[hosts.\"my.host\".nic]\n[hosts.peer.nic]\n";  // quoted keys
  EXPECT_EQ(host_names(run), (std::array<std::string, 2>{"my.host", "peer"}));
  run.config_toml = "";  // a live run: no configuration
  EXPECT_EQ(host_names(run), (std::array<std::string, 2>{"a", "b"}));
}

// Jain's index over the run's flows in every report with two flows or more; a network's
// directions are headed by their host pairs, and goodput per pair follows.
TEST(ReportText, FairnessAndHostPairs) {
  const Results two_host = samples::full_sample_results();
  const report::Run& r = two_host.runs[0];
  size_t flows = r.transfer.a_to_b.flows.size() + r.transfer.b_to_a.flows.size();
  ASSERT_GE(flows, 2u);
  char want[80];
  std::snprintf(want, sizeof want, "\nfairness (Jain) over %zu flows: %.3f\n", flows,
                flow_fairness(r));
  EXPECT_NE(format_run_report(r).find(want), std::string::npos);
  EXPECT_EQ(format_run_report(r).find("goodput per pair"), std::string::npos);

  const Results net = samples::network_sample_results();
  const std::string text = format_run_report(net.runs[0]);
  for (const char* part : {"\na->b (TCP: s1->d1)\n[ ID]", "\nb->a (TCP: d2->s2)\n[ ID]",
                           "\ngoodput per pair   d2->s2 ", "   s1->d1 "}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }

  report::Run one_flow;
  one_flow.transfer.a_to_b.flows.resize(1);
  EXPECT_EQ(format_run_report(one_flow).find("fairness (Jain) over"), std::string::npos);
}

// ping's heading names what was pinged; here that is the probe, by its result key.
TEST(ReportText, PingSummariesAreHeadedByTheProbeName) {
  report::Run run;
  ProbeLatency p;
  p.kind = "icmp";
  p.rtt.count = 1;
  p.rtt.min = p.rtt.mean = p.rtt.max = 1.0;
  run.latency_ms["ping"] = p;
  run.latency_ms["ping-2"] = p;
  const std::string text = format_run_report(run);
  EXPECT_NE(text.find("\n--- ping statistics ---\n1 packets transmitted, 1 received"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n--- ping-2 statistics ---\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("ping ping"), std::string::npos) << text;
}

}  // namespace
}  // namespace nicsim::report

namespace nicsim::report {
namespace {

// The workload tables (issue 12): one line per flood, voice stream and transfer set, nothing
// without them.
TEST(WorkloadText, FloodVoipAndTransfersLines) {
  report::Run r;
  EXPECT_EQ(format_workload_tables(r), "");
  FloodResult f;
  f.direction = "a->b";
  f.rate_bps = 200e6;
  f.received_bps = 95.6e6;
  f.sent = 1000;
  f.lost = 510;
  f.loss_pct = 51.0;
  f.one_way.count = 490;
  f.one_way.mean = 120.5;
  f.one_way.p50 = 124.25;
  f.one_way.p99 = 125.0;
  r.udp_flood["udp_flood"] = f;
  VoipResult v;
  v.direction = "b->a";
  v.codec = "g711";
  v.sent = 300;
  v.r_factor = 93.2;
  v.mos = 4.409;
  r.voip["voip"] = v;
  TransfersResult t;
  t.direction = "b->a";
  t.started = 15;
  t.completed = 15;
  for (const char* b : {"<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"}) {
    t.buckets[b];
  }
  t.buckets["10KB-100KB"].count = 15;
  t.buckets["10KB-100KB"].p50 = 41.0949;
  t.buckets["10KB-100KB"].p99 = 41.1404;
  r.transfers["transfers"] = t;
  const std::string out = format_workload_tables(r);
  // Rates in iperf3's "%4.0f" / "%4.1f" (" 200", "95.6").
  EXPECT_NE(out.find("udp_flood      a->b     200 Mbits/sec   95.6 Mbits/sec   510/1000 (51%)     "
                     "120.500 / 124.250 / 125.000\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("voip        b->a    g711   0/300 (0%)"), std::string::npos) << out;
  EXPECT_NE(out.find("93.2   4.41\n"), std::string::npos) << out;
  EXPECT_NE(out.find("transfers      b->a    15/15          -                    "
                     "41.095 / 41.140      -"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace nicsim::report

#include "nicsim/report/text.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <string>
#include <vector>

namespace nicsim::report {

namespace {

std::string printf_string(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string printf_string(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) {
    return {};
  }
  if (static_cast<size_t>(n) < sizeof buf) {
    return std::string(buf, static_cast<size_t>(n));
  }
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(out.data(), out.size(), fmt, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(n));
  return out;
}

// iperf3's adaptive unit formatting: scale by 1024 (bytes) or 1000 (bits) while the value is at
// least that large (up to tera), then print in four places. Like iperf3 the scaled value is the
// input multiplied by a precomputed factor (exact for powers of 1024; rounded for 1000^k).
std::string adaptive(double v, bool bits) {
  static constexpr const char* kByteLabels[] = {"Byte", "KByte", "MByte", "GByte", "TByte"};
  static constexpr const char* kBitLabels[] = {"bit", "Kbit", "Mbit", "Gbit", "Tbit"};
  static constexpr double kByteFactor[] = {1.0, 1.0 / 1024, 1.0 / 1024 / 1024,
                                           1.0 / 1024 / 1024 / 1024,
                                           1.0 / 1024 / 1024 / 1024 / 1024};
  static constexpr double kBitFactor[] = {1.0, 1.0 / 1000, 1.0 / 1000 / 1000,
                                          1.0 / 1000 / 1000 / 1000,
                                          1.0 / 1000 / 1000 / 1000 / 1000};
  const double base = bits ? 1000.0 : 1024.0;
  int conv = 0;
  double tmp = v;
  while (tmp >= base && conv < 4) {
    tmp /= base;
    ++conv;
  }
  const double x = v * (bits ? kBitFactor[conv] : kByteFactor[conv]);
  const char* label = bits ? kBitLabels[conv] : kByteLabels[conv];
  if (x < 9.995) {
    return printf_string("%4.2f %s", x, label);
  }
  if (x < 99.95) {
    return printf_string("%4.1f %s", x, label);
  }
  return printf_string("%4.0f %s", x, label);
}

std::string id_field(std::optional<int64_t> id) {
  return id ? printf_string("[%3" PRId64 "]", *id) : std::string("[SUM]");
}

std::string interval_field(double start_s, double end_s) {
  return printf_string(" %6.2f-%-6.2f sec", start_s, end_s);
}

bool has_traffic(const Run& run, Direction d) {
  const DirectionTransfer& t = run.transfer[d];
  return !t.flows.empty() || t.sender.bytes > 0 || t.receiver.bytes > 0;
}

// Fixed-width right-aligned cell.
std::string cell(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
std::string left(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string ms3(double v) { return printf_string("%.3f", v); }

// Intervals shorter than a second (rrul's throughput bins, down to 10 ms) merged into rows of
// at least one second for the iperf3 table, as iperf3 -i 1 prints them; the JSON keeps the bins.
// Bytes and retransmits add up, the rate is recomputed, cwnd is the last bin's.
// Only bins all shorter than half a second are merged: iperf3-like tables whose intervals
// drift around 1 s (0.99 s, 1.01 s) print as they are.
std::vector<Interval> table_rows(const std::vector<Interval>& bins) {
  constexpr double kRow = 1.0 - 1e-9;
  double longest = 0;
  for (const Interval& iv : bins) {
    longest = std::max(longest, iv.end_s - iv.start_s);
  }
  if (bins.empty() || longest >= 0.5) {
    return bins;
  }
  std::vector<Interval> rows;
  bool open = false;
  for (const Interval& iv : bins) {
    if (!open) {
      rows.push_back(iv);
      open = true;
    } else {
      Interval& row = rows.back();
      row.end_s = iv.end_s;
      for (Direction d : kDirections) {
        DirectionInterval& r = row.directions[d];
        const DirectionInterval& b = iv.directions[d];
        r.bytes += b.bytes;
        r.retransmits += b.retransmits;
        r.cwnd_bytes = b.cwnd_bytes;
        for (const FlowInterval& bf : b.flows) {
          for (FlowInterval& rf : r.flows) {
            if (rf.id == bf.id) {
              rf.bytes += bf.bytes;
              rf.retransmits += bf.retransmits;
              rf.cwnd_bytes = bf.cwnd_bytes;
              rf.srtt_ms = bf.srtt_ms;
            }
          }
        }
      }
    }
    Interval& row = rows.back();
    const double seconds = row.end_s - row.start_s;
    for (Direction d : kDirections) {
      DirectionInterval& r = row.directions[d];
      r.bits_per_second = bits_per_second(r.bytes, seconds);
      for (FlowInterval& f : r.flows) {
        f.bits_per_second = bits_per_second(f.bytes, seconds);
      }
    }
    open = seconds < kRow;
  }
  return rows;
}

}  // namespace

std::string iperf3_bytes(double bytes) { return adaptive(bytes, false) + "s"; }

std::string iperf3_bitrate(double bits_per_second) {
  return adaptive(bits_per_second, true) + "s/sec";
}

std::string iperf3_interval_line(int64_t id, double start_s, double end_s, uint64_t bytes,
                                 double bits_per_second, uint64_t retransmits,
                                 uint64_t cwnd_bytes) {
  // iperf3: "[%3d]%s %6.2f-%-6.2f sec  %ss  %ss/sec  %3u   %ss       %s"
  return id_field(id) + interval_field(start_s, end_s) + "  " +
         iperf3_bytes(static_cast<double>(bytes)) + "  " + iperf3_bitrate(bits_per_second) +
         printf_string("  %3" PRIu64, retransmits) + "   " +
         iperf3_bytes(static_cast<double>(cwnd_bytes)) + "       ";
}

std::string iperf3_sum_interval_line(double start_s, double end_s, uint64_t bytes,
                                     double bits_per_second, uint64_t retransmits) {
  // iperf3: "[SUM]%s %6.2f-%-6.2f sec  %ss  %ss/sec  %3d             %s"
  return id_field(std::nullopt) + interval_field(start_s, end_s) + "  " +
         iperf3_bytes(static_cast<double>(bytes)) + "  " + iperf3_bitrate(bits_per_second) +
         printf_string("  %3" PRIu64, retransmits) + "             ";
}

std::string iperf3_sender_line(std::optional<int64_t> id, const SenderTotals& s) {
  return id_field(id) + interval_field(s.start_s, s.end_s) + "  " +
         iperf3_bytes(static_cast<double>(s.bytes)) + "  " + iperf3_bitrate(s.bits_per_second) +
         printf_string("  %3" PRIu64, s.retransmits) + "             sender";
}

std::string iperf3_receiver_line(std::optional<int64_t> id, const ReceiverTotals& r) {
  // iperf3: "[%3d]%s %6.2f-%-6.2f sec  %ss  %ss/sec                  %s"
  return id_field(id) + interval_field(r.start_s, r.end_s) + "  " +
         iperf3_bytes(static_cast<double>(r.bytes)) + "  " + iperf3_bitrate(r.bits_per_second) +
         "                  receiver";
}

std::string format_iperf3(const Run& run, Direction d) {
  if (!has_traffic(run, d)) {
    return {};
  }
  const DirectionTransfer& t = run.transfer[d];
  const bool several = t.flows.size() > 1;
  const int64_t single_id = t.flows.empty() ? iperf3_stream_id(0) : t.flows.front().id;
  std::string out;
  out += kIperf3IntervalHeader;
  out += '\n';
  const std::vector<Interval> rows = table_rows(run.intervals);
  for (size_t k = 0; k < rows.size(); ++k) {
    const Interval& iv = rows[k];
    const DirectionInterval& di = iv.directions[d];
    if (several) {
      if (k > 0) {
        out += kIperf3Separator;
        out += '\n';
      }
      for (const FlowInterval& f : di.flows) {
        out += iperf3_interval_line(f.id, iv.start_s, iv.end_s, f.bytes, f.bits_per_second,
                                    f.retransmits, f.cwnd_bytes);
        out += '\n';
      }
      out += iperf3_sum_interval_line(iv.start_s, iv.end_s, di.bytes, di.bits_per_second,
                                      di.retransmits);
    } else {
      out += iperf3_interval_line(single_id, iv.start_s, iv.end_s, di.bytes, di.bits_per_second,
                                  di.retransmits, di.cwnd_bytes);
    }
    out += '\n';
  }
  out += kIperf3Separator;
  out += '\n';
  out += kIperf3SummaryHeader;
  out += '\n';
  if (several) {
    for (const FlowTransfer& f : t.flows) {
      out += iperf3_sender_line(f.id, f.sender) + '\n';
      out += iperf3_receiver_line(f.id, f.receiver) + '\n';
    }
    out += iperf3_sender_line(std::nullopt, t.sender) + '\n';
    out += iperf3_receiver_line(std::nullopt, t.receiver) + '\n';
  } else {
    out += iperf3_sender_line(single_id, t.sender) + '\n';
    out += iperf3_receiver_line(single_id, t.receiver) + '\n';
  }
  // Flows that negotiated ECN: their codepoint and CE marks (not an iperf3 line).
  for (const FlowTransfer& f : t.flows) {
    if (f.ecn) {
      out += id_field(f.id) + " ECN " + f.ecn->codepoint +
             printf_string("  CE marked %" PRIu64 "  echoed %" PRIu64 "  cwnd reductions %" PRIu64,
                           f.ecn->ce_marked, f.ecn->ce_echoed, f.ecn->cwnd_reductions) +
             '\n';
    }
  }
  return out;
}

std::array<std::string, 2> host_names(const Run& run) {
  std::array<std::string, 2> names;
  size_t found = 0;
  constexpr std::string_view kPrefix = "[hosts.";
  size_t line = 0;
  const std::string& t = run.config_toml;
  while (found < 2 && line < t.size()) {
    const size_t eol = std::min(t.find('\n', line), t.size());
    const std::string_view l(t.data() + line, eol - line);
    line = eol + 1;
    if (l.substr(0, kPrefix.size()) != kPrefix) {
      continue;
    }
    std::string_view rest = l.substr(kPrefix.size());
    std::string name;
    if (!rest.empty() && rest[0] == '"') {  // a quoted key: [hosts."my.host".nic]
      const size_t close = rest.find('"', 1);
      name = std::string(rest.substr(1, close == std::string_view::npos ? 0 : close - 1));
    } else {
      name = std::string(rest.substr(0, rest.find_first_of(".]")));
    }
    if (!name.empty() && (found == 0 || names[0] != name)) {
      names[found++] = name;
    }
  }
  if (found < 2) {
    return {"a", "b"};
  }
  return names;
}

namespace {

std::string direction_label(const std::array<std::string, 2>& hosts, Direction d) {
  return d == Direction::kAtoB ? hosts[0] + "->" + hosts[1] : hosts[1] + "->" + hosts[0];
}

// A network's "from->to" pairs of direction d's flows, in flow order ("" in the two-host form).
std::string pairs_of(const Run& run, Direction d) {
  std::vector<std::string> seen;
  for (const FlowTransfer& f : run.transfer[d].flows) {
    const std::string pair = f.from + "->" + f.to;
    if (!f.from.empty() && std::find(seen.begin(), seen.end(), pair) == seen.end()) {
      seen.push_back(pair);
    }
  }
  std::string out;
  for (const std::string& p : seen) {
    out += (out.empty() ? "" : ", ") + p;
  }
  return out;
}

// Jain's index over the run's flows (with two flows or more), and a network's goodput per pair.
std::string format_fairness(const Run& run) {
  size_t flows = 0;
  for (Direction d : kDirections) {
    flows += run.transfer[d].flows.size();
  }
  std::string out;
  if (!run.pairs.empty()) {
    out += "\ngoodput per pair";
    for (const auto& [pair, t] : run.pairs) {
      out += "   " + pair + " " + iperf3_bitrate(t.receiver.bits_per_second);
    }
    out += "\n";
  }
  if (flows >= 2) {
    out += (out.empty() ? "\n" : "") +
           printf_string("fairness (Jain) over %zu flows: %.3f\n", flows, flow_fairness(run));
  }
  return out;
}

std::string ping_heading(std::string_view probe) {
  // ICMP probes are named "ping", "ping-2", ...: "--- ping-2 statistics ---", not "ping ping".
  const bool ping_name = probe.substr(0, 4) == "ping";
  return "--- " + std::string(probe) + (ping_name ? " statistics ---\n" : " ping statistics ---\n");
}

// The lines after ping's heading: transmitted / received / loss, and the rtt line.
std::string ping_totals(const LatencyStats& s, PingStyle style, std::optional<double> time_ms) {
  const uint64_t transmitted = s.count + s.lost;
  std::string out;
  if (style == PingStyle::kLinux) {
    out += printf_string("%" PRIu64 " packets transmitted, %" PRIu64 " received", transmitted,
                         s.count);
    if (transmitted > 0) {
      // iputils: the loss percentage as a float, printed with %g.
      const auto loss = static_cast<float>(static_cast<double>(s.lost) * 100.0 /
                                           static_cast<double>(transmitted));
      out += printf_string(", %g%% packet loss", static_cast<double>(loss));
      if (time_ms) {
        out += printf_string(", time %lldms", static_cast<long long>(std::llround(*time_ms)));
      }
    }
    out += '\n';
    if (s.count > 0) {
      // iputils keeps whole microseconds and truncates (avg = tsum / n, mdev = integer sqrt):
      // recover nanoseconds, then truncate to microseconds.
      const auto us = [](double ms) {
        const long long v = std::llround(ms * 1e6) / 1000;
        return printf_string("%lld.%03lld", v / 1000, v % 1000);
      };
      out += "rtt min/avg/max/mdev = " + us(s.min) + "/" + us(s.mean) + "/" + us(s.max) + "/" +
             us(s.mdev) + " ms\n";
    }
    return out;
  }
  out += printf_string("%" PRIu64 " packets transmitted, %" PRIu64 " packets received", transmitted,
                       s.count);
  if (transmitted > 0) {
    out += printf_string(", %.1f%% packet loss",
                         static_cast<double>(s.lost) * 100.0 / static_cast<double>(transmitted));
  }
  out += '\n';
  if (s.count > 0) {
    out += printf_string("round-trip min/avg/max/stddev = %.3f/%.3f/%.3f/%.3f ms\n", s.min, s.mean,
                         s.max, s.mdev);
  }
  return out;
}

}  // namespace

std::string format_ping_summary(std::string_view host, const LatencyStats& s, PingStyle style,
                                std::optional<double> time_ms) {
  return "--- " + std::string(host) + " ping statistics ---\n" + ping_totals(s, style, time_ms);
}

std::string format_latency_table(const Run& run) {
  if (run.latency_ms.empty()) {
    return {};
  }
  struct Row {
    std::string name;
    std::string what;
    const LatencyStats* s;
  };
  std::vector<Row> rows;
  size_t name_width = 5;
  const std::array<std::string, 2> hosts = host_names(run);
  for (const auto& [name, p] : run.latency_ms) {
    rows.push_back({name, p.kind + " rtt", &p.rtt});
    if (p.one_way) {
      for (Direction d : kDirections) {
        rows.push_back({name, direction_label(hosts, d), &(*p.one_way)[d]});
      }
    }
    name_width = std::max(name_width, name.size());
  }
  std::string out = "latency (ms)\n";
  size_t what_width = 8;
  for (const Row& r : rows) {
    what_width = std::max(what_width, r.what.size());
  }
  out += left("probe", name_width) + "  " + left("", what_width) + cell("sent", 8) +
         cell("lost", 7) + cell("loss", 8) + cell("min", 10) + cell("mean", 10) + cell("p50", 10) +
         cell("p90", 10) + cell("p99", 10) + cell("max", 10) + cell("mdev", 10) + "\n";
  for (const Row& r : rows) {
    const LatencyStats& s = *r.s;
    const uint64_t sent = s.count + s.lost;
    const double loss =
        sent == 0 ? 0.0 : static_cast<double>(s.lost) * 100.0 / static_cast<double>(sent);
    out += left(r.name, name_width) + "  " + left(r.what, what_width) +
           cell(std::to_string(sent), 8) + cell(std::to_string(s.lost), 7) +
           cell(printf_string("%.1f%%", loss), 8);
    if (s.count == 0) {
      for (int i = 0; i < 7; ++i) {
        out += cell("-", 10);
      }
    } else {
      for (double v : {s.min, s.mean, s.p50, s.p90, s.p99, s.max, s.mdev}) {
        out += cell(ms3(v), 10);
      }
    }
    out += '\n';
  }
  return out;
}

std::string format_latency_under_load(const Run& run) {
  if (!run.latency_under_load) {
    return {};
  }
  const LatencyUnderLoad& l = *run.latency_under_load;
  const std::array<std::string, 2> hosts = host_names(run);
  // Row labels: "loaded one-way board->pc" is the longest kind.
  const size_t label_width = std::max<size_t>(
      22, std::string_view("loaded one-way ").size() + hosts[0].size() + hosts[1].size() + 3);
  std::string out = "latency under load";
  for (const Phase& p : run.phases) {
    out += (&p == &run.phases.front() ? " (" : ", ") + p.name +
           printf_string(" %g s", p.end_s - p.start_s);
  }
  out += run.phases.empty() ? "\n" : ")\n";
  const auto stats_row = [&](const std::string& name, const LatencyStats& s) {
    std::string row = left(name, label_width) + cell(std::to_string(s.count + s.lost), 8) +
                      cell(std::to_string(s.lost), 7);
    if (s.count == 0) {
      for (int i = 0; i < 4; ++i) {
        row += cell("-", 10);
      }
    } else {
      for (double v : {s.mean, s.p50, s.p99, s.max}) {
        row += cell(ms3(v), 10);
      }
    }
    return row + "\n";
  };
  out += left("latency (ms)", label_width) + cell("sent", 8) + cell("lost", 7) + cell("mean", 10) +
         cell("p50", 10) + cell("p99", 10) + cell("max", 10) + "\n";
  out += stats_row("idle RTT", l.idle_rtt);
  out += stats_row("loaded RTT", l.loaded_rtt);
  for (Direction d : kDirections) {
    const std::string dk = direction_label(hosts, d);
    if (l.idle_one_way) {
      out += stats_row("idle one-way " + dk, (*l.idle_one_way)[d]);
    }
    if (l.loaded_one_way) {
      out += stats_row("loaded one-way " + dk, (*l.loaded_one_way)[d]);
    }
  }
  for (const auto& [dscp, s] : l.per_dscp) {
    out += stats_row("loaded RTT " + dscp, s);
  }
  for (const auto& [dscp, s] : l.per_dscp_flow_srtt) {
    out += stats_row("TCP SRTT " + dscp, s);
  }
  out += printf_string("induced latency   %.3f ms   bufferbloat grade %s\n", l.induced_latency_ms,
                       l.grade.c_str());
  out += printf_string("responsiveness    %.0f RPM (foreign %.3f ms", l.rpm, l.rpm_foreign_ms);
  out += l.rpm_self_ms ? printf_string(", self %.3f ms)\n", *l.rpm_self_ms)
                       : std::string(", no self probes)\n");
  const std::string ab = direction_label(hosts, Direction::kAtoB);
  const std::string ba = direction_label(hosts, Direction::kBtoA);
  out += printf_string("fairness (Jain)   %s %.3f   %s %.3f   all %.3f\n", ab.c_str(),
                       l.fairness.a_to_b, ba.c_str(), l.fairness.b_to_a, l.fairness_all);
  out += "goodput (load)    " + ab + " " + iperf3_bitrate(l.goodput_bps.a_to_b) + "   " + ba + " " +
         iperf3_bitrate(l.goodput_bps.b_to_a) + "\n";
  return out;
}

std::string format_stage_table(const Run& run) {
  std::vector<std::string> stages;
  for (Direction d : kDirections) {
    for (const StageTime& s : run.stages[d]) {
      if (std::find(stages.begin(), stages.end(), s.stage) == stages.end()) {
        stages.push_back(s.stage);
      }
    }
  }
  if (stages.empty()) {
    return {};
  }
  size_t width = 5;
  for (const std::string& s : stages) {
    width = std::max(width, s.size());
  }
  const std::array<std::string, 2> hosts = host_names(run);
  const std::string ab = direction_label(hosts, Direction::kAtoB);
  const std::string ba = direction_label(hosts, Direction::kBtoA);
  const size_t col = std::max<size_t>(12, std::max(ab.size(), ba.size()) + 2);
  std::string out = "time per stage (mean ms)\n";
  out += left("stage", width) + cell(ab, col) + cell(ba, col) + "\n";
  for (const std::string& name : stages) {
    out += left(name, width);
    for (Direction d : kDirections) {
      const auto& v = run.stages[d];
      const auto it =
          std::find_if(v.begin(), v.end(), [&](const StageTime& s) { return s.stage == name; });
      out += cell(it == v.end() || it->packets == 0 ? "-" : ms3(it->mean_ms), col);
    }
    out += '\n';
  }
  return out;
}

std::string format_voip_table(const Run& run) {
  if (run.voip.empty()) {
    return "";
  }
  std::string out =
      "voip        dir     codec  lost/sent        bursts (longest)  one-way ms "
      "mean / p99    IPDV ms mean / p99    R      MOS\n";
  for (const auto& [name, v] : run.voip) {
    const std::string dir = v.from.empty() ? v.direction : v.from + "->" + v.to;
    out += left(name, 11) + " " + left(dir, 7) + " " + left(v.codec, 6) + " " +
           left(printf_string("%" PRIu64 "/%" PRIu64 " (%.2g%%)", v.lost, v.sent, v.loss_pct), 16) +
           " " +
           left(printf_string("%" PRIu64 " (%" PRIu64 ")", v.loss_bursts, v.longest_burst), 17) +
           " " + left(ms3(v.one_way.mean) + " / " + ms3(v.one_way.p99), 21) + " " +
           left(ms3(v.ipdv_mean_abs_ms) + " / " + ms3(v.ipdv_p99_ms), 21) + " " +
           printf_string("%-6.1f %.2f", v.r_factor, v.mos) + "\n";
  }
  return out;
}

std::string format_transfers_table(const Run& run) {
  if (run.transfers.empty()) {
    return "";
  }
  // FCT p50 / p99 in ms per response-size bucket.
  std::string out = left("transfers", 14) + " " + left("dir", 7) + " " + left("done/started", 14);
  for (const char* b : {"<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"}) {
    out += " " + left(std::string("FCT ms ") + b, 20);
  }
  out += "\n";
  for (const auto& [name, t] : run.transfers) {
    const std::string dir = t.from.empty() ? t.direction : t.to + "->" + t.from;
    out += left(name, 14) + " " + left(dir, 7) + " " +
           left(printf_string("%" PRIu64 "/%" PRIu64, t.completed, t.started), 14);
    for (const char* b : {"<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"}) {
      const LatencyStats& s = t.buckets.at(b);
      out += " " + left(s.count == 0 ? std::string("-") : ms3(s.p50) + " / " + ms3(s.p99), 20);
    }
    out += "\n";
  }
  return out;
}

std::string format_workload_tables(const Run& run) {
  if (run.udp_flood.empty()) {
    const std::string voip = format_voip_table(run);
    const std::string transfers = format_transfers_table(run);
    return voip.empty() || transfers.empty() ? voip + transfers : voip + "\n" + transfers;
  }
  std::string out =
      "udp_flood      dir     offered          received         lost/sent          "
      "one-way ms mean / p50 / p99\n";
  for (const auto& [name, f] : run.udp_flood) {
    const std::string dir = f.from.empty() ? f.direction : f.from + "->" + f.to;
    out += left(name, 14) + " " + left(dir, 7) + " " + left(iperf3_bitrate(f.rate_bps), 16) + " " +
           left(iperf3_bitrate(f.received_bps), 16) + " " +
           left(printf_string("%" PRIu64 "/%" PRIu64 " (%.2g%%)", f.lost, f.sent, f.loss_pct), 18) +
           " " +
           (f.one_way.count == 0
                ? std::string("-")
                : ms3(f.one_way.mean) + " / " + ms3(f.one_way.p50) + " / " + ms3(f.one_way.p99)) +
           "\n";
  }
  for (const std::string& more : {format_voip_table(run), format_transfers_table(run)}) {
    if (!more.empty()) {
      out += "\n" + more;
    }
  }
  return out;
}

std::string format_network_table(const Run& run) {
  if (run.interfaces.empty() && run.nodes.empty()) {
    return "";
  }
  std::string out = "Nodes (CPU busy, router counters):\n";
  for (const auto& [name, n] : run.nodes) {
    out += printf_string("  %-16s cpu %5.1f%%", name.c_str(), 100.0 * n.cpu_utilization);
    if (n.router) {
      out += printf_string("  forwarded %" PRIu64 "  no_route %" PRIu64 "  ttl_expired %" PRIu64,
                           n.forwarded, n.no_route, n.ttl_expired);
    }
    out += "\n";
  }
  out += "Interfaces (tx / rx packets, drops; the qdisc's own counters as tc -s shows them):\n";
  for (const auto& [label, i] : run.interfaces) {
    out += printf_string("  %-16s tx %" PRIu64 "  rx %" PRIu64 "  qdisc_drops %" PRIu64
                         "  rx_drops %" PRIu64,
                         label.c_str(), i.tx_packets, i.rx_packets, i.qdisc_drops, i.rx_drops);
    for (const auto& [counter, v] : i.qdisc) {
      out += printf_string("  %s %" PRIu64, counter.c_str(), v);
    }
    out += "\n";
  }
  return out;
}

std::string format_rx_batching(const Run& run) {
  if (run.rx_batching.empty()) {
    return "";
  }
  std::string out =
      "Receive batching (frames from the RX ring -> packets to the stack, receive CPU):\n";
  for (const auto& [host, b] : run.rx_batching) {
    out +=
        printf_string("  %-16s gro %-3s  frames %" PRIu64 "  packets %" PRIu64
                      "  frames/packet %.2f  largest %" PRIu64
                      "  rx cpu %.3f s = %.3f ns/byte  core busy %.3f s\n",
                      host.c_str(), b.gro ? "on" : "off", b.frames, b.packets, b.frames_per_packet,
                      b.largest, b.rx_cpu_s, b.rx_cpu_ns_per_byte, b.cpu_busy_s);
    if (b.rx_irqs > 0 || b.rx_latency_ms.count > 0) {  // the knee's fields (older files: none)
      out += printf_string("  %-16s irqs rx %" PRIu64 " tx %" PRIu64 " (%.0f/s)  polls %" PRIu64
                           "  core per frame %.1f ns  rx latency mean %.1f us  p99 %.1f us\n",
                           "", b.rx_irqs, b.tx_irqs, b.irqs_per_s, b.polls, b.cpu_ns_per_frame,
                           b.rx_latency_ms.mean * 1e3, b.rx_latency_ms.p99 * 1e3);
    }
    if (b.napi_timer_polls != 0 || b.busy_poll_sessions != 0) {
      out += printf_string(
          "  %-16s interrupts %.3f per frame  timer polls %" PRIu64 "  busy-poll sessions %" PRIu64
          "  spin %.3f s\n",
          "",
          b.frames > 0 ? static_cast<double>(b.rx_irqs + b.tx_irqs) / static_cast<double>(b.frames)
                       : 0.0,
          b.napi_timer_polls, b.busy_poll_sessions, b.busy_spin_s);
    }
    if (!b.queue_frames.empty()) {
      out += printf_string("  %-16s %zu RX queues, frames", "", b.queue_frames.size());
      for (uint64_t f : b.queue_frames) {
        out += printf_string(" %" PRIu64, f);
      }
      out += ", core busy s";
      for (double s : b.queue_cpu_busy_s) {
        out += printf_string(" %.3f", s);
      }
      out += "\n";
    }
  }
  return out;
}

std::string format_comparison_table(const std::vector<Comparison>& rows) {
  if (rows.empty()) {
    return {};
  }
  const auto num = [](double v) { return printf_string("%.4g", v); };
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"metric", "published", "simulated", "error"});
  for (const Comparison& c : rows) {
    cells.push_back({c.metric, num(c.published), c.simulated ? num(*c.simulated) : "-",
                     c.relative_error ? printf_string("%+.1f%%", *c.relative_error * 100) : "-"});
  }
  size_t w[4] = {0, 0, 0, 0};
  for (const auto& r : cells) {
    for (size_t i = 0; i < 4; ++i) {
      w[i] = std::max(w[i], r[i].size());
    }
  }
  std::string out;
  for (size_t k = 0; k < cells.size(); ++k) {
    const auto& r = cells[k];
    out += left(r[0], w[0]) + " | " + cell(r[1], w[1]) + " | " + cell(r[2], w[2]) + " | " +
           cell(r[3], w[3]) + "\n";
    if (k == 0) {
      out += std::string(w[0] + 1, '-') + "+" + std::string(w[1] + 2, '-') + "+" +
             std::string(w[2] + 2, '-') + "+" + std::string(w[3] + 1, '-') + "\n";
    }
  }
  std::vector<std::string> sources;
  for (const Comparison& c : rows) {
    if (!c.source.empty() && std::find(sources.begin(), sources.end(), c.source) == sources.end()) {
      sources.push_back(c.source);
    }
  }
  for (const std::string& s : sources) {
    out += "source: " + s + "\n";
  }
  return out;
}

std::string format_latency_under_load_summary(const std::vector<Run>& runs) {
  std::vector<std::vector<std::string>> rows = {{"run", "idle ms", "loaded ms", "induced ms",
                                                 "EF p50 ms", "grade", "RPM", "a->b Mbit/s",
                                                 "b->a Mbit/s"}};
  for (const Run& r : runs) {
    if (!r.latency_under_load) {
      continue;
    }
    const LatencyUnderLoad& l = *r.latency_under_load;
    const auto ef = l.per_dscp.find("EF");
    rows.push_back(
        {r.label.empty() ? "(single)" : r.label, printf_string("%.2f", l.idle_rtt.mean),
         printf_string("%.2f", l.loaded_rtt.mean), printf_string("%.2f", l.induced_latency_ms),
         ef == l.per_dscp.end() ? "-" : printf_string("%.2f", ef->second.p50), l.grade,
         printf_string("%.0f", l.rpm), printf_string("%.1f", l.goodput_bps[Direction::kAtoB] / 1e6),
         printf_string("%.1f", l.goodput_bps[Direction::kBtoA] / 1e6)});
  }
  if (rows.size() < 3) {
    return {};
  }
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      w[i] = std::max(w[i], row[i].size());
    }
  }
  std::string out = "latency under load, by run\n";
  for (size_t k = 0; k < rows.size(); ++k) {
    for (size_t i = 0; i < rows[k].size(); ++i) {
      out += (i == 0 ? left(rows[k][i], w[i]) : " | " + cell(rows[k][i], w[i]));
    }
    out += "\n";
    if (k == 0) {
      size_t total = w[0];
      for (size_t i = 1; i < w.size(); ++i) {
        total += w[i] + 3;
      }
      out += std::string(total, '-') + "\n";
    }
  }
  return out;
}

std::string format_progress(size_t run_number, size_t run_count, std::string_view label,
                            double simulated_s, double duration_s, double speed) {
  std::string out = printf_string("run %zu/%zu", run_number, run_count);
  if (!label.empty()) {
    out += " ";
    out += label;
  }
  out += printf_string(": %.1f/%g s simulated, ", simulated_s, duration_s);
  out += speed >= 10 ? printf_string("%.0fx real time", speed)
                     : printf_string("%.1fx real time", speed);
  return out;
}

std::string format_run_report(const Run& run) {
  std::string out = "=== " + (run.label.empty() ? std::string("run") : run.label) +
                    printf_string(" (%s, seed %" PRIu64 ", %g s) ===\n", run.backend.c_str(),
                                  run.seed, run.duration_s);
  const std::array<std::string, 2> hosts = host_names(run);
  for (Direction d : kDirections) {
    const std::string table = format_iperf3(run, d);
    if (table.empty()) {
      continue;
    }
    const std::string pairs = pairs_of(run, d);
    out += "\n" +
           (pairs.empty() ? direction_label(hosts, d) + " (TCP, sender " +
                                hosts[d == Direction::kAtoB ? 0 : 1] + ")"
                          : std::string(direction_key(d)) + " (TCP: " + pairs + ")") +
           "\n" + table;
  }
  out += format_fairness(run);
  for (const auto& [name, p] : run.latency_ms) {
    if (p.kind == "icmp") {
      out += "\n" + ping_heading(name) + ping_totals(p.rtt, PingStyle::kLinux, std::nullopt);
    }
  }
  for (const std::string& section :
       {format_latency_table(run), format_workload_tables(run), format_latency_under_load(run),
        format_stage_table(run), format_network_table(run), format_rx_batching(run),
        format_comparison_table(run.comparison)}) {
    if (!section.empty()) {
      out += "\n" + section;
    }
  }
  return out;
}

std::string format_results_report(const Results& results) {
  std::string out;
  for (size_t i = 0; i < results.runs.size(); ++i) {
    out += (i == 0 ? "" : "\n") + format_run_report(results.runs[i]);
  }
  return out;
}

bool print(std::FILE* f, std::string_view text) {
  if (f == nullptr) {
    return true;
  }
  return std::fwrite(text.data(), 1, text.size(), f) == text.size();
}

}  // namespace nicsim::report

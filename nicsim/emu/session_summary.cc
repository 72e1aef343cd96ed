#include "nicsim/emu/session_summary.h"

#include <cstdarg>
#include <cstdio>

namespace nicsim::emu {
namespace {

// printf, appended to `out` (each summary line is well under the buffer).
__attribute__((format(printf, 2, 3))) void append(std::string& out, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  out += buf;
}

std::string us(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", ms * 1000.0);
  return buf;
}

// labels[i], or "#i" when the result has no label for it.
std::string label(const std::vector<std::string>& labels, size_t i) {
  return i < labels.size() ? labels[i] : "#" + std::to_string(i);
}

}  // namespace

std::string format_session_summary(const SessionResult& r) {
  std::string out;
  append(out, "--- nicsim emulate summary ---\n");
  append(out, "%.2f s emulated, frame I/O: %s\n", r.elapsed_s, r.io.c_str());
  for (size_t d = 0; d < r.directions.size(); ++d) {
    const DirectionStats& s = r.directions[d];
    const double mbit =
        r.elapsed_s > 0 ? static_cast<double>(s.bytes_out) * 8 / r.elapsed_s / 1e6 : 0.0;
    append(out,
           "%s: %llu frames in, %llu out (%.1f Mbit/s of frames), %llu refused by the "
           "sending NIC, %llu lost on the wire, %llu TX completions, %llu CE marks\n",
           label(r.direction_labels, d).c_str(), static_cast<unsigned long long>(s.frames_in),
           static_cast<unsigned long long>(s.frames_out), mbit,
           static_cast<unsigned long long>(s.nic_drops),
           static_cast<unsigned long long>(d < r.wires.size() ? r.wires[d].lost : 0),
           static_cast<unsigned long long>(s.tx_released),
           static_cast<unsigned long long>(s.ce_marked));
  }
  for (size_t h = 0; h < r.nics.size(); ++h) {
    const model::NicCounters c =
        h < r.nic_counters.size() ? r.nic_counters[h] : model::NicCounters{};
    const model::NicQueueSample q =
        h < r.nic_queues.size() ? r.nic_queues[h] : model::NicQueueSample{};
    const double busy = h < r.cpus.size() ? r.cpus[h].busy.to_seconds() : 0.0;
    append(out, "NIC %s: %s\n", label(r.interfaces, h).c_str(), r.nics[h].c_str());
    append(
        out,
        "  tx %llu frames, %llu qdisc drops, %llu doorbells; rx %llu frames, %llu "
        "drops, %llu interrupts; at the end: qdisc %llu frames, ring %llu, BQL limit "
        "%llu B; emulated CPU busy %.2f s\n",
        static_cast<unsigned long long>(c.tx_packets),
        static_cast<unsigned long long>(c.tx_qdisc_drops),
        static_cast<unsigned long long>(c.doorbells), static_cast<unsigned long long>(c.rx_packets),
        static_cast<unsigned long long>(c.rx_drops), static_cast<unsigned long long>(c.interrupts),
        static_cast<unsigned long long>(q.qdisc_packets),
        static_cast<unsigned long long>(q.ring_packets),
        static_cast<unsigned long long>(q.bql_limit), busy);
    if (h < r.nic_gro.size() && r.nic_gro[h]) {
      const algo::Gro::Stats& g = *r.nic_gro[h];
      append(out,
             "  GRO: %llu frames went up the stack as %llu packets (%llu merged into another, "
             "at most %llu in one)\n",
             static_cast<unsigned long long>(g.frames), static_cast<unsigned long long>(g.packets),
             static_cast<unsigned long long>(g.merged), static_cast<unsigned long long>(g.largest));
    }
  }
  for (const SessionResult::RouterResult& rr : r.routers) {
    append(out,
           "router %s: %llu forwarded, %llu without a route, %llu TTL expired, %llu refused "
           "by the egress qdisc; emulated CPU busy %.2f s\n",
           rr.name.c_str(), static_cast<unsigned long long>(rr.stats.forwarded),
           static_cast<unsigned long long>(rr.stats.no_route),
           static_cast<unsigned long long>(rr.stats.ttl_expired),
           static_cast<unsigned long long>(rr.stats.egress_refused), rr.cpu.busy.to_seconds());
  }
  if (!r.record_error.empty()) {
    append(out, "record: %s\n", r.record_error.c_str());
  } else if (r.record_frames > 0) {
    append(out, "record: %llu frames written\n", static_cast<unsigned long long>(r.record_frames));
  }
  if (!r.pcap_error.empty()) {
    append(out, "pcap: %s\n", r.pcap_error.c_str());
  } else if (r.pcap_frames > 0) {
    append(out, "pcap: %llu frames written\n", static_cast<unsigned long long>(r.pcap_frames));
  }
  const auto& t = r.timer_error;
  append(out, "timer error (wake-up - deadline): p50 %s, p99 %s, max %s (%llu wake-ups)\n",
         us(t.p50).c_str(), us(t.p99).c_str(), us(t.max).c_str(),
         static_cast<unsigned long long>(t.count));
  const auto& l = r.release_lateness;
  append(out, "release lateness (frame written - scheduled): p50 %s, p99 %s, max %s\n",
         us(l.p50).c_str(), us(l.p99).c_str(), us(l.max).c_str());
  const auto& w = r.work_time;
  append(out, "loop work per busy iteration: p50 %s, p99 %s, max %s\n", us(w.p50).c_str(),
         us(w.p99).c_str(), us(w.max).c_str());
  for (size_t h = 0; h < r.ports.size(); ++h) {
    const PortStats& p = r.ports[h];
    append(
        out,
        "port %s: read %llu frames in %llu calls, wrote %llu in %llu calls, %llu write "
        "errors, %llu truncated, %llu dropped unread\n",
        label(r.hosts, h).c_str(), static_cast<unsigned long long>(p.rx_frames),
        static_cast<unsigned long long>(p.rx_calls), static_cast<unsigned long long>(p.tx_frames),
        static_cast<unsigned long long>(p.tx_calls), static_cast<unsigned long long>(p.tx_errors),
        static_cast<unsigned long long>(p.rx_truncated),
        static_cast<unsigned long long>(p.rx_dropped));
    if (p.rx_dropped > 0) {
      append(out,
             "warning: host %s sent %llu frames that its kernel dropped before the emulator "
             "read them (the port's queue was full: the emulator fell behind; no model saw "
             "them)\n",
             label(r.hosts, h).c_str(), static_cast<unsigned long long>(p.rx_dropped));
    }
    if (p.rx_super_frames + p.tx_super_frames + p.tx_merged_segments > 0) {
      append(out,
             "port %s super-frames: read %llu (%llu segments), wrote %llu, %llu segments "
             "delivered inside them, %llu with segments dropped (the rest written as MTU "
             "frames)\n",
             label(r.hosts, h).c_str(), static_cast<unsigned long long>(p.rx_super_frames),
             static_cast<unsigned long long>(p.rx_super_segments),
             static_cast<unsigned long long>(p.tx_super_frames),
             static_cast<unsigned long long>(p.tx_merged_segments),
             static_cast<unsigned long long>(p.tx_partial_super_frames));
    }
  }
  append(out, "emulator CPU: user %.2f s, system %.2f s (%.0f %% of one core)\n", r.cpu_user_s,
         r.cpu_sys_s, r.elapsed_s > 0 ? 100 * (r.cpu_user_s + r.cpu_sys_s) / r.elapsed_s : 0.0);
  const LoopStats& ls = r.loop;
  append(out,
         "loop: %llu waits, %llu sleeps, %llu spins (%.0f ms, %llu refused by the budget), "
         "%llu overdue; spin lead %.0f us, worst sleep overshoot %.0f us\n",
         static_cast<unsigned long long>(ls.waits), static_cast<unsigned long long>(ls.sleeps),
         static_cast<unsigned long long>(ls.spins), ls.spin_time.to_ms(),
         static_cast<unsigned long long>(ls.spin_denied),
         static_cast<unsigned long long>(ls.overdue), ls.spin_lead.to_us(),
         ls.max_overshoot.to_us());
  return out;
}

}  // namespace nicsim::emu

#include "nicsim/report/run_recorder.h"

#include <algorithm>

#include "nicsim/report/latency_recorder.h"
#include "nicsim/report/latency_under_load.h"

namespace nicsim::report {
namespace {

Direction opposite(Direction d) {
  return d == Direction::kAtoB ? Direction::kBtoA : Direction::kAtoB;
}

std::optional<double> ms(const std::optional<Duration>& d) {
  return d ? std::optional<double>(d->to_ms()) : std::nullopt;
}

// A counter's growth since `last`; a counter that went back (a restarted source) counts as 0.
uint64_t growth(uint64_t now, uint64_t last) { return now - std::min(now, last); }

}  // namespace

RunRecorder::RunRecorder(RunInfo info, RunLayout layout)
    : info_(std::move(info)),
      layout_(std::move(layout)),
      flows_(layout_.flows.size()),
      probes_(layout_.probes.size()) {}

Time RunRecorder::next_boundary() const {
  return min(last_boundary_ + layout_.interval, Time::zero() + layout_.duration);
}

void RunRecorder::close_interval(Time at, std::span<const FlowCounters> flows) {
  if (at <= last_boundary_) {
    return;
  }
  Interval iv;
  iv.start_s = last_boundary_.to_seconds();
  iv.end_s = at.to_seconds();
  const double seconds = (at - last_boundary_).to_seconds();
  for (size_t i = 0; i < layout_.flows.size(); ++i) {
    const FlowCounters& c = flows[i];
    FlowState& st = flows_[i];
    DirectionInterval& d = iv.directions[layout_.flows[i].dir];
    FlowInterval fi;
    fi.id = iperf3_stream_id(static_cast<int64_t>(d.flows.size()));
    fi.bytes = growth(c.received_bytes, st.last_received);
    fi.bits_per_second = bits_per_second(fi.bytes, seconds);
    fi.retransmits = growth(c.retransmits, st.last_retransmits);
    fi.cwnd_bytes = c.cwnd_bytes;
    fi.srtt_ms = c.srtt_ms;
    st.last_received = c.received_bytes;
    st.last_retransmits = c.retransmits;
    d.bytes += fi.bytes;
    d.retransmits += fi.retransmits;
    d.cwnd_bytes += fi.cwnd_bytes;
    d.flows.push_back(fi);
  }
  for (Direction dir : kDirections) {
    iv.directions[dir].bits_per_second = bits_per_second(iv.directions[dir].bytes, seconds);
  }
  for (size_t i = 0; i < probes_.size(); ++i) {
    ProbeState& p = probes_[i];
    if (p.interval_count > 0) {
      iv.latency_ms[layout_.probes[i].name] = (p.interval_sum / p.interval_count).to_ms();
    }
    p.interval_sum = Duration::zero();
    p.interval_count = 0;
  }
  out_.intervals.push_back(std::move(iv));
  last_boundary_ = at;
}

uint64_t RunRecorder::probe_sent(size_t probe, Time sent) {
  std::vector<Sample>& s = probes_[probe].samples;
  s.push_back(Sample{sent, std::nullopt, std::nullopt, std::nullopt});
  return s.size() - 1;
}

void RunRecorder::probe_answered(size_t probe, uint64_t sample, Duration rtt,
                                 std::optional<Duration> back) {
  ProbeState& p = probes_[probe];
  Sample& s = p.samples[sample];
  s.rtt = rtt;
  s.back = back;
  p.interval_sum += rtt;
  ++p.interval_count;
}

Run RunRecorder::finish(Time end, std::span<const FlowCounters> counters,
                        std::span<const FlowTotals> totals) {
  if (last_boundary_ < end) {
    close_interval(end, counters);
  }
  out_.label = info_.label;
  out_.params = info_.params;
  out_.backend = info_.backend;
  out_.seed = info_.seed;
  out_.config_toml = info_.config_toml;
  out_.duration_s = end.to_seconds();
  add_transfers(end, totals);
  for (size_t i = 0; i < probes_.size(); ++i) {
    out_.latency_ms[layout_.probes[i].name] = probe_result(i, end);
  }
  const Duration ran = end.since_epoch();
  for (const PhaseSpec& ph : layout_.phases) {
    if (ph.start < ran) {  // a run stopped early cuts its phases short
      out_.phases.push_back(Phase{ph.name, ph.start.to_seconds(), min(ph.end, ran).to_seconds()});
    }
  }
  out_.latency_under_load = compute_latency_under_load(out_);
  compare_published();
  return std::move(out_);
}

void RunRecorder::add_transfers(Time end, std::span<const FlowTotals> totals) {
  const Duration ran = end.since_epoch();
  for (size_t i = 0; i < layout_.flows.size(); ++i) {
    const FlowSpec& f = layout_.flows[i];
    const FlowTotals& t = totals[i];
    DirectionTransfer& d = out_.transfer[f.dir];
    FlowTransfer ft;
    ft.id = iperf3_stream_id(static_cast<int64_t>(d.flows.size()));
    ft.name = f.name;
    ft.dscp = f.dscp;
    ft.from = f.from;
    ft.to = f.to;
    ft.ecn = t.ecn;
    const double start_s = f.start.to_seconds();
    const double stop_s = max(min(f.stop, ran), f.start).to_seconds();
    ft.sender.start_s = ft.receiver.start_s = start_s;
    ft.sender.end_s = ft.receiver.end_s = stop_s;
    ft.sender.bytes = t.sender_bytes;
    ft.sender.retransmits = t.retransmits;
    ft.sender.bits_per_second = bits_per_second(ft.sender.bytes, stop_s - start_s);
    ft.receiver.bytes = t.received_bytes;
    ft.receiver.bits_per_second = bits_per_second(ft.receiver.bytes, stop_s - start_s);
    d.flows.push_back(ft);
  }
  sum_flows(out_);
  if (layout_.network) {
    out_.fairness = flow_fairness(out_);
  }
}

// Statistics and series of one probe. A request unanswered at `end` is lost if sent at least
// kLossHorizon before `end`, else left out of both. One-way statistics are over the answered
// round trips (the request leg carries the losses); the series keeps every leg that arrived.
ProbeLatency RunRecorder::probe_result(size_t probe, Time end) const {
  const ProbeSpec& spec = layout_.probes[probe];
  LatencyRecorder rtt, forward, back;
  ProbeLatency pl;
  std::vector<std::optional<double>> fwd_col, back_col;
  for (const Sample& s : probes_[probe].samples) {
    if (!s.rtt && s.sent + kLossHorizon > end) {
      continue;  // may still be on its way
    }
    if (s.rtt) {
      rtt.add(*s.rtt);
      if (spec.one_way && s.forward) {
        forward.add(*s.forward);
      }
      if (spec.one_way && s.back) {
        back.add(*s.back);
      }
    } else {
      rtt.add_loss();
    }
    pl.series.time_s.push_back(s.sent.to_seconds());
    pl.series.rtt_ms.push_back(ms(s.rtt));
    if (spec.one_way) {
      fwd_col.push_back(ms(s.forward));
      back_col.push_back(ms(s.back));
    }
  }
  pl.kind = spec.icmp ? "icmp" : "udp";
  pl.rtt = rtt.stats();
  pl.dscp = spec.dscp;
  pl.from = spec.from;
  pl.to = spec.to;
  if (spec.one_way) {
    PerDirection<LatencyStats> ow;
    ow[spec.dir] = forward.stats();
    ow[opposite(spec.dir)] = back.stats();
    ow[spec.dir].lost = pl.rtt.lost;
    pl.one_way = ow;
    const bool a_to_b = spec.dir == Direction::kAtoB;
    pl.series.one_way_a_to_b_ms = a_to_b ? std::move(fwd_col) : std::move(back_col);
    pl.series.one_way_b_to_a_ms = a_to_b ? std::move(back_col) : std::move(fwd_col);
  }
  return pl;
}

// The measured value of a [published] metric, if this run measures it.
std::optional<double> RunRecorder::measured(const std::string& metric) const {
  const auto goodput = [&](Direction d) { return out_.goodput_bps[d] / 1e6; };
  if (metric == "goodput_mbit") return goodput(Direction::kAtoB) + goodput(Direction::kBtoA);
  if (metric == "goodput_a_to_b_mbit") return goodput(Direction::kAtoB);
  if (metric == "goodput_b_to_a_mbit") return goodput(Direction::kBtoA);
  if (metric == "retransmits") return static_cast<double>(out_.retransmits);
  if (const auto& l = out_.latency_under_load) {  // rrul (docs/rrul.md)
    if (metric == "induced_latency_ms") return l->induced_latency_ms;
    if (metric == "rpm") return l->rpm;
    if (metric == "idle_latency_ms" && l->idle_rtt.count > 0) return l->idle_rtt.mean;
    if (metric == "loaded_latency_ms" && l->loaded_rtt.count > 0) return l->loaded_rtt.mean;
  }
  // ping_*: the first ICMP probe in creation order.
  const auto first_icmp = std::find_if(layout_.probes.begin(), layout_.probes.end(),
                                       [](const ProbeSpec& p) { return p.icmp; });
  if (first_icmp != layout_.probes.end()) {
    const LatencyStats& ping = out_.latency_ms.at(first_icmp->name).rtt;
    if (ping.count > 0) {
      if (metric == "ping_ms") return ping.mean;
      if (metric == "ping_min_ms") return ping.min;
      if (metric == "ping_max_ms") return ping.max;
      if (metric == "ping_mdev_ms") return ping.mdev;
    }
  }
  return std::nullopt;
}

void RunRecorder::compare_published() {
  std::string source;
  for (const auto& [metric, value] : info_.published) {
    if (metric == "source" && std::holds_alternative<std::string>(value)) {
      source = std::get<std::string>(value);
    }
  }
  for (const auto& [metric, value] : info_.published) {
    if (!std::holds_alternative<double>(value)) {
      continue;
    }
    Comparison c;
    c.metric = metric;
    c.published = std::get<double>(value);
    c.simulated = measured(metric);
    if (c.simulated) {
      c.relative_error = relative_error(c.published, *c.simulated);
    }
    c.source = source;
    out_.comparison.push_back(std::move(c));
  }
}

}  // namespace nicsim::report

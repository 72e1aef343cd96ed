#include "nicsim/report/run_recorder.h"

#include <algorithm>

#include "nicsim/report/emodel.h"
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
      probes_(layout_.probes.size()),
      floods_(layout_.floods.size()) {}

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

namespace {

// The kFloodStep a send time falls in, growing `v` to hold it.
uint64_t& step_of(std::vector<uint64_t>& v, Time sent) {
  const size_t k = static_cast<size_t>(std::max<int64_t>(0, sent.since_epoch() / kFloodStep));
  if (v.size() <= k) {
    v.resize(k + 1, 0);
  }
  return v[k];
}

}  // namespace

uint64_t RunRecorder::flood_sent(size_t flood, Time sent) {
  FloodState& f = floods_[flood];
  ++step_of(f.sent, sent);
  if (!layout_.floods[flood].codec.empty()) {
    f.sent_at.push_back(sent);
    f.delay.emplace_back();
  }
  return f.sent_total++;
}

void RunRecorder::flood_received(size_t flood, uint64_t seq, Time sent, Duration one_way) {
  FloodState& f = floods_[flood];
  if (seq < f.delay.size()) {
    f.delay[seq] = one_way;
  }
  ++step_of(f.received, sent);
  const size_t k = static_cast<size_t>(std::max<int64_t>(0, sent.since_epoch() / kFloodStep));
  if (f.delay_ms.size() <= k) {
    f.delay_ms.resize(k + 1, 0.0);
  }
  f.delay_ms[k] += one_way.to_ms();
  ++f.received_total;
  f.one_way.add(one_way);
}

// One flood's result. Only datagrams sent in steps that ended at least kLossHorizon before
// `end` can count as lost (later ones may still be on their way); every arrival counts.
FloodResult RunRecorder::flood_result(size_t flood, Time end) const {
  const FloodSpec& spec = layout_.floods[flood];
  const FloodState& st = floods_[flood];
  uint64_t judged = 0;
  uint64_t lost = 0;
  for (size_t k = 0; k < st.sent.size(); ++k) {
    const Time step_end = Time::zero() + kFloodStep * static_cast<int64_t>(k + 1);
    if (step_end + kLossHorizon > end) {
      break;
    }
    const uint64_t arrived = k < st.received.size() ? st.received[k] : 0;
    judged += st.sent[k];
    lost += st.sent[k] - std::min(st.sent[k], arrived);
  }
  FloodResult r;
  r.direction = std::string(direction_key(spec.dir));
  r.dscp = spec.dscp;
  r.rate_bps = spec.rate_bps;
  r.size = spec.size;
  r.sent = st.sent_total;
  r.received = st.received_total;
  r.lost = lost;
  r.loss_pct = judged == 0 ? 0.0 : 100.0 * static_cast<double>(lost) / static_cast<double>(judged);
  const Duration window = min(spec.stop, end.since_epoch()) - spec.start;
  r.received_bps =
      window > Duration::zero()
          ? bits_per_second(r.received * static_cast<uint64_t>(spec.size), window.to_seconds())
          : 0.0;
  r.one_way = st.one_way.stats();
  r.one_way.lost = lost;
  r.from = spec.from;
  r.to = spec.to;
  return r;
}

// One voice stream: the packets sent at least kLossHorizon before `end` are judged (lost if
// they never arrived); later ones count only if they arrived. IPDV pairs consecutive sequence
// numbers that both arrived (RFC 3393 §2.5's "consecutive packets" selection).
VoipResult RunRecorder::voip_result(size_t flood, Time end) const {
  const FloodSpec& spec = layout_.floods[flood];
  const FloodState& st = floods_[flood];
  const VoipCodec* codec = voip_codec(spec.codec);
  VoipResult v;
  v.direction = std::string(direction_key(spec.dir));
  v.dscp = spec.dscp;
  v.codec = spec.codec;
  v.interval_ms = codec != nullptr ? codec->interval.to_ms() : 0.0;
  v.size = spec.size;
  v.sent = st.sent_total;
  v.received = st.received_total;
  v.from = spec.from;
  v.to = spec.to;
  LatencyRecorder ipdv;
  uint64_t judged = 0;
  uint64_t run = 0;  // the current burst of losses
  // Two-state Markov fit: transitions received->lost, received->any, lost->received, lost->any.
  uint64_t r_to_l = 0, r_any = 0, l_to_r = 0, l_any = 0;
  std::optional<bool> prev_lost;
  for (size_t k = 0; k < st.delay.size(); ++k) {
    const bool arrived = st.delay[k].has_value();
    if (!arrived && st.sent_at[k] + kLossHorizon > end) {
      break;  // may still be on its way: this one and every later one are not judged
    }
    ++judged;
    if (k > 0 && arrived && st.delay[k - 1]) {
      const Duration d = *st.delay[k] - *st.delay[k - 1];
      ipdv.add(d < Duration::zero() ? Duration::zero() - d : d);
    }
    if (!arrived) {
      ++v.lost;
      ++run;
      v.longest_burst = std::max(v.longest_burst, run);
    } else if (run > 0) {
      ++v.loss_bursts;
      run = 0;
    }
    if (prev_lost) {
      (*prev_lost ? l_any : r_any) += 1;
      if (*prev_lost && arrived) ++l_to_r;
      if (!*prev_lost && !arrived) ++r_to_l;
    }
    prev_lost = !arrived;
  }
  if (run > 0) {
    ++v.loss_bursts;
  }
  v.loss_pct =
      judged == 0 ? 0.0 : 100.0 * static_cast<double>(v.lost) / static_cast<double>(judged);
  v.one_way = st.one_way.stats();
  v.one_way.lost = v.lost;
  if (ipdv.count() > 0) {
    v.ipdv_mean_abs_ms = ipdv.mean_ns() / 1e6;
    v.ipdv_p99_ms = ipdv.percentile_ns(99) / 1e6;
  }
  const double p = r_any == 0 ? 0.0 : static_cast<double>(r_to_l) / static_cast<double>(r_any);
  const double q = l_any == 0 ? 1.0 : static_cast<double>(l_to_r) / static_cast<double>(l_any);
  v.burst_ratio = v.lost == 0 || p + q <= 0.0 ? 1.0 : 1.0 / (p + q);
  v.mouth_to_ear_ms = v.one_way.p99 + v.interval_ms;
  const EModelCodec factors = codec != nullptr ? codec->emodel : EModelCodec{};
  v.r_factor = emodel_r(factors, v.mouth_to_ear_ms, v.loss_pct, v.burst_ratio);
  v.mos = emodel_mos(v.r_factor);
  return v;
}

namespace {

// The interval (index into `ivs`) holding time `t_s`, or ivs.size() when none does.
size_t interval_at(const std::vector<Interval>& ivs, double t_s) {
  const auto it = std::upper_bound(ivs.begin(), ivs.end(), t_s,
                                   [](double t, const Interval& iv) { return t < iv.end_s; });
  return it != ivs.end() && t_s >= it->start_s ? static_cast<size_t>(it - ivs.begin()) : ivs.size();
}

}  // namespace

// udp_flood: from the kFloodStep counters (a step belongs to the interval its start is in);
// voip: from every packet. Loss follows the results' rule (sent >= kLossHorizon before `end`).
void RunRecorder::add_flood_intervals(size_t flood, Time end) {
  const FloodSpec& spec = layout_.floods[flood];
  const FloodState& st = floods_[flood];
  std::vector<Interval>& ivs = out_.intervals;
  std::vector<double> delay_sum(ivs.size(), 0.0);
  std::vector<double> ipdv_sum(ivs.size(), 0.0);
  std::vector<uint64_t> ipdv_n(ivs.size(), 0);
  std::vector<FloodInterval> rows(ivs.size());
  if (spec.codec.empty()) {
    for (size_t k = 0; k < st.sent.size(); ++k) {
      const Time step_start = Time::zero() + kFloodStep * static_cast<int64_t>(k);
      const size_t i = interval_at(ivs, step_start.to_seconds());
      if (i == ivs.size()) {
        continue;
      }
      const uint64_t arrived = k < st.received.size() ? st.received[k] : 0;
      rows[i].sent += st.sent[k];
      rows[i].received += arrived;
      if (step_start + kFloodStep + kLossHorizon <= end) {
        rows[i].lost += st.sent[k] - std::min(st.sent[k], arrived);
      }
      delay_sum[i] += k < st.delay_ms.size() ? st.delay_ms[k] : 0.0;
    }
  } else {
    for (size_t k = 0; k < st.sent_at.size(); ++k) {
      const size_t i = interval_at(ivs, st.sent_at[k].to_seconds());
      if (i == ivs.size()) {
        continue;
      }
      ++rows[i].sent;
      if (!st.delay[k]) {
        rows[i].lost += st.sent_at[k] + kLossHorizon <= end ? 1 : 0;
        continue;
      }
      ++rows[i].received;
      delay_sum[i] += st.delay[k]->to_ms();
      if (k > 0 && st.delay[k - 1]) {
        const double d = (*st.delay[k] - *st.delay[k - 1]).to_ms();
        ipdv_sum[i] += d < 0 ? -d : d;
        ++ipdv_n[i];
      }
    }
  }
  for (size_t i = 0; i < ivs.size(); ++i) {
    FloodInterval& r = rows[i];
    if (r.sent == 0) {
      continue;  // outside the flood's life: no sample, as flent has none
    }
    const double len = ivs[i].end_s - ivs[i].start_s;
    r.bits_per_second =
        len > 0 ? static_cast<double>(r.received) * static_cast<double>(spec.size) * 8.0 / len
                : 0.0;
    if (r.received > 0) {
      r.one_way_ms = delay_sum[i] / static_cast<double>(r.received);
    }
    if (ipdv_n[i] > 0) {
      r.ipdv_ms = ipdv_sum[i] / static_cast<double>(ipdv_n[i]);
    }
    ivs[i].floods[spec.name] = r;
  }
}

uint64_t RunRecorder::transfer_started(size_t set, int64_t size, Time at) {
  transfers_.push_back(Transfer{set, size, at, std::nullopt});
  return transfers_.size() - 1;
}

void RunRecorder::transfer_completed(uint64_t id, Time at) {
  if (id < transfers_.size() && !transfers_[id].end) {
    transfers_[id].end = at;
  }
}

namespace {

// The size buckets of TransfersResult::buckets (KB = 1000 bytes).
const char* size_bucket(int64_t bytes) {
  if (bytes < 10'000) return "<10KB";
  if (bytes < 100'000) return "10KB-100KB";
  if (bytes < 1'000'000) return "100KB-1MB";
  return ">=1MB";
}

}  // namespace

TransfersResult RunRecorder::transfers_result(size_t set, Time end) const {
  const TransferSetSpec& spec = layout_.transfer_sets[set];
  TransfersResult r;
  r.direction = std::string(direction_key(spec.dir));
  r.dscp = spec.dscp;
  r.from = spec.from;
  r.to = spec.to;
  LatencyRecorder all;
  std::map<std::string, LatencyRecorder> buckets;
  for (const char* b : {"<10KB", "10KB-100KB", "100KB-1MB", ">=1MB"}) {
    buckets[b];
  }
  for (const Transfer& t : transfers_) {
    if (t.set != set) {
      continue;
    }
    ++r.started;
    LatencyRecorder& bucket = buckets[size_bucket(t.size)];
    if (t.end) {
      ++r.completed;
      r.bytes += static_cast<uint64_t>(t.size);
      all.add(*t.end - t.start);
      bucket.add(*t.end - t.start);
    } else if (t.start + kLossHorizon <= end) {
      all.add_loss();
      bucket.add_loss();
    }
  }
  r.fct_ms = all.stats();
  for (const auto& [name, rec] : buckets) {
    r.buckets[name] = rec.stats();
  }
  return r;
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
  out_.flent_test = layout_.flent_test;
  add_transfers(end, totals);
  for (size_t i = 0; i < probes_.size(); ++i) {
    out_.latency_ms[layout_.probes[i].name] = probe_result(i, end);
  }
  for (size_t i = 0; i < layout_.transfer_sets.size(); ++i) {
    out_.transfers[layout_.transfer_sets[i].name] = transfers_result(i, end);
  }
  for (size_t i = 0; i < floods_.size(); ++i) {
    if (layout_.floods[i].codec.empty()) {
      out_.udp_flood[layout_.floods[i].name] = flood_result(i, end);
    } else {
      out_.voip[layout_.floods[i].name] = voip_result(i, end);
    }
    add_flood_intervals(i, end);
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

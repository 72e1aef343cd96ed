#include "nicsim/report/sample_results.h"

#include <nlohmann/json.hpp>

#include "nicsim/core/time.h"
#include "nicsim/report/json.h"
#include "nicsim/report/latency_recorder.h"

namespace nicsim::report::samples {

namespace {

LatencyStats stats_of(std::initializer_list<int64_t> us, uint64_t lost) {
  LatencyRecorder r;
  for (int64_t v : us) {
    r.add(Duration::us(v));
  }
  r.add_loss(lost);
  return r.stats();
}

Run sample_run(bool bql) {
  Run r;
  r.label = bql ? "bql=true rate=1Gbit" : "bql=false rate=1Gbit";
  r.params = {{"hosts.a.nic.bql", bql},
              {"wire.rate", std::string("1Gbit")},
              {"hosts.a.nic.tx_ring", int64_t{256}},
              {"hosts.a.tcp.pacing_ratio", 1.5}};
  r.backend = "sim";
  r.seed = 42;
  r.duration_s = 2.0;

  ProbeLatency ping;
  ping.kind = "icmp";
  ping.rtt = stats_of({344, 432, 558, 401, 399}, 1);
  ping.series.time_s = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0};
  ping.series.rtt_ms = {0.344, 0.432, std::nullopt, 0.558, 0.401, 0.399};
  r.latency_ms["ping"] = ping;
  ProbeLatency udp;
  udp.kind = "udp";
  udp.rtt = stats_of({1000, 1100, 1200}, 0);
  udp.one_way = PerDirection<LatencyStats>{stats_of({500, 510, 700}, 0), stats_of({500}, 2)};
  udp.dscp = 46;
  udp.series.time_s = {0.0, 0.5, 1.0};
  udp.series.rtt_ms = {1.0, std::nullopt, std::nullopt};
  udp.series.one_way_a_to_b_ms = {0.5, 0.51, 0.7};
  udp.series.one_way_b_to_a_ms = {0.5, std::nullopt, std::nullopt};
  r.latency_ms["udp_ef"] = udp;
  ProbeLatency silent;
  silent.kind = "udp";
  silent.rtt = stats_of({}, 3);
  silent.dscp = 8;
  r.latency_ms["udp_bk"] = silent;

  for (Direction d : kDirections) {
    DirectionTransfer& t = r.transfer[d];
    const uint64_t scale = d == Direction::kAtoB ? 1 : 3;
    for (int64_t i = 0; i < 2; ++i) {
      FlowTransfer f;
      f.id = iperf3_stream_id(i);
      f.name = std::string(d == Direction::kAtoB ? "TCP upload " : "TCP download ") +
               (i == 0 ? "BE" : "EF");
      f.dscp = i == 0 ? 0 : 46;
      f.sender = {0.0, 2.0, 1'000'000 * scale + static_cast<uint64_t>(i), 0, 7};
      f.sender.bits_per_second = bits_per_second(f.sender.bytes, 2.0);
      f.receiver = {0.0, 2.01, 999'000 * scale, 0};
      f.receiver.bits_per_second = bits_per_second(f.receiver.bytes, 2.01);
      t.flows.push_back(f);
      t.sender.bytes += f.sender.bytes;
      t.sender.retransmits += f.sender.retransmits;
      t.receiver.bytes += f.receiver.bytes;
    }
    t.sender.end_s = 2.0;
    t.sender.bits_per_second = bits_per_second(t.sender.bytes, 2.0);
    t.receiver.end_s = 2.01;
    t.receiver.bits_per_second = bits_per_second(t.receiver.bytes, 2.01);
  }
  derive_totals(r);

  for (int k = 0; k < 2; ++k) {
    Interval iv;
    iv.start_s = k;
    iv.end_s = k + 1;
    for (Direction d : kDirections) {
      DirectionInterval& di = iv.directions[d];
      for (int64_t i = 0; i < 2; ++i) {
        FlowInterval f{iperf3_stream_id(i), 500'000 + static_cast<uint64_t>(k * 1000 + i), 0,
                       static_cast<uint64_t>(k), 14'480 * static_cast<uint64_t>(i + 1)};
        f.bits_per_second = bits_per_second(f.bytes, 1.0);
        if (k == 1 || i == 1) {
          f.srtt_ms = 1.25 + static_cast<double>(i);
        }
        di.flows.push_back(f);
        di.bytes += f.bytes;
        di.retransmits += f.retransmits;
        di.cwnd_bytes += f.cwnd_bytes;
      }
      di.bits_per_second = bits_per_second(di.bytes, 1.0);
    }
    iv.latency_ms["ping"] = 0.1 + k / 3.0;
    if (k == 1) {
      iv.latency_ms["udp_ef"] = 1.0 / 3.0;
    }
    r.intervals.push_back(iv);
  }

  QueueSeries qa;
  qa.time_s = {0.0, 0.001, 1e-9 + 0.002};
  qa.qdisc_bytes = {0, 1514, 3028};
  qa.qdisc_packets = {0, 1, 2};
  qa.ring_bytes = {0, 15140, 30280};
  qa.ring_packets = {0, 10, 20};
  qa.bql_limit_bytes = {0, 3028, 4542};
  qa.bql_inflight_bytes = {0, 3028, 3028};
  qa.device_fifo_bytes = {0, 2048, 16384};
  r.queues["a"] = qa;
  QueueSeries qb;
  qb.time_s = {0.0, 0.5};
  qb.qdisc_bytes = {0, 66};
  r.queues["b"] = qb;

  r.stages.a_to_b = {{"qdisc", 0.25, 1000}, {"ring", 1.0 / 3.0, 1000}, {"wire", 0.0121, 999}};
  r.stages.b_to_a = {{"wire", 0.0121, 500}, {"rx", 0.05, 500}, {"stack", 0.002, 500}};

  const double published = bql ? 3.0 : 10.0;
  const double simulated = bql ? 2.9 : 10.4;
  r.comparison = {{"ping_ms", published, simulated, relative_error(published, simulated),
                   "stmmac BQL thread (seed 004)"},
                  {"goodput_mbit", 0.0, 95.0, relative_error(0.0, 95.0), ""},
                  {"idle_ping_ms", 0.432, std::nullopt, std::nullopt, ""}};
  r.phases = {{"idle_before", 0.0, 0.5}, {"load", 0.5, 1.5}, {"idle_after", 1.5, 2.0}};
  LatencyUnderLoad l;
  l.idle_rtt = stats_of({344, 399}, 0);
  l.loaded_rtt = stats_of({432, 558, 401, 1000}, 3);
  if (bql) {
    l.idle_one_way = PerDirection<LatencyStats>{stats_of({500}, 0), stats_of({500}, 0)};
    l.loaded_one_way = PerDirection<LatencyStats>{stats_of({510, 700}, 0), stats_of({}, 2)};
    l.rpm_self_ms = 2.25;
  }
  l.induced_latency_ms = 0.2260;
  l.grade = bql ? "A+" : "F";
  l.rpm = 60000.0 / 0.6;
  l.rpm_foreign_ms = 0.6;
  l.fairness = {0.99, 0.5};
  l.fairness_all = 0.75;
  l.per_dscp["EF"] = stats_of({1000}, 2);
  l.per_dscp["BE"] = stats_of({432, 558, 401}, 1);
  l.per_dscp["CS1"] = stats_of({}, 3);
  l.per_dscp_flow_srtt["CS5"] = stats_of({2250}, 0);
  l.goodput_bps = {3'996'000.0, 11'988'000.0};
  r.latency_under_load = l;
  r.config_toml = "[scenario]\nname = \"sample\"\nduration = \"2s\"\nseed = 42\n";
  return r;
}

}  // namespace

Results full_sample_results() {
  Results res;
  res.meta.nicsim_version = "0.1.0";
  res.meta.git_commit = "3e87aa6";
  res.meta.start_time = iso8601_utc(1'714'564'800);
  res.meta.wall_s = 0.25;
  res.meta.host = "testhost";
  res.meta.events = 123'456;
  res.meta.events_per_s = 493'824.0;
  res.meta.command_line = {"nicsim", "run", "scenarios/sample.toml", "--json", "out \"q\".json"};
  res.meta.runs = {{"bql=false rate=1Gbit", 0.125, 60'000, 480'000.0},
                   {"bql=true rate=1Gbit", 0.125, 63'456, 507'648.0}};
  res.runs = {sample_run(false), sample_run(true)};
  return res;
}

Results network_sample_results() {
  Results res = full_sample_results();
  for (Run& r : res.runs) {
    for (Direction d : kDirections) {
      for (FlowTransfer& f : r.transfer[d].flows) {
        f.from = d == Direction::kAtoB ? "s1" : "d2";
        f.to = d == Direction::kAtoB ? "d1" : "s2";
      }
    }
    for (auto& [name, p] : r.latency_ms) {
      p.from = "s1";
      p.to = "d2";
    }
    sum_flows(r);
    r.fairness = flow_fairness(r);
  }
  return res;
}

Results minimal_sample_results() {
  Results res;
  res.meta.nicsim_version = "0.1.0";
  res.meta.start_time = iso8601_utc(0);
  res.runs.emplace_back();
  return res;
}

namespace {

void strip_issue6_keys(nlohmann::ordered_json& j) {
  if (j.is_object()) {
    for (const char* key : {"dscp", "series", "name", "srtt_ms", "phases", "latency_under_load"}) {
      j.erase(key);
    }
  }
  if (j.is_structured()) {
    for (auto& e : j) {
      strip_issue6_keys(e);
    }
  }
}

}  // namespace

std::string legacy_sample_json() {
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(to_json(full_sample_results()));
  strip_issue6_keys(doc);
  return doc.dump(2);
}

Results legacy_sample_results() {
  Results res = full_sample_results();
  for (Run& r : res.runs) {
    for (auto& [name, p] : r.latency_ms) {
      p.dscp = 0;
      p.series = {};
    }
    for (Direction d : kDirections) {
      for (FlowTransfer& f : r.transfer[d].flows) {
        f.name.clear();
        f.dscp = 0;
      }
    }
    for (Interval& iv : r.intervals) {
      for (Direction d : kDirections) {
        for (FlowInterval& f : iv.directions[d].flows) {
          f.srtt_ms.reset();
        }
      }
    }
    r.phases.clear();
    r.latency_under_load.reset();
  }
  return res;
}

}  // namespace nicsim::report::samples

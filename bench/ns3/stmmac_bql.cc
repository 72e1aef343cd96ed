// ns-3 reference run of the stmmac BQL case, for comparing nicsim's simulator with ns-3 on the
// same scenario (issue 4 item 8, "speed side by side"; setup from docs/mechanisms §13).
//
// Scenario (defaults = the 100 Mbit/s, BQL-off row of docs/mechanisms §13):
//   two nodes, one point-to-point link, --rateMbit (100; 1000 for the 1 Gbit/s rows), --delayUs
//   one way (100 us); device queue ("ring") DropTailQueue of --ring packets (256); root qdisc
//   pfifo_fast of --qdiscLimit packets (1000) via the traffic-control layer on both devices, or
//   --qdisc=fq_codel (ns-3 defaults); --bql attaches DynamicQueueLimits to both device queues;
//   --flows TCP CUBIC bulk flows (4) node 0 -> node 1 (BulkSend -> PacketSink) with ns-3's
//   default 128 KiB socket buffers; a UDP echo probe node 0 -> node 1 -> node 0 every
//   --probeIntervalMs (10 ms) with TOS 0; --simTime simulated seconds (30).
//
// Choices that docs/mechanisms §13 does not state (each a flag; the defaults reproduce §13's
// 100 Mbit/s BQL-off row: 96.3 Mbit/s, 43.2 ms, ~1.6 M events):
//   --segmentSize 1448: the Linux MSS at MTU 1500 with TCP timestamps (ns-3's default is 536).
//     With 1448 the goodput ceiling is 1448/1502 of the link (1502 = 1448 + 12 timestamp option +
//     20 TCP + 20 IP + 2 PPP), 96.4 Mbit/s at 100 Mbit/s; with 536 it would be ~92.7 Mbit/s.
//   --sendSize 0 (= segmentSize): BulkSend's write size. ns-3's default (512) makes TCP send
//     512-byte segments whenever an ACK frees room in the full send buffer (TcpNoDelay is on by
//     default): 95.2 Mbit/s and 2.12 M events in 30 s instead of 96.3 Mbit/s and 1.63 M.
//   --rttWarmup 1: probes sent in the first second (slow start, queue filling) are echoed but
//     left out of the RTT statistics; probe_rtt_mean_all_ms keeps them (42.8 vs 43.2 ms).
//   --probeSize 100: UdpEchoClient's default payload. The probe's socket keeps IP TOS 0 (ns-3
//     3.37's UdpEchoClient has no Tos attribute; a socket's TOS defaults to 0), so in pfifo_fast
//     it shares band 1 with the TCP flows, as in the seed.
//   All flows and the probe start at t = 0 and run to the end; goodput = bytes received by the
//   sinks * 8 / simTime.
//
// Measurement: "events" is Simulator::GetEventCount() ("the total number of events executed",
// ns-3 3.37 simulator.h), read after Simulator::Run(). "wall_s" is the steady_clock time of
// Simulator::Run() alone and "cpu_s" its process CPU time (the machine is shared: CPU time is
// the less noisy figure); topology setup is reported separately as setup_s. events_per_s =
// events / wall_s; sim_per_wall = simTime / wall_s (> 1: faster than real time). Debian's
// libns3 3.37 is built with NS_LOG compiled in (NS_LOG=... works), as in §13's measurement.
//
// Output: one human-readable line starting with "# ", then one JSON object on one line. The
// JSON keys are tool-neutral (tool, case, rate_mbit, goodput_mbit, probe_rtt_mean_ms, events,
// wall_s, cpu_s, events_per_s, ...) so that nicsim's run of the same case can print the same
// keys and the two can be tabulated side by side (bench/ns3/README.md, bench/ns3/table.sh).

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_output.h"
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#ifndef NS3_PKG_VERSION
#define NS3_PKG_VERSION "unknown"
#endif

using namespace ns3;
using bench::Json;
using bench::percentile;
using bench::process_cpu_s;

namespace {

// Probe bookkeeping: UdpEchoServer sends the received packet object back, so the packet uid seen
// by the client's Tx trace is the uid seen again by its Rx trace.
struct ProbeLog {
  Time warmup;  // probes sent before this are echoed but left out of rtt_ms
  std::unordered_map<uint64_t, Time> sent_at;
  std::vector<double> rtt_ms;
  double rtt_sum_all_ms = 0;  // every echoed probe, warm-up included
  uint64_t sent = 0;
  uint64_t echoed = 0;
};

void on_probe_tx(ProbeLog* log, Ptr<const Packet> p) {
  log->sent_at.emplace(p->GetUid(), Simulator::Now());
  ++log->sent;
}

void on_probe_rx(ProbeLog* log, Ptr<const Packet> p) {
  auto it = log->sent_at.find(p->GetUid());
  if (it == log->sent_at.end()) {
    return;
  }
  ++log->echoed;
  const double rtt_ms = (Simulator::Now() - it->second).GetSeconds() * 1e3;
  log->rtt_sum_all_ms += rtt_ms;
  if (it->second >= log->warmup) {
    log->rtt_ms.push_back(rtt_ms);
  }
  log->sent_at.erase(it);
}

struct BqlLog {
  uint32_t limit = 0;
  uint32_t max_limit = 0;
  uint64_t changes = 0;
};

void on_bql_limit(BqlLog* log, uint32_t /*old_value*/, uint32_t new_value) {
  log->limit = new_value;
  log->max_limit = std::max(log->max_limit, new_value);
  ++log->changes;
}

}  // namespace

int main(int argc, char* argv[]) {
  const auto t_setup = std::chrono::steady_clock::now();

  uint32_t rate_mbit = 100;
  uint32_t delay_us = 100;
  uint32_t ring = 256;
  std::string qdisc = "pfifo_fast";
  uint32_t qdisc_limit = 1000;
  bool bql = false;
  uint32_t flows = 4;
  uint32_t segment_size = 1448;
  uint32_t send_size = 0;  // 0: = segment_size
  double rtt_warmup_s = 1;
  double probe_interval_ms = 10;
  uint32_t probe_size = 100;
  double sim_time = 30;
  std::string case_name = "stmmac_bql";

  CommandLine cmd(__FILE__);
  cmd.AddValue("rateMbit", "link rate in Mbit/s (100 or 1000 in the reference runs)", rate_mbit);
  cmd.AddValue("delayUs", "one-way propagation delay in microseconds", delay_us);
  cmd.AddValue("ring", "device queue (TX ring) size in packets", ring);
  cmd.AddValue("qdisc", "root qdisc: pfifo_fast or fq_codel", qdisc);
  cmd.AddValue("qdiscLimit", "pfifo_fast limit in packets", qdisc_limit);
  cmd.AddValue("bql", "attach DynamicQueueLimits (BQL) to the device queues", bql);
  cmd.AddValue("flows", "number of TCP bulk flows", flows);
  cmd.AddValue("segmentSize", "TCP segment size (MSS) in bytes", segment_size);
  cmd.AddValue("sendSize", "BulkSend write size in bytes, 0 = segmentSize (ns-3's default is 512)",
               send_size);
  cmd.AddValue("probeIntervalMs", "UDP echo probe interval in ms", probe_interval_ms);
  cmd.AddValue("probeSize", "UDP echo probe payload in bytes", probe_size);
  cmd.AddValue("simTime", "simulated seconds", sim_time);
  cmd.AddValue("caseName", "name printed in the output", case_name);
  cmd.AddValue("rttWarmup", "exclude probes sent before this many seconds from the RTT stats",
               rtt_warmup_s);
  cmd.Parse(argc, argv);
  if (send_size == 0) {
    send_size = segment_size;
  }
  if (qdisc != "pfifo_fast" && qdisc != "fq_codel") {
    std::fprintf(stderr, "stmmac_bql: --qdisc must be pfifo_fast or fq_codel, got %s\n",
                 qdisc.c_str());
    return 2;
  }
  if (rate_mbit == 0 || ring == 0 || flows == 0 || sim_time <= 0 || probe_interval_ms <= 0) {
    std::fprintf(stderr,
                 "stmmac_bql: rateMbit, ring, flows, simTime, probeIntervalMs must be > 0\n");
    return 2;
  }

  // TCP: CUBIC (already ns-3's default since 3.34; set explicitly), MSS, ns-3's default buffers
  // (TcpSocket::SndBufSize / RcvBufSize = 131072) left alone.
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment_size));

  NodeContainer nodes;
  nodes.Create(2);

  PointToPointHelper link;
  link.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t{rate_mbit} * 1000000)));
  link.SetChannelAttribute("Delay", TimeValue(MicroSeconds(delay_us)));
  link.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, ring)));
  NetDeviceContainer devices = link.Install(nodes);

  InternetStackHelper stack;
  stack.Install(nodes);

  // The qdisc must be installed before addresses are assigned, otherwise Ipv4AddressHelper
  // installs ns-3's default root qdisc (FqCoDel) on the devices.
  TrafficControlHelper tch;
  if (qdisc == "pfifo_fast") {
    tch.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize",
                         QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, qdisc_limit)));
  } else {
    tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc");
  }
  if (bql) {
    tch.SetQueueLimits("ns3::DynamicQueueLimits");
  }
  QueueDiscContainer qdiscs = tch.Install(devices);

  Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.0");
  Ipv4InterfaceContainer ifaces = addresses.Assign(devices);
  const Ipv4Address receiver = ifaces.GetAddress(1);

  const Time start = Seconds(0);
  const Time stop = Seconds(sim_time);

  ApplicationContainer sinks;
  ApplicationContainer sources;
  for (uint32_t i = 0; i < flows; ++i) {
    const uint16_t port = static_cast<uint16_t>(5001 + i);
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sinks.Add(sink.Install(nodes.Get(1)));
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(receiver, port));
    source.SetAttribute("MaxBytes", UintegerValue(0));  // unlimited
    source.SetAttribute("SendSize", UintegerValue(send_size));
    sources.Add(source.Install(nodes.Get(0)));
  }
  sinks.Start(start);
  sinks.Stop(stop);
  sources.Start(start);
  sources.Stop(stop);

  const uint16_t echo_port = 9;
  UdpEchoServerHelper echo_server(echo_port);
  ApplicationContainer server = echo_server.Install(nodes.Get(1));
  UdpEchoClientHelper echo_client(receiver, echo_port);
  const Time probe_interval = MicroSeconds(static_cast<int64_t>(probe_interval_ms * 1000));
  echo_client.SetAttribute("Interval", TimeValue(probe_interval));
  echo_client.SetAttribute("PacketSize", UintegerValue(probe_size));
  echo_client.SetAttribute(
      "MaxPackets", UintegerValue(static_cast<uint32_t>(sim_time * 1000 / probe_interval_ms) + 1));
  ApplicationContainer client = echo_client.Install(nodes.Get(0));
  server.Start(start);
  server.Stop(stop);
  client.Start(start);
  client.Stop(stop);

  ProbeLog probes;
  probes.warmup = Seconds(rtt_warmup_s);
  client.Get(0)->TraceConnectWithoutContext("Tx", MakeBoundCallback(&on_probe_tx, &probes));
  client.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&on_probe_rx, &probes));

  // Sender-side device queue and its BQL state.
  Ptr<PointToPointNetDevice> tx_dev = DynamicCast<PointToPointNetDevice>(devices.Get(0));
  BqlLog bql_log;
  if (bql) {
    Ptr<NetDeviceQueueInterface> ndqi = tx_dev->GetObject<NetDeviceQueueInterface>();
    Ptr<QueueLimits> limits = ndqi->GetTxQueue(0)->GetQueueLimits();
    limits->TraceConnectWithoutContext("Limit", MakeBoundCallback(&on_bql_limit, &bql_log));
  }

  Simulator::Stop(stop);
  const auto t_run = std::chrono::steady_clock::now();
  const double cpu_run = process_cpu_s();
  Simulator::Run();
  const double cpu_s = process_cpu_s() - cpu_run;
  const auto t_end = std::chrono::steady_clock::now();

  const uint64_t events = Simulator::GetEventCount();
  const double setup_s = std::chrono::duration<double>(t_run - t_setup).count();
  const double wall_s = std::chrono::duration<double>(t_end - t_run).count();

  uint64_t rx_bytes = 0;
  for (uint32_t i = 0; i < sinks.GetN(); ++i) {
    rx_bytes += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
  }
  const double goodput_mbit = static_cast<double>(rx_bytes) * 8 / sim_time / 1e6;
  const uint64_t data_packets = rx_bytes / segment_size;
  double rtt_sum = 0;
  for (double r : probes.rtt_ms) {
    rtt_sum += r;
  }
  const double rtt_mean =
      probes.rtt_ms.empty() ? std::nan("") : rtt_sum / static_cast<double>(probes.rtt_ms.size());
  const double rtt_p50 = percentile(probes.rtt_ms, 0.50);
  const double rtt_p99 = percentile(probes.rtt_ms, 0.99);
  const uint32_t ring_backlog = tx_dev->GetQueue()->GetNPackets();
  const uint32_t qdisc_backlog = qdiscs.Get(0)->GetNPackets();
  const double events_per_s = static_cast<double>(events) / wall_s;

  std::printf(
      "# ns-3 %s %s: %u Mbit/s, %s, BQL %s, %u flows, %.0f s simulated: goodput %.1f Mbit/s, "
      "probe RTT mean %.2f ms (p50 %.2f, p99 %.2f, %" PRIu64 "/%" PRIu64
      " echoed); %.3f M events in %.2f s wall (%.2f s CPU, setup %.2f s) = %.3f M events/s, "
      "%.2fx real time\n",
      NS3_PKG_VERSION, case_name.c_str(), rate_mbit, qdisc.c_str(), bql ? "on" : "off", flows,
      sim_time, goodput_mbit, rtt_mean, rtt_p50, rtt_p99, probes.echoed, probes.sent,
      static_cast<double>(events) / 1e6, wall_s, cpu_s, setup_s, events_per_s / 1e6,
      sim_time / wall_s);
  Json json;
  json.str("tool", "ns-3");
  json.str("tool_version", NS3_PKG_VERSION);
  json.str("case", case_name);
  json.num("rate_mbit", rate_mbit);
  json.num("one_way_delay_us", delay_us);
  json.num("ring_pkts", ring);
  json.str("qdisc", qdisc);
  json.num("qdisc_limit_pkts", qdiscs.Get(0)->GetMaxSize().GetValue());
  json.boolean("bql", bql);
  json.num("flows", flows);
  json.str("cc", "cubic");
  json.num("segment_size", segment_size);
  json.num("send_size", send_size);
  json.num("probe_interval_ms", probe_interval_ms);
  json.num("rtt_warmup_s", rtt_warmup_s);
  json.num("sim_s", sim_time);
  json.num("goodput_mbit", goodput_mbit);
  json.num("probe_rtt_mean_ms", rtt_mean);
  json.num("probe_rtt_mean_all_ms", probes.echoed
                                        ? probes.rtt_sum_all_ms / static_cast<double>(probes.echoed)
                                        : std::nan(""));
  json.num("probe_rtt_p50_ms", rtt_p50);
  json.num("probe_rtt_p99_ms", rtt_p99);
  json.num("probes_sent", probes.sent);
  json.num("probes_echoed", probes.echoed);
  json.num("events", events);
  json.num("wall_s", wall_s);
  json.num("cpu_s", cpu_s);
  json.num("setup_s", setup_s);
  json.num("events_per_s", std::round(events_per_s));
  json.num("sim_per_wall", sim_time / wall_s);
  json.num("data_packets", data_packets);
  json.num("events_per_data_packet",
           data_packets ? static_cast<double>(events) / static_cast<double>(data_packets) : 0.0);
  json.num("bql_limit_bytes_end", bql ? static_cast<double>(bql_log.limit) : std::nan(""));
  json.num("bql_limit_bytes_max", bql ? static_cast<double>(bql_log.max_limit) : std::nan(""));
  json.num("ring_backlog_pkts_end", ring_backlog);
  json.num("qdisc_backlog_pkts_end", qdisc_backlog);
  std::printf("%s\n", json.finish().c_str());

  Simulator::Destroy();
  return 0;
}

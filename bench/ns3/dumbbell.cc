// ns-3 reference run of a router dumbbell, the network of bench/ns3/nicsim_dumbbell.toml (and
// of scenarios/networks/dumbbell.toml's pfifo 1000 run), for comparing the speed of nicsim's
// simulator over a network with ns-3 on the same network (issue 10 item 8).
//
// Network (defaults = nicsim_dumbbell.toml):
//
//   s1 --\                                           /-- d1
//   ...    rl ==bottleneck (--bottleneckMbit, --bottleneckDelayUs)== rr    ...
//   sN --/                                           \-- dN
//
//   --senders N (2) senders s_i and receivers d_i, each on its own point-to-point access link of
//   --accessMbit (1000) and --accessDelayUs (100 us) to router rl resp. rr; rl - rr is the
//   bottleneck, 100 Mbit/s and 10 ms one way. Every device has a DropTailQueue of --ring
//   packets (256, the TX ring) with DynamicQueueLimits (BQL; nicsim's generic-1g NIC has BQL),
//   and a root qdisc via the traffic-control layer: pfifo_fast of 1000 packets on hosts and on
//   every router interface (the Linux default, as in the nicsim file), except rl's egress onto
//   the bottleneck, which gets --qdisc (pfifo: FifoQueueDisc of --qdiscLimit packets, 1000; or
//   fq_codel: FqCoDelQueueDisc with ns-3's defaults = Linux's). Static routes from ns-3's
//   global routing (shortest path, as nicsim computes them).
//   --flowsPerSender (2) TCP CUBIC bulk flows s_i -> d_i (BulkSend -> PacketSink), all starting
//   at t = 0; an ICMP echo (V4Ping, 56-byte payload) s1 -> d1 every --pingIntervalMs (100 ms)
//   from --pingStart (5 s); --simTime simulated seconds (30).
//
// Choices that make ns-3 simulate what nicsim simulates (each a flag):
//   --segmentSize 1448 and --sendSize = segmentSize: the Linux MSS with timestamps (see
//     stmmac_bql.cc for why not ns-3's 536 / 512).
//   --sndBuf 4 MiB, --rcvBuf 6 MiB: Linux 6.1's tcp_wmem[2] / tcp_rmem[2], nicsim's defaults
//     (ns-3 has no buffer autotuning; ns-3's 128 KiB default would cap each flow's window below
//     the bottleneck queue, so the queue would never fill as it does in Linux and nicsim).
//   --minRtoMs 200: Linux's TCP_RTO_MIN (ns-3's default is 1 s). Initial window 10 (RFC 6928).
//   --ethernet 1: point-to-point links carry a 2-byte PPP header instead of Ethernet's 14-byte
//     header, 4-byte FCS, 8-byte preamble and 12-byte inter-frame gap. With --ethernet each
//     link's DataRate is scaled by (mss + 54) / (mss + 90) (1502 / 1538 byte times per full
//     segment) so that a full-sized segment occupies every link for as long as on nicsim's
//     Ethernet wire; without it ns-3's goodput ceiling is 2.4 % higher than nicsim's.
//   What stays different: nicsim also models each host's and router's NIC (TX completion
//   coalescing, NAPI, RX ring, TSO/GSO, CPU costs per packet) and Linux TCP's TSQ and
//   autotuning; ns-3's devices send instantly and its routers forward at no cost.
//
// Measurement (as stmmac_bql.cc): "events" is Simulator::GetEventCount() after Run(); "wall_s" /
// "cpu_s" are the steady-clock and process-CPU time of Simulator::Run() alone (setup_s
// apart). Bottleneck queue: drops and the time-weighted mean backlog in packets of rl's egress
// qdisc, from its PacketsInQueue trace (no sampling events). goodput = bytes received by the
// sinks * 8 / simTime; goodput_min/max_flow_mbit the per-flow spread.
//
// Output: one human line starting with "# ", then one JSON object on one line (the keys of
// stmmac_bql.cc where they apply; bench/ns3/table.sh tabulates them).

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "bench_output.h"
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-apps-module.h"
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

struct PingLog {
  std::vector<double> rtt_ms;
};

void on_ping_rtt(PingLog* log, Time rtt) { log->rtt_ms.push_back(rtt.GetSeconds() * 1e3); }

// Time-weighted backlog of one qdisc from its PacketsInQueue trace: the integral of the backlog
// over time, updated at every change.
struct BacklogLog {
  Time last;
  uint32_t value = 0;
  double integral_pkt_s = 0;
  uint32_t max = 0;
  void advance_to(Time now) {
    integral_pkt_s += static_cast<double>(value) * (now - last).GetSeconds();
    last = now;
  }
};

void on_backlog(BacklogLog* log, uint32_t /*old_value*/, uint32_t new_value) {
  log->advance_to(Simulator::Now());
  log->value = new_value;
  log->max = std::max(log->max, new_value);
}

double mean(const std::vector<double>& v) {
  if (v.empty()) {
    return std::nan("");
  }
  double sum = 0;
  for (double x : v) {
    sum += x;
  }
  return sum / static_cast<double>(v.size());
}


struct Options {
  uint32_t senders = 2;
  uint32_t flows_per_sender = 2;
  uint32_t access_mbit = 1000;
  uint32_t access_delay_us = 100;
  uint32_t bottleneck_mbit = 100;
  uint32_t bottleneck_delay_us = 10000;
  uint32_t ring = 256;
  std::string qdisc = "pfifo";
  uint32_t qdisc_limit = 1000;
  uint32_t segment_size = 1448;
  uint32_t send_size = 0;  // 0: = segment_size
  uint32_t snd_buf = 4 * 1024 * 1024;
  uint32_t rcv_buf = 6 * 1024 * 1024;
  uint32_t min_rto_ms = 200;
  bool ethernet = true;
  double ping_interval_ms = 100;
  double ping_start_s = 5;
  double sim_time = 30;
  std::string case_name = "dumbbell";
};

// A link's DataRate: rate_mbit, scaled for Ethernet's per-frame overhead with --ethernet.
DataRate link_rate(const Options& o, uint32_t rate_mbit) {
  double bps = static_cast<double>(rate_mbit) * 1e6;
  if (o.ethernet) {
    bps *= static_cast<double>(o.segment_size + 54) / static_cast<double>(o.segment_size + 90);
  }
  return DataRate(static_cast<uint64_t>(std::llround(bps)));
}

// A point-to-point link between a and b with a TX ring of o.ring packets on both devices.
NetDeviceContainer connect(const Options& o, Ptr<Node> a, Ptr<Node> b, uint32_t rate_mbit,
                           uint32_t delay_us) {
  PointToPointHelper link;
  link.SetDeviceAttribute("DataRate", DataRateValue(link_rate(o, rate_mbit)));
  link.SetChannelAttribute("Delay", TimeValue(MicroSeconds(delay_us)));
  link.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, o.ring)));
  return link.Install(a, b);
}

// Installs pfifo_fast of 1000 packets with BQL on each device (hosts and router interfaces).
QueueDiscContainer install_default_qdisc(const NetDeviceContainer& devices) {
  TrafficControlHelper tch;
  tch.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize",
                       QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1000)));
  tch.SetQueueLimits("ns3::DynamicQueueLimits");
  return tch.Install(devices);
}

QueueDiscContainer install_bottleneck_qdisc(const Options& o, Ptr<NetDevice> device) {
  TrafficControlHelper tch;
  if (o.qdisc == "pfifo") {
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                         QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, o.qdisc_limit)));
  } else {
    tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc");
  }
  tch.SetQueueLimits("ns3::DynamicQueueLimits");
  return tch.Install(device);
}

}  // namespace

int main(int argc, char* argv[]) {
  const auto t_setup = std::chrono::steady_clock::now();
  Options o;
  CommandLine cmd(__FILE__);
  cmd.AddValue("senders", "senders (= receivers)", o.senders);
  cmd.AddValue("flowsPerSender", "TCP bulk flows per sender", o.flows_per_sender);
  cmd.AddValue("accessMbit", "access link rate, Mbit/s", o.access_mbit);
  cmd.AddValue("accessDelayUs", "access link one-way delay, us", o.access_delay_us);
  cmd.AddValue("bottleneckMbit", "bottleneck rate, Mbit/s", o.bottleneck_mbit);
  cmd.AddValue("bottleneckDelayUs", "bottleneck one-way delay, us", o.bottleneck_delay_us);
  cmd.AddValue("ring", "device queue (TX ring) size in packets", o.ring);
  cmd.AddValue("qdisc", "bottleneck qdisc: pfifo or fq_codel", o.qdisc);
  cmd.AddValue("qdiscLimit", "bottleneck pfifo limit in packets", o.qdisc_limit);
  cmd.AddValue("segmentSize", "TCP segment size (MSS) in bytes", o.segment_size);
  cmd.AddValue("sendSize", "BulkSend write size in bytes, 0 = segmentSize", o.send_size);
  cmd.AddValue("sndBuf", "TCP send buffer, bytes", o.snd_buf);
  cmd.AddValue("rcvBuf", "TCP receive buffer, bytes", o.rcv_buf);
  cmd.AddValue("minRtoMs", "TCP minimum RTO, ms", o.min_rto_ms);
  cmd.AddValue("ethernet", "scale link rates for Ethernet framing (see the header)", o.ethernet);
  cmd.AddValue("pingIntervalMs", "ICMP echo interval, ms", o.ping_interval_ms);
  cmd.AddValue("pingStart", "first ICMP echo, s", o.ping_start_s);
  cmd.AddValue("simTime", "simulated seconds", o.sim_time);
  cmd.AddValue("caseName", "name printed in the output", o.case_name);
  cmd.Parse(argc, argv);
  if (o.send_size == 0) {
    o.send_size = o.segment_size;
  }
  if (o.qdisc != "pfifo" && o.qdisc != "fq_codel") {
    std::fprintf(stderr, "dumbbell: --qdisc must be pfifo or fq_codel, got %s\n", o.qdisc.c_str());
    return 2;
  }
  if (o.senders == 0 || o.flows_per_sender == 0 || o.access_mbit == 0 || o.bottleneck_mbit == 0 ||
      o.ring == 0 || o.sim_time <= 0 || o.ping_interval_ms <= 0 || o.ping_start_s >= o.sim_time) {
    std::fprintf(stderr,
                 "dumbbell: senders, flowsPerSender, rates, ring, simTime, pingIntervalMs must "
                 "be > 0 and pingStart < simTime\n");
    return 2;
  }

  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(o.segment_size));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(o.snd_buf));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(o.rcv_buf));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(o.min_rto_ms)));

  NodeContainer senders;
  NodeContainer receivers;
  NodeContainer routers;  // 0 = rl, 1 = rr
  senders.Create(o.senders);
  receivers.Create(o.senders);
  routers.Create(2);
  InternetStackHelper stack;
  stack.InstallAll();

  // Qdiscs go on before addresses: Ipv4AddressHelper would otherwise install ns-3's default
  // root qdisc (FqCoDel) on every device.
  Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
  std::vector<Ipv4Address> receiver_addr;
  for (uint32_t i = 0; i < o.senders; ++i) {
    NetDeviceContainer d =
        connect(o, senders.Get(i), routers.Get(0), o.access_mbit, o.access_delay_us);
    install_default_qdisc(d);
    addresses.Assign(d);
    addresses.NewNetwork();
  }
  NetDeviceContainer wan =
      connect(o, routers.Get(0), routers.Get(1), o.bottleneck_mbit, o.bottleneck_delay_us);
  QueueDiscContainer bottleneck = install_bottleneck_qdisc(o, wan.Get(0));
  install_default_qdisc(NetDeviceContainer(wan.Get(1)));
  addresses.Assign(wan);
  addresses.NewNetwork();
  for (uint32_t i = 0; i < o.senders; ++i) {
    NetDeviceContainer d =
        connect(o, routers.Get(1), receivers.Get(i), o.access_mbit, o.access_delay_us);
    install_default_qdisc(d);
    receiver_addr.push_back(addresses.Assign(d).GetAddress(1));
    addresses.NewNetwork();
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  const Time stop = Seconds(o.sim_time);
  ApplicationContainer sinks;
  ApplicationContainer sources;
  for (uint32_t i = 0; i < o.senders; ++i) {
    for (uint32_t f = 0; f < o.flows_per_sender; ++f) {
      const uint16_t port = static_cast<uint16_t>(5001 + f);
      PacketSinkHelper sink("ns3::TcpSocketFactory",
                            InetSocketAddress(Ipv4Address::GetAny(), port));
      sinks.Add(sink.Install(receivers.Get(i)));
      BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(receiver_addr[i], port));
      source.SetAttribute("MaxBytes", UintegerValue(0));
      source.SetAttribute("SendSize", UintegerValue(o.send_size));
      sources.Add(source.Install(senders.Get(i)));
    }
  }
  sinks.Start(Seconds(0));
  sinks.Stop(stop);
  sources.Start(Seconds(0));
  sources.Stop(stop);

  V4PingHelper ping(receiver_addr[0]);
  ping.SetAttribute("Interval", TimeValue(MicroSeconds(std::llround(o.ping_interval_ms * 1e3))));
  ApplicationContainer pinger = ping.Install(senders.Get(0));
  pinger.Start(Seconds(o.ping_start_s));
  pinger.Stop(stop);
  PingLog pings;
  pinger.Get(0)->TraceConnectWithoutContext("Rtt", MakeBoundCallback(&on_ping_rtt, &pings));

  BacklogLog backlog;
  bottleneck.Get(0)->TraceConnectWithoutContext("PacketsInQueue",
                                                MakeBoundCallback(&on_backlog, &backlog));

  Simulator::Stop(stop);
  const auto t_run = std::chrono::steady_clock::now();
  const double cpu_run = process_cpu_s();
  Simulator::Run();
  const double cpu_s = process_cpu_s() - cpu_run;
  const auto t_end = std::chrono::steady_clock::now();
  backlog.advance_to(stop);

  const uint64_t events = Simulator::GetEventCount();
  const double setup_s = std::chrono::duration<double>(t_run - t_setup).count();
  const double wall_s = std::chrono::duration<double>(t_end - t_run).count();

  uint64_t rx_bytes = 0;
  std::vector<double> flow_mbit;
  for (uint32_t i = 0; i < sinks.GetN(); ++i) {
    const uint64_t bytes = DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
    rx_bytes += bytes;
    flow_mbit.push_back(static_cast<double>(bytes) * 8 / o.sim_time / 1e6);
  }
  const double goodput_mbit = static_cast<double>(rx_bytes) * 8 / o.sim_time / 1e6;
  const QueueDisc::Stats& qstats = bottleneck.Get(0)->GetStats();
  const double backlog_mean = backlog.integral_pkt_s / o.sim_time;
  const uint32_t flows = o.senders * o.flows_per_sender;
  const double events_per_s = static_cast<double>(events) / wall_s;

  std::printf(
      "# ns-3 %s %s: %u senders x %u flows, bottleneck %u Mbit/s %s, %.0f s simulated: goodput "
      "%.1f Mbit/s (flows %.1f-%.1f), ping mean %.2f ms (p50 %.2f, p99 %.2f, %zu replies); "
      "bottleneck drops %u, mean backlog %.1f packets; %.3f M events in %.2f s wall "
      "(%.2f s CPU, setup %.2f s) = %.3f M events/s, %.2fx real time\n",
      NS3_PKG_VERSION, o.case_name.c_str(), o.senders, o.flows_per_sender, o.bottleneck_mbit,
      o.qdisc.c_str(), o.sim_time, goodput_mbit,
      *std::min_element(flow_mbit.begin(), flow_mbit.end()),
      *std::max_element(flow_mbit.begin(), flow_mbit.end()), mean(pings.rtt_ms),
      percentile(pings.rtt_ms, 0.5), percentile(pings.rtt_ms, 0.99), pings.rtt_ms.size(),
      qstats.nTotalDroppedPackets, backlog_mean, static_cast<double>(events) / 1e6, wall_s, cpu_s,
      setup_s, events_per_s / 1e6, o.sim_time / wall_s);
  Json json;
  json.str("tool", "ns-3");
  json.str("tool_version", NS3_PKG_VERSION);
  json.str("case", o.case_name);
  json.num("senders", o.senders);
  json.num("flows", flows);
  json.num("rate_mbit", o.bottleneck_mbit);
  json.num("one_way_delay_us", o.bottleneck_delay_us);
  json.num("access_mbit", o.access_mbit);
  json.str("qdisc", o.qdisc);
  json.num("qdisc_limit_pkts", o.qdisc_limit);
  json.boolean("bql", true);
  json.boolean("ethernet_framing", o.ethernet);
  json.str("cc", "cubic");
  json.num("segment_size", o.segment_size);
  json.num("sim_s", o.sim_time);
  json.num("goodput_mbit", goodput_mbit);
  json.num("goodput_min_flow_mbit", *std::min_element(flow_mbit.begin(), flow_mbit.end()));
  json.num("goodput_max_flow_mbit", *std::max_element(flow_mbit.begin(), flow_mbit.end()));
  json.num("ping_rtt_mean_ms", mean(pings.rtt_ms));
  json.num("ping_rtt_p50_ms", percentile(pings.rtt_ms, 0.5));
  json.num("ping_rtt_p99_ms", percentile(pings.rtt_ms, 0.99));
  json.num("pings_echoed", static_cast<uint64_t>(pings.rtt_ms.size()));
  json.num("bottleneck_drops", qstats.nTotalDroppedPackets);
  json.num("bottleneck_backlog_mean_pkts", backlog_mean);
  json.num("bottleneck_backlog_max_pkts", backlog.max);
  json.num("events", events);
  json.num("wall_s", wall_s);
  json.num("cpu_s", cpu_s);
  json.num("setup_s", setup_s);
  json.num("events_per_s", std::round(events_per_s));
  json.num("sim_per_wall", o.sim_time / wall_s);
  std::printf("%s\n", json.finish().c_str());

  Simulator::Destroy();
  return 0;
}

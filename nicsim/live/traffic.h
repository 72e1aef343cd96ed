#pragma once
// Traffic on real sockets: the client side of live measurements. Runs a TrafficPlan — TCP bulk
// flows, ICMP echo and isochronous UDP probes, UDP floods and voice streams, request/response
// transfers — against a nicsim server (server.h) and returns
// the results in the simulator's shape (report::Run: transfer, intervals, latency_ms, goodput),
// so `nicsim emulate` and `nicsim rrul HOST` print the same tables and JSON as `nicsim run`.
//
// Host roles: the client is host "a" (the scenario's first host), the server host "b". A flow
// a->b is an upload (the client writes, the server is a sink); a flow b->a is a download (the
// server is a source). Per flow: its own TCP connection with its own congestion control
// (TCP_CONGESTION, set by whichever end sends) and DSCP (IP_TOS on both ends).
//
// What is measured where (docs/live.md):
//   - upload: sender bytes, retransmits (tcpi_total_retrans) and cwnd (tcpi_snd_cwnd x mss) from
//     the client's TCP_INFO each interval; receiver bytes per interval = the growth of
//     tcpi_bytes_acked (bytes the receiver's TCP acknowledged); the receiver total is the
//     server's own count of bytes read (its End message).
//   - download: receiver bytes counted by the client as it reads (including the server's 6-byte
//     framing per 16 KiB, 0.04 %); retransmits and cwnd from the server's Stats messages (its
//     TCP_INFO), attributed to the interval in which they arrive.
//   - UDP probes: RTT = client receive - client send - (server send - server receive), the
//     round trip without the reflector's holding time (irtt); receive times are the kernel's
//     (SO_TIMESTAMPNS). One-way delays only with `shared_clock` (emulation: one machine, one
//     CLOCK_MONOTONIC); across machines they would need synchronised clocks, so live runs
//     report RTT only.
//   - ICMP echo: a raw socket (root) or an unprivileged ping socket; RTT from the send time to
//     the kernel's receive stamp of the reply.
//   - udp_flood / voip: sequence numbers and send times in each datagram; the receiver (the
//     server's udp sink, reporting each arrival, or this client) stamps arrivals; one-way
//     delays exact with `shared_clock`, else relative to the smallest measured.
//   - transfers: one TCP connection per transfer at its arrival time; FCT to the End that
//     follows the response's last byte.
//   A probe counts as lost when no answer came and it was sent at least report::kLossHorizon
//   before the end of the run (report::RunRecorder, as for every back-end).

#include <netinet/in.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/config/traffic_plan.h"
#include "nicsim/core/time.h"
#include "nicsim/report/results.h"
#include "nicsim/report/run_recorder.h"

namespace nicsim::live {

// The plan is the scenario's (config::plan) or rrul's; host 0 is the client's, host 1 the
// server's. A flow from host 0 is an upload, one from host 1 a download. Between any two hosts
// c < s of a network (ClientOptions::hosts), c takes host 0's part and s host 1's.
using config::FlowPlan;
using config::PhasePlan;
using config::ProbePlan;
using config::TrafficPlan;

// How the client (in host 0, or the lower-indexed host of the flow's pair) opens a flow: the
// upload's client writes, a download's server does; TCP_CONGESTION is set on the sending socket
// only (congestion control acts on the data direction), by the client (`client_cc`) or by the
// server as the request asks (`server_cc`).
struct FlowSockets {
  bool upload = true;
  std::string client_cc;  // "" = the system default / not set
  std::string server_cc;
};
FlowSockets flow_sockets(const FlowPlan& f);

// flent's rrul (config::add_rrul) from this client to the server: idle, then 4 TCP uploads + 4
// downloads marked BE, BK (CS1), CS5, EF with UDP probes EF, BK, BE and one ICMP ping every
// `probe_interval`, then idle.
struct RrulOptions {
  Duration idle = Duration::s(5);
  Duration load = Duration::s(60);
  Duration probe_interval = Duration::ms(200);
  Duration interval = Duration::ms(200);  // throughput bins
  std::string cc;                         // "" = default (both ends)
};
TrafficPlan rrul_plan(const RrulOptions& o);

struct ClientOptions {
  sockaddr_in server{};  // the nicsim server (its address is also the ICMP target)
  // Both ends read the same CLOCK_MONOTONIC (emulation): report one-way delays.
  bool shared_clock = false;
  // Emulation: ICMP probes of direction b->a are sent from this network namespace to
  // `local_addr`. Without it (a real network), b->a ICMP probes are refused.
  int peer_netns_fd = -1;
  in_addr local_addr{};
  // Emulation of a network (more than two hosts, or traffic between any two): every host's
  // namespace, address and nicsim server port (0: no server there). A flow or probe between
  // hosts c < s is opened from c's namespace to s's server, exactly as host 0 (this thread)
  // and host 1 (`server`) in the two-host form: a flow from c is an upload, from s a download;
  // ICMP is sent from the probe's `from` host to its `to` host. Empty: the two-host form above.
  struct HostEndpoint {
    int netns_fd = -1;
    in_addr addr{};
    uint16_t server_port = 0;
  };
  std::vector<HostEndpoint> hosts;
  int stop_fd = -1;  // readable (eventfd, pipe) -> stop at once with what was measured
  // The server's shared secret (auth.h): each connection answers the server's Challenge
  // before its request. "" = none (a server that has one refuses us with a clear reason).
  std::string secret;
  Duration grace = Duration::s(3);  // after the end: wait this long for final server reports
  std::function<void(const std::string&)> log;  // one-line notices
};

// Whether this process can send ICMP echo requests here (a raw socket, or a ping socket
// allowed by net.ipv4.ping_group_range).
bool icmp_available();

// What of the plan the live engine cannot run, as one line naming the [[traffic.*]] entry, or
// "" (checked by run_traffic; `nicsim emulate` asks before it builds anything): a transfer set
// whose client (from) is written after its server (to) in the scenario's hosts (the engine
// opens every connection from the host written first and measures a transfer where it opens
// it), a flood datagram smaller than the live header (kFloodHeader) or over 1472 bytes.
std::string plan_problem(const TrafficPlan& plan);

// Runs the plan in the calling thread's network namespace (blocking) and returns what
// report::RunRecorder made of its samples, under `info` (label, backend, ...). Throws LiveError
// when a socket cannot be set up or the server refuses a request.
report::Run run_traffic(const TrafficPlan& plan, report::RunInfo info,
                        const ClientOptions& options);

}  // namespace nicsim::live

#pragma once
// Traffic on real sockets: the client side of live measurements. Runs a TrafficPlan — TCP bulk
// flows, ICMP echo and isochronous UDP probes — against a nicsim server (server.h) and returns
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
//   A probe counts as lost when no answer came and it was sent at least 1 s before the end of
//   the run (as the simulator counts).

#include <netinet/in.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/core/time.h"
#include "nicsim/report/results.h"

namespace nicsim::live {

struct FlowPlan {
  report::Direction dir = report::Direction::kAtoB;
  uint8_t dscp = 0;
  std::string cc;  // "" = the sender's default
  Duration start;
  Duration stop;
  std::string name;  // "" or e.g. "TCP upload BE"
};

struct ProbePlan {
  std::string name;  // result key: "ping", "udp", "ping-2", ...
  bool icmp = false;
  report::Direction dir = report::Direction::kAtoB;  // direction of the request
  Duration interval = Duration::s(1);
  int64_t size = 64;  // payload bytes
  Duration start;
  Duration stop;
  uint8_t dscp = 0;
};

struct PhasePlan {
  std::string name;
  Duration start;
  Duration end;
};

struct TrafficPlan {
  Duration duration;
  Duration interval = Duration::s(1);  // interval table rows
  std::vector<FlowPlan> flows;
  std::vector<ProbePlan> probes;
  std::vector<PhasePlan> phases;  // rrul: idle_before, load, idle_after
};

// The scenario's [[traffic.*]] entries (host names mapped to a = first host, b = second).
// Throws std::invalid_argument naming the entry that cannot run live.
TrafficPlan plan_from_scenario(const config::Scenario& s);

// flent's rrul: idle, then 4 TCP uploads + 4 downloads marked BE, BK (CS1), CS5, EF with UDP
// probes EF, BK, BE and one ICMP ping every `probe_interval`, then idle.
struct RrulOptions {
  Duration idle = Duration::s(5);
  Duration load = Duration::s(60);
  Duration probe_interval = Duration::ms(200);
  Duration interval = Duration::ms(200);  // throughput bins
  std::string cc;                         // "" = default
};
TrafficPlan rrul_plan(const RrulOptions& o);
// Adds rrul's flows (over [load_start, load_end)), probes (over [start, end)) and its three
// phases to a plan (for [[traffic.rrul]]).
struct RrulTimes {
  Duration start;
  Duration load_start;
  Duration load_end;
  Duration end;
};
void add_rrul(TrafficPlan& plan, const RrulTimes& times, Duration probe_interval,
              const std::string& cc);

struct ClientOptions {
  sockaddr_in server{};  // the nicsim server (its address is also the ICMP target)
  // Both ends read the same CLOCK_MONOTONIC (emulation): report one-way delays.
  bool shared_clock = false;
  // Emulation: ICMP probes of direction b->a are sent from this network namespace to
  // `local_addr`. Without it (a real network), b->a ICMP probes are refused.
  int peer_netns_fd = -1;
  in_addr local_addr{};
  int stop_fd = -1;  // readable (eventfd, pipe) -> stop at once with what was measured
  Duration grace = Duration::s(3);  // after the end: wait this long for final server reports
  std::function<void(const std::string&)> log;  // one-line notices
};

// Whether this process can send ICMP echo requests here (a raw socket, or a ping socket
// allowed by net.ipv4.ping_group_range).
bool icmp_available();

// Runs the plan in the calling thread's network namespace (blocking). Fills transfer,
// intervals, latency_ms, goodput_bps, retransmits and duration_s; the caller sets label,
// params, backend, seed and config. Throws LiveError when a socket cannot be set up or the
// server refuses a request.
report::Run run_traffic(const TrafficPlan& plan, const ClientOptions& options);

}  // namespace nicsim::live

#pragma once
// flent's named tests as presets of nicsim's traffic (tohojo/flent flent/tests/*.conf, Debian
// flent 2.1.1 /usr/share/flent/flent/tests): the same flows (direction, DSCP, congestion
// control), latency probes and timing (DELAY idle, LENGTH load, DELAY idle; probes over the
// whole TOTAL_LENGTH every STEP_SIZE), and flent's series names, so that a run exported with
// --flent opens in flent with the test's own plots. Expressible today:
//
//   rrul               config::add_rrul (rrul.conf)
//   rrul_be            4 + 4 BE flows "TCP upload BE", "TCP upload BE2".."BE4" (downloads the
//                      same); UDP probes BE1..BE3, ICMP (rrul_be.conf)
//   tcp_nup, tcp_ndown N BE streams "TCP upload::k" / "TCP download::k", ICMP (tcp_nup.conf,
//                      tcp_ndown.conf; test parameter upload_streams / download_streams)
//   tcp_bidirectional  "TCP download", "TCP upload", ICMP (tcp_bidirectional.conf)
//   cubic_bbr, cubic_reno, cubic_dctcp
//                      per direction a Cubic and a BBR / Reno / dctcp flow marked BE and CS1
//                      ("TCP upload Cubic BE", "TCP upload BBR CS1", ...); UDP probes BE, CS1,
//                      CS6 and ICMP (cubic_bbr.conf, cubic_reno.conf, cubic_dctcp.conf)
//   udp_flood          "UDP upload": constant-rate UDP (iperf -u -b udp_bandwidth -l
//                      udp_pktsize; iperf 2's defaults 1 Mbit/s, 1470 B) for LENGTH after DELAY;
//                      "Ping (ms) ICMP" over TOTAL_LENGTH (udp_flood.conf)
//   voip               "VoIP": G.711 as flent's irtt VoIP runner sends it (172 B every 20 ms,
//                      flent/runners.py VoipRunner), unmarked (voip_marking unset) for
//                      TOTAL_LENGTH = LENGTH, no DELAY (voip.conf, voip.inc)
//   bursts             probes "Ping (ms) UDP EF", "UDP BK", "UDP BE", "ICMP" over TOTAL_LENGTH =
//                      LENGTH; UDP bursts of burst_length (5 s) of burst_psize (500 B) datagrams
//                      at DELAY*(i+1) + burst_length*i, i < LENGTH / (DELAY + burst_length)
//                      (bursts.conf). flent's traffic-gen sends its bursts as fast as it can;
//                      nicsim sends them at `burst_rate` (default 100 Mbit/s). The bursts are
//                      silent in flent (runner silent_process): no series
//   rrul_var           bidir_streams N streams, stream i (0-based) labelled "i (MARK)" with
//                      markings[i] (default CS0): "TCP upload::0 (CS0)", "TCP download::0
//                      (CS0)", "Ping (ms)::UDP 0 (CS0)", and "Ping (ms)::ICMP" (rrul_var.conf)
//   rtt_fair           per server HOSTS[i] (up to four, as flent's HOSTS[:4]) one upload and one
//                      download labelled BE1, BE2, BK1, BK2 (CS0, CS0, CS1, CS1) and an ICMP ping
//                      ICMP1..4: "TCP upload BE1 s1", "Ping (ms) ICMP1 s1" (rtt_fair.conf,
//                      rtt_fair.inc). Needs at least two servers (a network's hosts); with
//                      two or three they are repeated in order up to four, as flent fills
//                      its HOSTS up to four (min_host_count(4))

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/config/traffic_plan.h"

namespace nicsim::config {

struct FlentTestInfo {
  std::string_view name;
  std::string_view description;
  bool streams = false;  // takes a number of streams (tcp_nup, tcp_ndown, rrul_var)
  // TOTAL_LENGTH is LENGTH (voip, bursts: no idle phases); else LENGTH + 2 x DELAY
  bool total_is_length = false;
  bool servers = false;  // runs against several servers (rtt_fair: flent's HOSTS)
};
// Every preset, in the order `nicsim flent-test --list` prints them.
const std::vector<FlentTestInfo>& flent_tests();
const FlentTestInfo* find_flent_test(std::string_view name);
// The test's TOTAL_LENGTH for flent's --length and --delay (an unknown test as the others).
Duration flent_total_length(std::string_view name, Duration length, Duration delay);
// flent's markings parameter ("CS0,CS1,EF" or DSCP numbers 0..63, comma-separated) -> DSCPs;
// throws std::invalid_argument naming the bad element.
std::vector<uint8_t> parse_flent_markings(std::string_view list);
std::string format_flent_markings(const std::vector<uint8_t>& dscps);
// bursts.conf's defaults: burst_length 5 s, burst_psize 500 B.
inline constexpr Duration kFlentBurstLength = Duration::s(5);
inline constexpr int64_t kFlentBurstSize = 500;
// rtt_fair's servers: flent takes HOSTS[:4].
inline constexpr size_t kRttFairMaxServers = 4;

// One flent test between host `client` (flent's local end) and host `server` (its HOST).
struct FlentTestPlan {
  std::string test;
  size_t client = 0;
  size_t server = 1;
  Duration start;
  Duration load_start;                          // start + DELAY
  Duration load_end;                            // + LENGTH
  Duration end;                                 // + DELAY
  Duration probe_interval = Duration::ms(200);  // STEP_SIZE
  int64_t streams = 1;                          // tcp_nup / tcp_ndown / rrul_var
  // Each direction's default congestion control (the sender's tcp.cc) and ECN mode; the cc
  // duels name their own.
  std::string client_cc;
  std::string server_cc;
  const TcpConfig* client_tcp = nullptr;
  const TcpConfig* server_tcp = nullptr;
  // rtt_fair: flent's HOSTS, in order (at least two, at most four); `server` is ignored
  std::vector<size_t> servers{};
  // rrul_var: stream i's DSCP (flent -t markings=CS0,CS1,...); CS0 beyond the list
  std::vector<uint8_t> markings{};
  Rate udp_rate = Rate::mbit(1);      // udp_flood: flent -t udp_bandwidth (iperf 2's -b default)
  int64_t udp_size = 1470;            // udp_flood: flent -t udp_pktsize (iperf 2's -l default)
  Rate burst_rate = Rate::mbit(100);  // bursts: the bursts' send rate (see above)
};

// Adds the test's flows, probes, floods and phases to `plan`. Throws std::invalid_argument for
// a test that is not a preset, and for rtt_fair with fewer than two servers.
void add_flent_test(TrafficPlan& plan, const FlentTestPlan& t);

}  // namespace nicsim::config

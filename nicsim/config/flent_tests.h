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
//
// Not expressible yet (no per-interval series for floods, voice and transfers): udp_flood,
// voip, bursts, rrul_var, rtt_fair (needs the networks' topologies).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/config/traffic_plan.h"

namespace nicsim::config {

struct FlentTestInfo {
  std::string_view name;
  std::string_view description;
  bool streams = false;  // takes a number of streams (tcp_nup, tcp_ndown)
};
// Every preset, in the order `nicsim flent-test --list` prints them.
const std::vector<FlentTestInfo>& flent_tests();
const FlentTestInfo* find_flent_test(std::string_view name);

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
  int64_t streams = 1;                          // tcp_nup / tcp_ndown
  // Each direction's default congestion control (the sender's tcp.cc) and ECN mode; the cc
  // duels name their own.
  std::string client_cc;
  std::string server_cc;
  const TcpConfig* client_tcp = nullptr;
  const TcpConfig* server_tcp = nullptr;
};

// Adds the test's flows, probes and phases to `plan`. Throws std::invalid_argument for a test
// that is not a preset.
void add_flent_test(TrafficPlan& plan, const FlentTestPlan& t);

}  // namespace nicsim::config

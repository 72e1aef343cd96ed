#pragma once
// tcp::Params — one host's TCP configuration (scenario table "tcp"), shared by TcpSender and
// TcpReceiver. Defaults are Linux's (sysctl defaults / include/net/tcp.h constants, cited per
// field); era-dependent defaults name the era. validate() reports the offending key as written
// in a scenario file ("tcp.mss", "tcp.cc", ...).

#include <cstdint>
#include <optional>
#include <string_view>

#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"

namespace nicsim::sim::tcp {

enum class CcAlgorithm : uint8_t {
  kNewReno,  // RFC 5681 + RFC 6582 (Linux "reno")
  kCubic,    // RFC 9438 (Linux default since 2.6.19)
  kBbr,      // BBR v1 (Linux tcp_bbr.c; nicsim/sim/tcp/bbr.h)
  kDctcp,    // DCTCP (RFC 8257, Linux tcp_dctcp.c; nicsim/sim/tcp/dctcp.h)
  kPrague,   // TCP Prague (L4STeam tcp_prague.c; nicsim/sim/tcp/prague.h)
};

// How the receiver feeds CE marks back (set by the back-end from the flow; both ends agree).
enum class EcnFeedback : uint8_t {
  kClassic,   // RFC 3168: ECE on every ACK from a CE mark until a CWR segment arrives
  kDctcp,     // RFC 8257 §3.2 (Linux dctcp_ece_ack_update): ECE = CE of the last segment,
              // an immediate ACK whenever that state changes
  kAccurate,  // AccECN (draft-ietf-tcpm-accurate-ecn): a cumulative CE packet count per ACK
};

// How the RTO is bounded below (the estimator itself is RFC 6298 in both cases).
enum class RtoStyle : uint8_t {
  kRfc6298,  // RTO = max(rto_min, SRTT + max(G, 4·RTTVAR))              (RFC 6298 (2.4))
  kLinux,    // RTO = SRTT + max(4·RTTVAR, rto_min)  (tcp_rtt_estimator keeps rttvar >= rto_min)
};

std::string_view to_string(CcAlgorithm cc);
// The congestion control's Linux name ("reno", "cubic", "bbr": tcp_congestion_control and
// scenario files); cc_from_name is its inverse (nullopt for an unknown name).
std::string_view cc_name(CcAlgorithm cc);
std::optional<CcAlgorithm> cc_from_name(std::string_view name);
std::string_view to_string(RtoStyle s);
// Scalable congestion controls (RFC 9331 §4.3): they need ECN and react to every CE mark.
bool is_scalable(CcAlgorithm cc);

struct Params {
  // --- segments and options ---
  int64_t mss = 1448;      // "tcp.mss": 1500 MTU − 20 IP − 20 TCP − 12 timestamp option
  bool sack = true;        // "tcp.sack": net.ipv4.tcp_sack = 1
  bool timestamps = true;  // "tcp.timestamps": net.ipv4.tcp_timestamps = 1
  bool ecn = false;        // "tcp.ecn": tcp_ecn = 2 (accept, never request) → an initiator is off
  bool ect1 = false;       // data marked ECT(1) (L4S, RFC 9331) instead of ECT(0) (RFC 3168)
  EcnFeedback ecn_feedback = EcnFeedback::kClassic;  // the receiver's CE feedback

  // --- congestion control ---
  CcAlgorithm cc = CcAlgorithm::kCubic;  // "tcp.cc": tcp_congestion_control = cubic
  int64_t initial_cwnd = 10;             // "tcp.initial_cwnd": TCP_INIT_CWND 10 (RFC 6928)
  int64_t reordering = 3;                // "tcp.reordering": DupThresh, tcp_reordering = 3
  bool prr = true;                       // "tcp.prr": RFC 6937 PRR-SSRB (Linux since 3.2)
  double cubic_beta = 0.7;               // "tcp.cubic_beta": RFC 9438 β_cubic (Linux 717/1024)
  double cubic_c = 0.4;                  // "tcp.cubic_c": RFC 9438 C (Linux bic_scale 41)
  bool cubic_fast_convergence = true;    // "tcp.cubic_fast_convergence": fast_convergence = 1
  bool cubic_tcp_friendliness = true;    // "tcp.cubic_tcp_friendliness": tcp_friendliness = 1
  bool hystart = true;                   // "tcp.hystart": tcp_cubic hystart = 1
  int64_t hystart_low_window = 16;       // "tcp.hystart_low_window": hystart_low_window = 16
  Duration hystart_ack_delta = Duration::ms(2);  // "tcp.hystart_ack_delta": 2 ms

  // --- retransmission timer (RFC 6298) ---
  Duration rto_initial = Duration::s(1);  // "tcp.rto_initial": TCP_TIMEOUT_INIT (RFC 6298 2.1)
  Duration rto_min = Duration::ms(200);   // "tcp.rto_min": TCP_RTO_MIN
  Duration rto_max = Duration::s(120);    // "tcp.rto_max": TCP_RTO_MAX
  Duration clock_granularity = Duration::ms(1);  // "tcp.clock_granularity": G (1 jiffy, HZ=1000)
  RtoStyle rto_style = RtoStyle::kLinux;         // "tcp.rto_style"

  // --- buffers and windows ---
  int64_t wmem = 4194304;  // "tcp.wmem": send buffer, payload bytes; tcp_wmem[2] (autotuned max)
  int64_t rmem = 131072;   // "tcp.rmem": initial receive buffer, tcp_rmem[1]
  int64_t rmem_max = 6291456;   // "tcp.rmem_max": autotuning limit, tcp_rmem[2]
  bool moderate_rcvbuf = true;  // "tcp.moderate_rcvbuf": receive-buffer autotuning, sysctl = 1
  int64_t adv_win_scale = 1;    // "tcp.adv_win_scale": window = space − space/2^n (1 until 6.5)
  int64_t init_rcv_wnd = 10;    // "tcp.init_rcv_wnd": TCP_DEFAULT_INIT_RCVWND segments
  Rate app_read_rate;           // "tcp.app_read_rate": receiving application; 0 = reads instantly

  // --- ACK generation ---
  Duration delayed_ack = Duration::ms(40);  // "tcp.delayed_ack": TCP_DELACK_MIN = TCP_ATO_MIN
  int64_t max_quickacks = 16;               // "tcp.max_quickacks": TCP_MAX_QUICKACKS

  // --- below the socket: TSQ, GSO/TSO autosizing, pacing ---
  bool tsq = true;                       // "tcp.tsq": TCP Small Queues (Linux >= 3.6)
  int64_t limit_output_bytes = 1048576;  // "tcp.limit_output_bytes": 131072 in 3.6–4.x (2014
                                         // seed era), 262144 in some 4.x, 1048576 since 5.0
  int64_t skb_truesize_overhead = 768;   // "tcp.skb_truesize_overhead": truesize ≈ payload + this
                                         // (sk_buff + skb_shared_info + MAX_TCP_HEADER, approx.)
  bool gso = true;                       // "tcp.gso": GSO/TSO super-packets (NETIF_F_GSO default)
  int64_t gso_max_size = 65536;          // "tcp.gso_max_size": GSO_MAX_SIZE
  int64_t gso_max_segs = 65535;          // "tcp.gso_max_segs": GSO_MAX_SEGS
  int64_t min_tso_segs = 2;              // "tcp.min_tso_segs": tcp_min_tso_segs = 2
  int64_t pacing_shift = 10;             // "tcp.pacing_shift": sk_pacing_shift (≈1 ms of data)
  bool pacing = false;                   // "tcp.pacing": space emissions at the pacing rate
  int64_t pacing_ss_ratio = 200;         // "tcp.pacing_ss_ratio": tcp_pacing_ss_ratio (4.4+;
                                         // 3.12–4.3: 200 in both phases)
  int64_t pacing_ca_ratio = 120;         // "tcp.pacing_ca_ratio": tcp_pacing_ca_ratio (4.4+)

  // --- set by the back-end, not scenario keys ---
  bool fq_pacing = false;  // the host's qdisc is fq: sk_pacing_status = SK_PACING_FQ, so the
                           // sender stamps each unit's EDT (Segment::tstamp) and fq waits
  uint64_t seed = 0;       // per-flow seed (BBR's random gain-cycle phase)

  // --- workload (sender) ---
  int64_t bytes_to_send = 0;  // "tcp.bytes": bulk data to send; 0 = unlimited (iperf3 -t)

  Validation validate() const;
};

// MAX_TCP_HEADER (approx. on x86-64): headroom Linux reserves, subtracted from gso_max_size by
// tcp_tso_autosize.
inline constexpr int64_t kMaxTcpHeader = 320;

}  // namespace nicsim::sim::tcp

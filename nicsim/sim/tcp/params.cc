#include "nicsim/sim/tcp/params.h"

#include <string>

namespace nicsim::sim::tcp {

std::string_view to_string(CcAlgorithm cc) {
  switch (cc) {
    case CcAlgorithm::kNewReno:
      return "newreno";
    case CcAlgorithm::kCubic:
      return "cubic";
    case CcAlgorithm::kBbr:
      return "bbr";
    case CcAlgorithm::kDctcp:
      return "dctcp";
    case CcAlgorithm::kPrague:
      return "prague";
  }
  return "?";
}

std::string_view cc_name(CcAlgorithm cc) {
  return cc == CcAlgorithm::kNewReno ? "reno" : to_string(cc);
}

std::optional<CcAlgorithm> cc_from_name(std::string_view name) {
  for (CcAlgorithm cc : {CcAlgorithm::kNewReno, CcAlgorithm::kCubic, CcAlgorithm::kBbr,
                         CcAlgorithm::kDctcp, CcAlgorithm::kPrague}) {
    if (cc_name(cc) == name) {
      return cc;
    }
  }
  return std::nullopt;
}

bool is_scalable(CcAlgorithm cc) { return cc == CcAlgorithm::kDctcp || cc == CcAlgorithm::kPrague; }

std::string_view to_string(RtoStyle s) {
  switch (s) {
    case RtoStyle::kRfc6298:
      return "rfc6298";
    case RtoStyle::kLinux:
      return "linux";
  }
  return "?";
}

namespace {

ParamError err(std::string key, std::string msg) {
  return ParamError{std::move(key), std::move(msg)};
}

Validation at_least(const char* key, int64_t v, int64_t min) {
  if (v < min) {
    return err(key, "must be >= " + std::to_string(min) + ", got " + std::to_string(v));
  }
  return std::nullopt;
}

Validation in_range(const char* key, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return err(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                        std::to_string(v));
  }
  return std::nullopt;
}

Validation positive(const char* key, Duration d) {
  if (d <= Duration::zero()) {
    return err(key, "must be > 0, got " + std::to_string(d.count_ns()) + " ns");
  }
  return std::nullopt;
}

}  // namespace

Validation Params::validate() const {
  // MSS: at least TCP_MIN_MSS (88), at most what fits a 64 KB IP datagram.
  if (auto e = in_range("tcp.mss", mss, 88, 65495)) return e;
  if (!cc_from_name(cc_name(cc))) {
    return err("tcp.cc", "unknown congestion control");
  }
  if (is_scalable(cc) && !ecn) {
    // TCP_CONG_NEEDS_ECN: Linux would fall back to Reno without ECN; the model refuses instead.
    return err("tcp.ecn", std::string(cc_name(cc)) + " needs ECN");
  }
  if (ecn_feedback == EcnFeedback::kAccurate && cc != CcAlgorithm::kPrague) {
    return err("tcp.ecn", "accurate ECN feedback is modelled for prague only");
  }
  if (auto e = in_range("tcp.initial_cwnd", initial_cwnd, 1, 1000)) return e;
  if (auto e = in_range("tcp.reordering", reordering, 1, 300)) return e;
  if (!(cubic_beta > 0.0 && cubic_beta < 1.0)) {
    return err("tcp.cubic_beta", "must be in (0, 1), got " + std::to_string(cubic_beta));
  }
  if (!(cubic_c > 0.0 && cubic_c <= 100.0)) {
    return err("tcp.cubic_c", "must be in (0, 100], got " + std::to_string(cubic_c));
  }
  if (auto e = at_least("tcp.hystart_low_window", hystart_low_window, 2)) return e;
  if (auto e = positive("tcp.hystart_ack_delta", hystart_ack_delta)) return e;
  if (auto e = positive("tcp.rto_initial", rto_initial)) return e;
  if (auto e = positive("tcp.rto_min", rto_min)) return e;
  if (auto e = positive("tcp.rto_max", rto_max)) return e;
  if (rto_min > rto_max) {
    return err("tcp.rto_min", "must be <= tcp.rto_max");
  }
  if (clock_granularity < Duration::zero()) {
    return err("tcp.clock_granularity", "must be >= 0");
  }
  if (rto_style != RtoStyle::kLinux && rto_style != RtoStyle::kRfc6298) {
    return err("tcp.rto_style", "unknown RTO style");
  }
  if (auto e = at_least("tcp.wmem", wmem, 2 * mss)) return e;
  // At least 4 segments, so that a non-zero window is never smaller than one segment.
  if (auto e = at_least("tcp.rmem", rmem, 4 * mss)) return e;
  if (auto e = at_least("tcp.rmem_max", rmem_max, rmem)) return e;
  if (auto e = in_range("tcp.adv_win_scale", adv_win_scale, 0, 31)) return e;
  if (auto e = in_range("tcp.init_rcv_wnd", init_rcv_wnd, 1, 65535)) return e;
  if (auto e = positive("tcp.delayed_ack", delayed_ack)) return e;
  if (auto e = in_range("tcp.max_quickacks", max_quickacks, 0, 1000)) return e;
  if (auto e = at_least("tcp.limit_output_bytes", limit_output_bytes, 1)) return e;
  if (auto e = at_least("tcp.skb_truesize_overhead", skb_truesize_overhead, 0)) return e;
  if (auto e = in_range("tcp.gso_max_size", gso_max_size, kMaxTcpHeader + 1 + mss, 1 << 30)) {
    return e;
  }
  if (auto e = in_range("tcp.gso_max_segs", gso_max_segs, 1, 65535)) return e;
  if (auto e = in_range("tcp.min_tso_segs", min_tso_segs, 1, 65535)) return e;
  if (auto e = in_range("tcp.pacing_shift", pacing_shift, 0, 31)) return e;
  if (auto e = in_range("tcp.pacing_ss_ratio", pacing_ss_ratio, 1, 10000)) return e;
  if (auto e = in_range("tcp.pacing_ca_ratio", pacing_ca_ratio, 1, 10000)) return e;
  if (auto e = at_least("tcp.bytes", bytes_to_send, 0)) return e;
  return std::nullopt;
}

}  // namespace nicsim::sim::tcp

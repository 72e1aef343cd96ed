#pragma once
// RttEstimator — RFC 6298 smoothed RTT, RTT variance and retransmission timeout, with Karn's
// exponential backoff, in integer nanoseconds.
//
//   first sample R:   SRTT = R, RTTVAR = R/2                                 (RFC 6298 (2.2))
//   later sample R':  RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R'|, then
//                     SRTT = 7/8·SRTT + 1/8·R'                              (RFC 6298 (2.3))
//   RTO (kRfc6298) = max(rto_min, SRTT + max(G, K·RTTVAR)), K = 4           (RFC 6298 (2.4))
//   RTO (kLinux)   = SRTT + max(K·RTTVAR, rto_min): Linux keeps its variance term (rttvar_us,
//                    already ×4) at least tcp_rto_min (tcp_rtt_estimator / __tcp_set_rto), so
//                    with sub-ms RTTs the RTO is rto_min + SRTT rather than rto_min.
//   both are capped at rto_max (RFC 6298 (2.5) allows a maximum; Linux TCP_RTO_MAX = 120 s).
//   Before any sample RTO = rto_initial (1 s, RFC 6298 (2.1)).
//   Backoff: each expiry doubles the timeout (RFC 6298 (5.5)); a valid sample clears the
//   backoff (Linux tcp_ack_update_rtt: "only reset backoff on valid RTT measurement").
// Karn's rule (no samples from retransmitted segments) is the caller's job (TcpSender).
// Deviation: Linux's estimator keeps mdev_max per RTT and lowers rttvar only once per RTT;
// here RTTVAR is RFC 6298's. Integer division truncates (sub-ns remainders are dropped).

#include <cstdint>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/params.h"

namespace nicsim::sim::tcp {

class RttEstimator {
 public:
  struct Config {
    Duration rto_initial = Duration::s(1);
    Duration rto_min = Duration::ms(200);
    Duration rto_max = Duration::s(120);
    Duration granularity = Duration::ms(1);
    RtoStyle style = RtoStyle::kLinux;
  };
  static constexpr int64_t kK = 4;  // RFC 6298 K

  RttEstimator() : RttEstimator(Config{}) {}
  explicit RttEstimator(const Config& c) : cfg_(c) {}

  // Feeds one RTT measurement (values below 1 ns are taken as 1 ns, as Linux's m = max(m, 1)).
  void sample(Duration r) {
    if (r < Duration::ns(1)) {
      r = Duration::ns(1);
    }
    if (!has_sample_) {
      srtt_ = r;
      rttvar_ = r / 2;
      has_sample_ = true;
    } else {
      const Duration err = srtt_ > r ? srtt_ - r : r - srtt_;
      rttvar_ = (rttvar_ * 3 + err) / 4;
      srtt_ = (srtt_ * 7 + r) / 8;
    }
    if (r < min_rtt_ || min_rtt_ == Duration::zero()) {
      min_rtt_ = r;
    }
    latest_ = r;
    backoff_ = 0;
    ++samples_;
  }

  // The timeout without backoff.
  Duration base_rto() const {
    if (!has_sample_) {
      return min(cfg_.rto_initial, cfg_.rto_max);
    }
    Duration rto;
    if (cfg_.style == RtoStyle::kRfc6298) {
      rto = srtt_ + max(cfg_.granularity, rttvar_ * kK);
      rto = max(rto, cfg_.rto_min);
    } else {
      rto = srtt_ + max(rttvar_ * kK, cfg_.rto_min);
    }
    return min(rto, cfg_.rto_max);
  }
  // The timeout to arm now: base_rto() << backoff, capped at rto_max.
  Duration rto() const {
    Duration rto = base_rto();
    for (uint32_t i = 0; i < backoff_ && rto < cfg_.rto_max; ++i) {
      rto = rto * 2;
    }
    return min(rto, cfg_.rto_max);
  }

  void back_off() { ++backoff_; }  // RFC 6298 (5.5)
  void reset_backoff() { backoff_ = 0; }
  // RFC 6298 (5.7): after a SYN timeout with no sample, use 3 s once data transfer begins.
  void fall_back_to(Duration rto_initial) { cfg_.rto_initial = rto_initial; }

  bool has_sample() const { return has_sample_; }
  Duration srtt() const { return srtt_; }
  Duration rttvar() const { return rttvar_; }
  Duration min_rtt() const { return min_rtt_; }
  Duration latest() const { return latest_; }
  uint32_t backoff() const { return backoff_; }
  uint64_t samples() const { return samples_; }
  const Config& config() const { return cfg_; }

 private:
  Config cfg_;
  bool has_sample_ = false;
  Duration srtt_;
  Duration rttvar_;
  Duration min_rtt_;
  Duration latest_;
  uint32_t backoff_ = 0;
  uint64_t samples_ = 0;
};

}  // namespace nicsim::sim::tcp

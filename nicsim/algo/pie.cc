#include "nicsim/algo/pie.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {
namespace {

std::string ns_string(Duration d) { return std::to_string(d.count_ns()) + " ns"; }

// Queue delay that makes the controller add 2 % per update on top of the PI terms
// (sch_pie.c: "Tune drop probability to increase quickly for high delays (>= 250 ms)").
constexpr PschedTime kPieHighDelay = psched_time(250_ms);

}  // namespace

void pie_vars_init(PieVars& vars) {
  vars.burst_time = psched_time(150_ms);  // RFC 8033 §5.4: MAX_BURST 150 ms
  vars.dq_tstamp = kPieDtimeInvalid;
  vars.accu_prob = 0;
  vars.dq_count = kPieDqCountInvalid;
  vars.avg_dq_rate = 0;
}

Validation validate_pie_params(Duration target, Duration tupdate, int64_t alpha, int64_t beta,
                               int64_t mtu) {
  // tc passes target in microseconds as a u32 and tupdate likewise.
  constexpr Duration kMaxU32Us = Duration::us(int64_t{UINT32_MAX});
  if (target <= Duration::zero() || target > kMaxU32Us) {
    return ParamError{"target", "must be in (0, 4294.967295 s], got " + ns_string(target)};
  }
  if (tupdate < 1_us || tupdate > kMaxU32Us) {
    return ParamError{"tupdate", "must be in [1 us, 4294.967295 s], got " + ns_string(tupdate)};
  }
  // tc-pie(8): alpha and beta are 0..32 in 1/16 units (0..2).
  if (alpha < 0 || alpha > 32) {
    return ParamError{"alpha", "must be in 0..32 (1/16 units), got " + std::to_string(alpha)};
  }
  if (beta < 0 || beta > 32) {
    return ParamError{"beta", "must be in 0..32 (1/16 units), got " + std::to_string(beta)};
  }
  if (mtu < 1 || mtu > int64_t{UINT32_MAX}) {
    return ParamError{"mtu", "must be in 1..4294967295 bytes, got " + std::to_string(mtu)};
  }
  return std::nullopt;
}

PieConfig make_pie_config(Duration target, int64_t alpha, int64_t beta, bool ecn, bool bytemode,
                          bool dq_rate_estimator, int64_t mtu) {
  PieConfig c;
  c.target = psched_time(target);
  c.alpha = static_cast<uint32_t>(alpha);
  c.beta = static_cast<uint32_t>(beta);
  c.ecn = ecn;
  c.bytemode = bytemode;
  c.dq_rate_estimator = dq_rate_estimator;
  c.mtu = static_cast<uint32_t>(mtu);
  return c;
}

bool pie_drop_early(const PieConfig& config, PieVars& vars, uint32_t backlog, uint32_t packet_size,
                    AqmRandom& rng) {
  // RFC 8033 §4.1: no early drop while burst allowance is left.
  if (vars.burst_time > 0) {
    return false;
  }
  // Delay under half the target and a low probability: the queue is not building up.
  if (vars.qdelay < config.target / 2 && vars.prob < kPieMaxProb / 5) {
    return false;
  }
  // Fewer than two MTU-sized packets queued (RED's min_th).
  if (backlog < 2 * config.mtu) {
    return false;
  }
  uint64_t local_prob = vars.prob;
  if (config.bytemode && packet_size <= config.mtu) {
    local_prob = uint64_t{packet_size} * (vars.prob / config.mtu);  // small packets drop less
  }
  // RFC 8033 §5.1 derandomisation.
  if (local_prob == 0) {
    vars.accu_prob = 0;
  } else {
    vars.accu_prob += local_prob;
  }
  if (vars.accu_prob < (kPieMaxProb / 100) * 85) {
    return false;
  }
  if (vars.accu_prob >= (kPieMaxProb / 2) * 17) {
    return true;
  }
  if ((rng.next_u64() >> 8) < local_prob) {
    vars.accu_prob = 0;
    return true;
  }
  return false;
}

void pie_process_dequeue(const PieConfig& config, PieVars& vars, PschedTime now,
                         PschedTime enqueued, uint32_t len, uint32_t backlog) {
  uint32_t dtime = 0;  // psched ticks, truncated to 32 bits like the kernel's u32
  if (!config.dq_rate_estimator) {
    // Timestamp mode (Linux default, RFC 8033 §5.3 alternative): the head's sojourn.
    vars.qdelay = now - enqueued;
    if (vars.dq_tstamp != kPieDtimeInvalid) {
      dtime = static_cast<uint32_t>(now - vars.dq_tstamp);
    }
    vars.dq_tstamp = now;
    if (backlog == 0) {
      vars.qdelay = 0;
    }
    if (dtime == 0) {
      return;
    }
  } else {
    // Drain-rate estimation (RFC 8033 §4.2): measure over QUEUE_THRESHOLD bytes, only while
    // at least that much is queued.
    if (backlog >= kPieQueueThreshold && vars.dq_count == kPieDqCountInvalid) {
      vars.dq_tstamp = now;
      vars.dq_count = 0;
    }
    if (vars.dq_count == kPieDqCountInvalid) {
      return;
    }
    vars.dq_count += len;
    if (vars.dq_count < kPieQueueThreshold) {
      return;
    }
    const uint32_t count = static_cast<uint32_t>(vars.dq_count << kPieScale);
    dtime = static_cast<uint32_t>(now - vars.dq_tstamp);
    if (dtime == 0) {
      return;
    }
    const uint32_t rate = count / dtime;
    // EWMA with weight 1/8 (RFC 8033 §4.2).
    vars.avg_dq_rate =
        vars.avg_dq_rate == 0 ? rate : (vars.avg_dq_rate - (vars.avg_dq_rate >> 3)) + (rate >> 3);
    if (backlog < kPieQueueThreshold) {
      vars.dq_count = kPieDqCountInvalid;  // keep the last rate until the queue builds again
    } else {
      vars.dq_count = 0;
      vars.dq_tstamp = now;
    }
  }
  // Burst allowance (RFC 8033 §4.4) runs down by the time between measurements.
  if (vars.burst_time > 0) {
    vars.burst_time = vars.burst_time > dtime ? vars.burst_time - dtime : 0;
  }
}

uint64_t pie_scaled_gain(uint32_t gain_sixteenths, uint64_t prob) {
  // The gain in MAX_PROB per psched tick of delay error: gain/16 per second.
  uint64_t g = (uint64_t{gain_sixteenths} * (kPieMaxProb / kPschedTicksPerSec)) >> 4;
  if (prob < kPieMaxProb / 10) {
    g >>= 1;
    for (uint32_t power = 100; prob < kPieMaxProb / power && power <= 1'000'000; power *= 10) {
      g >>= 2;
    }
  }
  return g;
}

void pie_calculate_probability(const PieConfig& config, PieVars& vars, uint32_t backlog) {
  PschedTime qdelay = 0;
  PschedTime qdelay_old = 0;
  if (config.dq_rate_estimator) {
    qdelay_old = vars.qdelay;
    vars.qdelay_old = vars.qdelay;
    // Little's law (RFC 8033 §4.2); the u32 shift wraps for backlogs >= 16 MiB, as in Linux.
    qdelay = vars.avg_dq_rate > 0 ? (backlog << kPieScale) / vars.avg_dq_rate : 0;
  } else {
    qdelay = vars.qdelay;
    qdelay_old = vars.qdelay_old;
  }
  // A zero delay with a backlog: the queue is too small to measure; do not decay below.
  bool update_prob = !(qdelay == 0 && backlog != 0);

  const uint64_t alpha = pie_scaled_gain(config.alpha, vars.prob);
  const uint64_t beta = pie_scaled_gain(config.beta, vars.prob);
  // delta = alpha (qdelay - target) + beta (qdelay - qdelay_old), in unsigned 64-bit
  // arithmetic read as signed, exactly as the kernel's s64 += u64 * u64.
  int64_t delta =
      static_cast<int64_t>(alpha * (qdelay - config.target) + beta * (qdelay - qdelay_old));
  // At or above 10 %, raise by at most 2 % per update (RFC 8033 §5.2).
  if (delta > static_cast<int64_t>(kPieMaxProb / 50) && vars.prob >= kPieMaxProb / 10) {
    delta = static_cast<int64_t>((kPieMaxProb / 100) * 2);
  }
  // Above 250 ms, add 2 % more.
  if (qdelay > kPieHighDelay) {
    delta += static_cast<int64_t>(kPieMaxProb / 50);
  }
  const uint64_t oldprob = vars.prob;
  vars.prob += static_cast<uint64_t>(delta);
  if (delta > 0) {
    // The only cap: on u64 overflow prob is clamped to MAX_PROB (it may exceed MAX_PROB
    // otherwise; pie_drop_early then always drops).
    if (vars.prob < oldprob) {
      vars.prob = kPieMaxProb;
      update_prob = false;
    }
  } else if (vars.prob > oldprob) {
    vars.prob = 0;  // underflow
  }
  // Two updates with no delay: decay by 1/64 (RFC 8033 §4.3).
  if (qdelay == 0 && qdelay_old == 0 && update_prob) {
    vars.prob -= vars.prob / 64;
  }
  vars.qdelay = qdelay;
  vars.backlog_old = backlog;
  // Restart the measurement and the burst allowance once the queue has been idle (low delay
  // twice, p = 0, and in estimator mode a rate measured).
  if (vars.qdelay < config.target / 2 && vars.qdelay_old < config.target / 2 && vars.prob == 0 &&
      (!config.dq_rate_estimator || vars.avg_dq_rate > 0)) {
    pie_vars_init(vars);
  }
  if (!config.dq_rate_estimator) {
    vars.qdelay_old = qdelay;
  }
}

Validation Pie::Params::validate() const {
  if (limit < 1 || limit > int64_t{UINT32_MAX}) {
    return ParamError{"limit", "must be in 1..4294967295 packets, got " + std::to_string(limit)};
  }
  return validate_pie_params(target, tupdate, alpha, beta, mtu);
}

Pie::Pie(const Params& params)
    : params_(require_valid(params)),
      config_(make_pie_config(params.target, params.alpha, params.beta, params.ecn, params.bytemode,
                              params.dq_rate_estimator, params.mtu)),
      rng_(params.seed) {}

void Pie::catch_up_timer(Time now) {
  timer_.run(now, kPieFirstUpdate, params_.tupdate, [this](Time) {
    const PieVars before = vars_;
    pie_calculate_probability(config_, vars_, pie_backlog());
    return !(vars_ == before);
  });
}

}  // namespace nicsim::algo

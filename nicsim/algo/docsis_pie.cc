#include "nicsim/algo/docsis_pie.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {
namespace {

std::string ns_string(Duration d) { return std::to_string(d.count_ns()) + " ns"; }

// A DOCSIS Ethernet frame with its 18 header and CRC bytes (the model's MAX_FRAME_SIZE floor
// for tiny rates): the buffer holds at least two.
constexpr int64_t kMinBuffer = 2 * 1518;
constexpr int64_t kBufferWithoutRate = 1000 * 1514;

int64_t buffer_of(const DocsisPie::Params& p) {
  if (p.limit > 0) {
    return p.limit;
  }
  if (p.rate.is_zero()) {
    return kBufferWithoutRate;
  }
  return std::max<int64_t>(kMinBuffer,
                           static_cast<int64_t>(p.rate.bytes_in(DocsisPie::kDefaultTargetBuffer)));
}

}  // namespace

double docsis_pie_tuned_step(double p, double drop_prob) {
  struct Row {
    double below;
    double divisor;
  };
  static constexpr Row kTable[] = {{1e-6, 2048}, {1e-5, 512}, {1e-4, 128}, {1e-3, 32},
                                   {1e-2, 8},    {1e-1, 2},   {1, 0.5},    {10, 0.125}};
  for (const Row& r : kTable) {
    if (drop_prob < r.below) {
      return p / r.divisor;
    }
  }
  return p / 0.03125;
}

Validation DocsisPie::Params::validate() const {
  if (limit < 0) {
    return ParamError{"limit",
                      "must be >= 0 bytes (0 = 100 ms at rate), got " + std::to_string(limit)};
  }
  if (limit > 0 && limit < kMinBuffer) {
    return ParamError{
        "limit", "must hold two 1518-byte frames (>= 3036 bytes), got " + std::to_string(limit)};
  }
  if (target <= Duration::zero()) {
    return ParamError{"target", "must be > 0, got " + ns_string(target)};
  }
  if (interval < 1_us || interval > 1_s) {
    return ParamError{"interval", "must be in [1 us, 1 s], got " + ns_string(interval)};
  }
  if (!(alpha >= 0 && alpha <= 100)) {
    return ParamError{"alpha", "must be in [0, 100] per second, got " + std::to_string(alpha)};
  }
  if (!(beta >= 0 && beta <= 100)) {
    return ParamError{"beta", "must be in [0, 100] per second, got " + std::to_string(beta)};
  }
  if (max_burst < Duration::zero()) {
    return ParamError{"max_burst", "must be >= 0, got " + ns_string(max_burst)};
  }
  if (burst_reset_timeout < interval) {
    return ParamError{"burst_reset_timeout",
                      "must be at least one interval, got " + ns_string(burst_reset_timeout)};
  }
  if (mean_packet_size < kMinPacketSize || mean_packet_size > 65535) {
    return ParamError{"mean_packet_size",
                      "must be in 64..65535 bytes, got " + std::to_string(mean_packet_size)};
  }
  return std::nullopt;
}

DocsisPie::DocsisPie(const Params& params)
    : params_(require_valid(params)), buffer_bytes_(buffer_of(params)), rng_(params.seed) {}

Duration DocsisPie::estimated_delay(Time now) const {
  if (fifo_.size() == 0) {
    return Duration::zero();
  }
  if (params_.rate.is_zero()) {
    return now - fifo_.front().enqueue_ts;
  }
  // cm-net-device.cc ExpectedDelay without a peak-rate token bucket: byte_length / MSR.
  return params_.rate.transmit_time(backlog_bytes_);
}

void DocsisPie::update(Duration qdelay) { update_changed_state(qdelay); }

bool DocsisPie::update_changed_state(Duration qdelay) {
  const double prob_before = drop_prob_;
  const Duration old_before = qdelay_old_;
  const Duration allowance_before = burst_allowance_;
  const BurstState state_before = burst_state_;
  const int64_t reset_before = burst_reset_;

  const Duration target = params_.target;
  if (burst_allowance_ > Duration::zero()) {
    drop_prob_ = 0;
  } else {
    double p = params_.alpha * (qdelay - target).to_seconds() +
               params_.beta * (qdelay - qdelay_old_).to_seconds();
    p = docsis_pie_tuned_step(p, drop_prob_);
    if (drop_prob_ >= 0.1 && p > 0.02) {
      p = 0.02;  // at most +2 % per update once p >= 10 %
    }
    drop_prob_ += p;
    if (qdelay < kLatencyLow && qdelay_old_ < kLatencyLow) {
      drop_prob_ *= 0.98;  // exponential decay while the queue stays short
    } else if (qdelay > kLatencyHigh) {
      drop_prob_ += 0.02;
    }
    drop_prob_ = std::clamp(drop_prob_, 0.0,
                            kProbLow * static_cast<double>(params_.mean_packet_size) /
                                static_cast<double>(kMinPacketSize));
  }
  burst_allowance_ = std::max(Duration::zero(), burst_allowance_ - params_.interval);

  // Burst detection: quiet updates (both delays under target/2, no drop probability, no
  // allowance) end a protected burst, and enough of them end the burst.
  const int64_t reset_limit = params_.burst_reset_timeout / params_.interval;
  const bool quiet = qdelay < target / 2 && qdelay_old_ < target / 2 && drop_prob_ == 0 &&
                     burst_allowance_ == Duration::zero();
  if (quiet && burst_state_ == BurstState::kInBurstProtecting) {
    burst_state_ = BurstState::kInBurst;
    burst_reset_ = 0;
  } else if (quiet && burst_state_ == BurstState::kInBurst) {
    if (++burst_reset_ > reset_limit) {
      burst_reset_ = 0;
      burst_state_ = BurstState::kNoBurst;
    }
  } else if (!quiet && burst_state_ == BurstState::kInBurst) {
    burst_reset_ = 0;
  }
  qdelay_old_ = qdelay;
  return drop_prob_ != prob_before || qdelay_old_ != old_before ||
         burst_allowance_ != allowance_before || burst_state_ != state_before ||
         burst_reset_ != reset_before;
}

bool DocsisPie::drop_early(uint32_t packet_size) {
  if (burst_allowance_ > Duration::zero()) {
    return false;
  }
  if (drop_prob_ == 0) {
    accu_prob_ = 0;
  }
  if (burst_state_ == BurstState::kNoBurst) {
    // No AQM until the queue holds a third of its buffer: the start of a burst.
    if (backlog_bytes_ < static_cast<uint64_t>(buffer_bytes_ / 3)) {
      return false;
    }
    burst_state_ = BurstState::kInBurst;
  }
  // Per-packet probability scaled by size: small packets (ACKs, VoIP) drop less.
  const double p =
      std::min(drop_prob_ * packet_size / static_cast<double>(params_.mean_packet_size), kProbLow);
  accu_prob_ += p;
  if (qdelay_old_ < params_.target / 2 && drop_prob_ < 0.2) {
    return false;
  }
  if (backlog_bytes_ <= static_cast<uint64_t>(2 * params_.mean_packet_size)) {
    return false;
  }
  bool drop = true;
  if (accu_prob_ < kProbLow) {
    drop = false;  // derandomisation: not too soon after the last drop
  } else if (accu_prob_ < kProbHigh) {
    const double u = static_cast<double>(rng_.next_u64() >> 11) * 0x1.0p-53;  // [0, 1)
    drop = u <= p;
  }
  if (!drop) {
    return false;
  }
  accu_prob_ = 0;
  if (burst_state_ == BurstState::kInBurst) {
    // The first drop of a burst arms the burst allowance: no more drops for MAX_BURST.
    burst_state_ = BurstState::kInBurstProtecting;
    burst_allowance_ = params_.max_burst;
    ++stats_.bursts;
  }
  return true;
}

Verdict DocsisPie::enqueue(Packet&& p, Time now) {
  run_timer(now);
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  DropReason reason = DropReason::kAqm;
  bool dropped = drop_early(p.len);
  if (dropped) {
    ++stats_.early_drops;
  } else if (backlog_bytes_ + p.len > static_cast<uint64_t>(buffer_bytes_)) {
    dropped = true;
    reason = DropReason::kQueueFull;
    ++stats_.overlimit;
  }
  if (dropped) {
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, reason);
    }
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;
  ++stats_.packets_in;
  backlog_bytes_ += p.len;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  fifo_.push_back(std::move(p));
  return Verdict::kQueued;
}

std::optional<Packet> DocsisPie::dequeue(Time now) {
  run_timer(now);
  if (fifo_.size() == 0) {
    return std::nullopt;
  }
  Packet p = fifo_.pop_front();
  backlog_bytes_ -= p.len;
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return std::optional<Packet>(std::move(p));
}

const Packet* DocsisPie::peek(Time now) {
  run_timer(now);
  return fifo_.size() > 0 ? &fifo_.front() : nullptr;
}

}  // namespace nicsim::algo

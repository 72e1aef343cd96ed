#include "nicsim/algo/tbf.h"

#include <algorithm>
#include <limits>
#include <string>

namespace nicsim::algo {
namespace {

constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Bytes `r` carries in `d`, rounded down, without overflow (d >= 0).
unsigned __int128 bytes_in_wide(Rate r, Duration d) {
  return static_cast<unsigned __int128>(d.count_ns()) * r.bits_per_sec() / 8'000'000'000u;
}

// tc q_tbf.c: limit = rate * latency + burst, and with a peak rate
// min(that, peakrate * latency + mtu). tc computes in double from bytes/s and microseconds and
// truncates to u32; we compute exactly from bit/s and ns and round down.
unsigned __int128 limit_from_latency(const Tbf::Params& p) {
  unsigned __int128 lim = bytes_in_wide(p.rate, p.latency) + static_cast<uint64_t>(p.burst);
  if (!p.peakrate.is_zero()) {
    const unsigned __int128 lim2 =
        bytes_in_wide(p.peakrate, p.latency) + static_cast<uint64_t>(p.mtu);
    lim = std::min(lim, lim2);
  }
  return lim;
}

std::string bps(Rate r) { return std::to_string(r.bits_per_sec()) + " bit/s"; }

}  // namespace

Validation Tbf::Params::validate() const {
  // The kernel keeps rates in bytes/s; below 8 bit/s that is 0. The lower bound also keeps
  // l2t(burst) (burst <= 2^32 - 1) below 2^62 ns, so token arithmetic cannot overflow.
  if (rate.bits_per_sec() < 8) {
    return ParamError{"rate", "required, must be >= 8 bit/s (1 byte/s), got " + bps(rate)};
  }
  if (burst < 1) {
    return ParamError{"burst", "required, must be >= 1 byte, got " + std::to_string(burst)};
  }
  if (burst > kU32Max) {
    return ParamError{"burst", "must be <= 4294967295 bytes (TCA_TBF_BURST is u32), got " +
                                   std::to_string(burst)};
  }
  if (limit < 0) {
    return ParamError{"limit", "must be >= 0 bytes, got " + std::to_string(limit)};
  }
  if (latency < Duration::zero()) {
    return ParamError{"latency", "must be >= 0, got " + std::to_string(latency.count_ns()) + " ns"};
  }
  if (limit > 0 && latency > Duration::zero()) {
    return ParamError{"latency", "give either limit or latency, not both (tc rejects both)"};
  }
  if (limit == 0 && latency == Duration::zero()) {
    return ParamError{"limit", "either limit (bytes) or latency is required (as in tc)"};
  }
  if (mtu < 0) {
    return ParamError{"mtu", "must be >= 0 bytes, got " + std::to_string(mtu)};
  }
  if (!peakrate.is_zero()) {
    if (peakrate <= rate) {
      return ParamError{"peakrate", "must be > rate (" + bps(rate) + "), got " + bps(peakrate)};
    }
    if (mtu < 1) {
      return ParamError{"mtu",
                        "required (>= 1 byte) when peakrate is given, got " + std::to_string(mtu)};
    }
    if (mtu > kU32Max) {
      return ParamError{
          "mtu", "must be <= 4294967295 bytes (TCA_TBF_PBURST is u32), got " + std::to_string(mtu)};
    }
  }
  if (dev_mtu < 0) {
    return ParamError{"dev_mtu",
                      "must be >= 0 bytes (0 disables the check), got " + std::to_string(dev_mtu)};
  }
  if (dev_mtu > 0) {
    const std::string why =
        " bytes is below dev_mtu (" + std::to_string(dev_mtu) +
        "): every longer packet would be dropped as too big (Linux accepts this with the "
        "warning \"burst is lower than device mtu\"); raise it or set dev_mtu = 0";
    if (burst < dev_mtu) {
      return ParamError{"burst", std::to_string(burst) + why};
    }
    if (!peakrate.is_zero() && mtu < dev_mtu) {
      return ParamError{"mtu", std::to_string(mtu) + why};
    }
  }
  if (limit == 0 && limit_from_latency(*this) > static_cast<unsigned __int128>(kInt64Max)) {
    return ParamError{"latency", "the byte limit derived from latency overflows"};
  }
  return std::nullopt;
}

uint64_t Tbf::Params::effective_limit() const {
  if (limit > 0) {
    return static_cast<uint64_t>(limit);
  }
  return static_cast<uint64_t>(limit_from_latency(*this));
}

Tbf::Tbf(const Params& params)
    : params_(require_valid(params)),
      has_peak_(!params.peakrate.is_zero()),
      buffer_(params.rate.transmit_time(static_cast<Bytes>(params.burst))),
      mtu_time_(has_peak_ ? params.peakrate.transmit_time(static_cast<Bytes>(params.mtu))
                          : Duration::zero()),
      max_size_(has_peak_ ? static_cast<uint64_t>(std::min(params.burst, params.mtu))
                          : static_cast<uint64_t>(params.burst)),
      limit_(params.effective_limit()),
      tokens_(buffer_),
      ptokens_(mtu_time_),
      t_c_(Time::zero()) {}

Verdict Tbf::enqueue(Packet&& p, Time now) {
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  DropReason why = DropReason::kQueueFull;
  bool drop = false;
  if (p.len > max_size_) {
    drop = true;
    why = DropReason::kTooBig;
    ++stats_.dropped_too_big;
  } else if (backlog_bytes_ + p.len > limit_) {
    drop = true;  // bfifo: accept while backlog + len <= limit
  }
  if (drop) {
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, why);
    }
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;
  backlog_bytes_ += p.len;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  queue_.push_back(std::move(p));
  return Verdict::kQueued;
}

}  // namespace nicsim::algo

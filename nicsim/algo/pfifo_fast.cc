#include "nicsim/algo/pfifo_fast.h"

#include <string>

namespace nicsim::algo {

Validation PfifoFast::Params::validate() const {
  if (limit < 1) {
    return ParamError{"limit",
                      "must be >= 1 packet (txqueuelen; Linux rejects a zero-length "
                      "pfifo_fast ring), got " +
                          std::to_string(limit)};
  }
  for (size_t i = 0; i < priomap.size(); ++i) {
    if (priomap[i] < 0 || priomap[i] >= kBands) {
      return ParamError{"priomap", "entry " + std::to_string(i) + " must be a band 0.." +
                                       std::to_string(kBands - 1) + ", got " +
                                       std::to_string(priomap[i])};
    }
  }
  return std::nullopt;
}

PfifoFast::PfifoFast(const Params& params)
    : params_(require_valid(params)), limit_(static_cast<uint64_t>(params.limit)) {
  for (size_t i = 0; i < band_of_.size(); ++i) {
    band_of_[i] = static_cast<uint8_t>(params_.priomap[i]);
  }
}

Verdict PfifoFast::enqueue(Packet&& p, Time now) {
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  const int band = band_of(p.priority);
  const uint64_t occupancy = params_.per_band_limit ? bands_[band].size() : backlog_packets_;
  if (occupancy >= limit_) {
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, DropReason::kQueueFull);
    }
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;
  ++backlog_packets_;
  backlog_bytes_ += p.len;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  bands_[band].push_back(std::move(p));
  return Verdict::kQueued;
}

}  // namespace nicsim::algo

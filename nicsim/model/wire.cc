#include "nicsim/model/wire.h"

#include <string>

namespace nicsim::model {

Validation Wire::Params::validate() const {
  if (rate.is_zero()) {
    return ParamError{"rate", "must be > 0"};
  }
  if (delay < Duration::zero()) {
    return ParamError{"delay", "must be >= 0"};
  }
  if (!(loss >= 0.0 && loss < 1.0)) {
    return ParamError{"loss", "must be in [0, 1), got " + std::to_string(loss)};
  }
  if (jitter < Duration::zero()) {
    return ParamError{"jitter", "must be >= 0"};
  }
  return std::nullopt;
}

Wire::Wire(const Params& params) : params_(require_valid(params)), rng_(params.seed) {}

Time Wire::free_at(Time now) const { return max(max(now, busy_until_), paused_until_); }

void Wire::pause_until(Time until) { paused_until_ = max(paused_until_, until); }

Wire::TxTiming Wire::transmit(Packet&& frame, Time now) {
  const Time start = free_at(now);
  if (start > busy_until_) {
    // The link went idle (or was paused): a new busy period starts here.
    if (paused_until_ > max(now, busy_until_)) {
      stats_.paused += paused_until_ - max(now, busy_until_);
    }
    busy_start_ = start;
    busy_bytes_ = 0;
  }
  const uint32_t wire_bytes = params_.overhead.wire_bytes(frame.len);
  busy_bytes_ += wire_bytes;
  const Time end = busy_start_ + params_.rate.transmit_time(busy_bytes_);
  stats_.busy += end - start;
  busy_until_ = end;
  ++stats_.frames;
  stats_.bytes += frame.len;
  stats_.wire_bytes += wire_bytes;
  frame.stamp(Stage::kWireStart, start);
  if (observer_ != nullptr) {
    observer_->on_enqueue(start, frame);  // the frame enters the wire (first bit)
  }

  if (params_.loss > 0.0 && std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < params_.loss) {
    ++stats_.lost;
    if (observer_ != nullptr) {
      observer_->on_drop(end, frame, DropReason::kWireLoss);
    }
    return {start, end};
  }
  Duration extra = Duration::zero();
  if (params_.jitter > Duration::zero()) {
    extra =
        Duration::ns(std::uniform_int_distribution<int64_t>(0, params_.jitter.count_ns())(rng_));
  }
  const Time arrival = max(end + params_.delay + extra, last_arrival_);
  last_arrival_ = arrival;
  frame.stamp(Stage::kWireEnd, arrival);
  arrivals_.push_back(Arrival{arrival, std::move(frame)});
  return {start, end};
}

std::optional<Time> Wire::next_ready() const {
  return arrivals_.empty() ? std::nullopt : std::optional<Time>(arrivals_.front().at);
}

std::optional<Packet> Wire::pop_arrived(Time now) {
  if (arrivals_.empty() || arrivals_.front().at > now) {
    return std::nullopt;
  }
  Packet p = std::move(arrivals_.front().frame);
  arrivals_.pop_front();
  ++stats_.delivered;
  return p;
}

}  // namespace nicsim::model

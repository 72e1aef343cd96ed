#include "nicsim/algo/fifo.h"

namespace nicsim::algo {

Validation Fifo::Params::validate() const {
  if (limit_packets < 0) {
    return ParamError{"limit", "packet limit must be >= 0, got " + std::to_string(limit_packets)};
  }
  if (limit_bytes < 0) {
    return ParamError{"limit_bytes", "byte limit must be >= 0, got " + std::to_string(limit_bytes)};
  }
  if (limit_packets == 0 && limit_bytes == 0) {
    return ParamError{"limit", "a FIFO needs a packet limit or a byte limit (both are 0)"};
  }
  return std::nullopt;
}

Fifo::Fifo(const Params& params) : params_(require_valid(params)) {}

bool Fifo::has_room_for(uint32_t len) const {
  if (params_.limit_packets > 0 && queue_.size() >= static_cast<uint64_t>(params_.limit_packets)) {
    return false;
  }
  if (params_.limit_bytes > 0 &&
      backlog_bytes_ + len > static_cast<uint64_t>(params_.limit_bytes)) {
    return false;
  }
  return true;
}

Verdict Fifo::enqueue(Packet&& p, Time now) {
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  if (!has_room_for(p.len)) {
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, DropReason::kQueueFull);
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

std::optional<Packet> Fifo::dequeue(Time now) {
  if (queue_.empty()) {
    return std::nullopt;
  }
  Packet p = queue_.pop_front();
  backlog_bytes_ -= p.len;
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return p;
}

const Packet* Fifo::peek(Time /*now*/) const { return queue_.empty() ? nullptr : &queue_.front(); }

std::optional<Time> Fifo::next_ready(Time now) const {
  return queue_.empty() ? std::nullopt : std::optional<Time>(now);
}

}  // namespace nicsim::algo

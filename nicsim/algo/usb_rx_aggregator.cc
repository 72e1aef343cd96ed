#include "nicsim/algo/usb_rx_aggregator.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {

Validation UsbRxAggregator::Params::validate() const {
  if (max_packet_bytes <= 0) {
    return ParamError{"max_packet_bytes", "must be > 0, got " + std::to_string(max_packet_bytes)};
  }
  if (burst_cap_bytes < max_packet_bytes) {
    return ParamError{"burst_cap", "must be at least one bulk packet (" +
                                       std::to_string(max_packet_bytes) + " bytes), got " +
                                       std::to_string(burst_cap_bytes)};
  }
  if (hold_time < Duration::zero()) {
    return ParamError{"bulk_in_delay", "must be >= 0"};
  }
  if (packets_per_microframe < 1 || packets_per_microframe > 13) {
    return ParamError{"packets_per_microframe",
                      "must be 1..13 (USB 2.0 high-speed bulk), got " +
                          std::to_string(packets_per_microframe)};
  }
  if (fifo_bytes <= 0) {
    return ParamError{"rx_fifo", "must be > 0 bytes, got " + std::to_string(fifo_bytes)};
  }
  if (pause_high_bytes < 0 || pause_low_bytes < 0 || pause_high_bytes > fifo_bytes ||
      (pause_high_bytes > 0 && pause_low_bytes >= pause_high_bytes)) {
    return ParamError{"pause_high",
                      "flow-control watermarks must satisfy 0 <= low < high <= rx_fifo"};
  }
  return std::nullopt;
}

UsbRxAggregator::UsbRxAggregator(const Params& params)
    : params_(require_valid(params)),
      slot_(Duration::ns(125'000 / params.packets_per_microframe)) {}

// Which waiting frames fit in the rest of the current transfer. Cached: the FIFO walk runs
// once per state change, not on every next_ready() query.
const UsbRxAggregator::Fit& UsbRxAggregator::fit() const {
  if (!fit_dirty_) {
    return fit_;
  }
  fit_dirty_ = false;
  fit_ = Fit{};
  if (fifo_.empty()) {
    return fit_;
  }
  if (params_.mode == Mode::kSingleFrame) {
    fit_.sendable = fifo_.front().usb_len - head_sent_;
    return fit_;
  }
  // Bytes of the frames (from the head) that fit in the rest of this transfer. The bytes of
  // frames already moved into the transfer are current_.bytes.
  const uint64_t cap = static_cast<uint64_t>(params_.burst_cap_bytes);
  uint64_t total = current_.bytes;
  uint64_t sendable = 0;
  for (const Frame& f : fifo_) {
    if (total + f.usb_len > cap) {
      fit_.all_fit = false;
      break;
    }
    total += f.usb_len;
    sendable += f.usb_len;
  }
  fit_.sendable = sendable - head_sent_;
  return fit_;
}

uint64_t UsbRxAggregator::sendable_bytes() const { return fit().sendable; }

// True unless a frame is waiting that cannot join this transfer (so waiting is pointless).
bool UsbRxAggregator::next_frame_fits() const { return fit().all_fit; }

void UsbRxAggregator::update_pause() {
  if (params_.pause_high_bytes == 0) {
    return;
  }
  if (!paused_ && fifo_bytes_ >= static_cast<uint64_t>(params_.pause_high_bytes)) {
    paused_ = true;
    ++stats_.pause_on;
  } else if (paused_ && fifo_bytes_ <= static_cast<uint64_t>(params_.pause_low_bytes)) {
    paused_ = false;
  }
}

bool UsbRxAggregator::frame_arrived(Packet&& frame, uint32_t usb_len, Time now) {
  advance(now);
  ++stats_.frames_in;
  stats_.frame_bytes_in += usb_len;
  const bool too_big = usb_len > static_cast<uint64_t>(params_.burst_cap_bytes) &&
                       params_.mode == Mode::kMultiFrame;
  if (too_big || fifo_bytes_ + usb_len > static_cast<uint64_t>(params_.fifo_bytes)) {
    ++stats_.fifo_drops;
    stats_.fifo_drop_bytes += usb_len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, frame, too_big ? DropReason::kTooBig : DropReason::kRingFull);
    }
    return false;
  }
  const uint64_t mps = static_cast<uint64_t>(params_.max_packet_bytes);
  const bool was_short = sendable_bytes() < mps;
  frame.enqueue_ts = now;
  fifo_.push_back(Frame{std::move(frame), usb_len});
  fifo_bytes_ += usb_len;
  fit_dirty_ = true;
  stats_.max_fifo_bytes = std::max(stats_.max_fifo_bytes, fifo_bytes_);
  update_pause();
  // A frame arriving while less than a full packet was waiting starts the bulk-in delay
  // (a lone sub-512-byte frame at an empty FIFO waits for the timer, §4.2).
  if (was_short && !hold_deadline_) {
    hold_deadline_ = now + params_.hold_time;
  }
  return true;
}

void UsbRxAggregator::recycle(std::vector<Packet>&& frames) {
  frames.clear();
  if (spare_frames_.size() < 8) {
    spare_frames_.push_back(std::move(frames));
  }
}

void UsbRxAggregator::post_transfer(Time now) {
  advance(now);
  ++posted_;
}

// Moves frames whose last byte has been sent from the FIFO into the current transfer.
void UsbRxAggregator::move_sent_frames() {
  while (!fifo_.empty() && head_sent_ >= fifo_.front().usb_len) {
    head_sent_ -= fifo_.front().usb_len;
    fifo_bytes_ -= fifo_.front().usb_len;
    current_.bytes += fifo_.front().usb_len;
    current_.frames.push_back(std::move(fifo_.front().packet));
    fifo_.pop_front();
  }
  update_pause();
}

void UsbRxAggregator::send_packet(Time at, uint32_t bytes) {
  if (!active_) {
    active_ = true;
    current_.first_packet = at;
  }
  bus_free_ = at + slot_;
  ++current_.usb_packets;
  ++stats_.usb_packets;
  head_sent_ += bytes;
  fit_dirty_ = true;
  move_sent_frames();
}

void UsbRxAggregator::finish_transfer(Time end, bool zlp, bool by_cap) {
  current_.completed = end;
  current_.zlp = zlp;
  ++stats_.transfers;
  if (zlp) {
    ++stats_.zlps;
  } else if (by_cap) {
    ++stats_.cap_ends;
  } else {
    ++stats_.short_packets;
  }
  completed_.push_back(std::move(current_));
  current_ = Transfer{};
  if (!spare_frames_.empty()) {
    current_.frames = std::move(spare_frames_.back());
    spare_frames_.pop_back();
  }
  active_ = false;
  fit_dirty_ = true;
  --posted_;
  // Data left over (a frame that did not fit) starts a new shortfall period.
  hold_deadline_.reset();
  if (sendable_bytes() < static_cast<uint64_t>(params_.max_packet_bytes) && !fifo_.empty()) {
    hold_deadline_ = end + params_.hold_time;
  }
}

// The time of the device's next action, or nullopt if it waits for an input.
std::optional<Time> UsbRxAggregator::next_action() const {
  if (posted_ == 0) {
    return std::nullopt;
  }
  const Time slot_start = max(bus_free_, now_);
  const uint64_t mps = static_cast<uint64_t>(params_.max_packet_bytes);
  const uint64_t s = sendable_bytes();
  if (params_.mode == Mode::kSingleFrame) {
    return (s > 0 || zlp_pending_) ? std::optional<Time>(slot_start) : std::nullopt;
  }
  if (s >= mps) {
    return slot_start;
  }
  if (s == 0 && !active_) {
    return std::nullopt;
  }
  if (!next_frame_fits() || params_.hold_time == Duration::zero() || !hold_deadline_) {
    return slot_start;
  }
  return max(slot_start, *hold_deadline_);
}

void UsbRxAggregator::act(Time at) {
  const uint64_t mps = static_cast<uint64_t>(params_.max_packet_bytes);
  const uint64_t s = sendable_bytes();
  if (params_.mode == Mode::kSingleFrame) {
    if (zlp_pending_) {
      zlp_pending_ = false;
      send_packet(at, 0);
      finish_transfer(bus_free_, /*zlp=*/true, /*by_cap=*/false);
    } else if (s > mps) {
      send_packet(at, static_cast<uint32_t>(mps));
    } else if (s == mps) {
      send_packet(at, static_cast<uint32_t>(mps));  // frame ends on a packet boundary
      zlp_pending_ = true;
    } else {
      send_packet(at, static_cast<uint32_t>(s));
      finish_transfer(bus_free_, /*zlp=*/false, /*by_cap=*/false);
    }
    return;
  }
  if (s >= mps) {
    send_packet(at, static_cast<uint32_t>(mps));
    if (current_.bytes + head_sent_ >= static_cast<uint64_t>(params_.burst_cap_bytes)) {
      finish_transfer(bus_free_, /*zlp=*/false, /*by_cap=*/true);
      return;
    }
    // A full packet restarts the bulk-in delay once less than a full packet is left.
    hold_deadline_.reset();
    if (sendable_bytes() < mps) {
      hold_deadline_ = bus_free_ + params_.hold_time;
    }
    return;
  }
  const bool by_timer = next_frame_fits() && params_.hold_time > Duration::zero();
  if (by_timer) {
    ++stats_.hold_expiries;
  }
  if (s > 0) {
    send_packet(at, static_cast<uint32_t>(s));
    finish_transfer(bus_free_, /*zlp=*/false, /*by_cap=*/false);
  } else {
    send_packet(at, 0);
    finish_transfer(bus_free_, /*zlp=*/true, /*by_cap=*/false);
  }
}

void UsbRxAggregator::advance(Time now) {
  while (true) {
    const std::optional<Time> t = next_action();
    if (!t || *t > now) {
      break;
    }
    now_ = *t;
    act(*t);
  }
  if (now > now_) {
    now_ = now;
  }
}

std::optional<Time> UsbRxAggregator::next_ready() const {
  std::optional<Time> t = next_action();
  if (!completed_.empty()) {
    const Time c = max(completed_.front().completed, now_);
    t = t ? min(*t, c) : c;
  }
  return t;
}

std::optional<UsbRxAggregator::Transfer> UsbRxAggregator::pop_completed(Time now) {
  advance(now);
  if (completed_.empty() || completed_.front().completed > now_) {
    return std::nullopt;
  }
  Transfer t = std::move(completed_.front());
  completed_.pop_front();
  stats_.frames_out += t.frames.size();
  stats_.frame_bytes_out += t.bytes;
  return t;
}

}  // namespace nicsim::algo

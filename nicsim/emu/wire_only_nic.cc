#include "nicsim/emu/wire_only_nic.h"

namespace nicsim::emu {

Validation WireOnlyNic::Params::validate() const {
  if (txqueuelen < 1) {
    return ParamError{"txqueuelen", "must be >= 1, got " + std::to_string(txqueuelen)};
  }
  return std::nullopt;
}

WireOnlyNic::WireOnlyNic(const Params& params) : params_(require_valid(params)) {}

void WireOnlyNic::attach(model::Wire* out, model::Wire* in, model::Cpu* /*cpu*/,
                         model::NicSink* sink) {
  out_ = out;
  in_ = in;
  sink_ = sink;
}

Verdict WireOnlyNic::send(Packet&& p, Time now) {
  ++stats_.sent;
  if (static_cast<int64_t>(fifo_.size()) >= params_.txqueuelen) {
    ++stats_.dropped;
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;
  p.stamp(Stage::kQdiscIn, now);
  fifo_bytes_ += p.len;
  fifo_.push_back(std::move(p));
  return Verdict::kQueued;
}

std::optional<Time> WireOnlyNic::next_event() const {
  std::optional<Time> t = in_->next_ready();
  if (!fifo_.empty()) {
    const Time start = out_->free_at(fifo_.front().enqueue_ts);
    t = t ? min(*t, start) : start;
  }
  return t;
}

void WireOnlyNic::advance(Time now) {
  while (!fifo_.empty()) {
    const Time offered = fifo_.front().enqueue_ts;
    if (out_->free_at(offered) > now) {
      break;
    }
    Packet p = fifo_.pop_front();
    fifo_bytes_ -= p.len;
    const model::TxRelease release = model::release_of(p);
    tx_bytes_ += p.len;
    ++stats_.transmitted;
    const model::Wire::TxTiming timing = out_->transmit(std::move(p), offered);
    sink_->tx_released(release, timing.last_bit);
  }
  while (const std::optional<Time> at = in_->next_ready()) {
    if (*at > now) {
      break;
    }
    std::optional<Packet> p = in_->pop_arrived(now);
    ++stats_.delivered;
    rx_bytes_ += p->len;
    p->stamp(Stage::kRxDeliver, *at);
    sink_->deliver(std::move(*p), *at);
  }
}

model::NicCounters WireOnlyNic::counters() const {
  model::NicCounters c;
  c.tx_packets = stats_.transmitted;
  c.tx_bytes = tx_bytes_;
  c.tx_qdisc_drops = stats_.dropped;
  c.rx_packets = stats_.delivered;
  c.rx_bytes = rx_bytes_;
  return c;
}

model::NicQueueSample WireOnlyNic::queue_sample() const {
  model::NicQueueSample s;
  s.qdisc_packets = fifo_.size();
  s.qdisc_bytes = fifo_bytes_;
  return s;
}

std::string WireOnlyNic::describe() const {
  return "wire only (no NIC model yet): drop-tail FIFO of " + std::to_string(params_.txqueuelen) +
         " frames ahead of the wire";
}

}  // namespace nicsim::emu

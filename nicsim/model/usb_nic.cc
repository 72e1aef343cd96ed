#include "nicsim/model/usb_nic.h"

#include "nicsim/core/gso.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "nicsim/model/ethernet.h"

namespace nicsim::model {

using algo::UsbRxAggregator;

namespace {

constexpr uint32_t round_up4(uint32_t v) { return (v + 3u) & ~3u; }

// Bulk-IN bytes of one frame (docs/mechanisms §4.4: status word, RXDOFF, frame, FCS, COE word,
// padded to 4; §5.2: 4-byte header, frame padded to even).
uint32_t rx_usb_len_for(UsbNic::Chip chip, bool rx_csum, uint32_t len) {
  if (chip == UsbNic::Chip::kSmsc95xx) {
    return round_up4(
        static_cast<uint32_t>(algo::Smsc95xxRx::kStatusLen + algo::Smsc95xxRx::kRxDataOffset) +
        len + static_cast<uint32_t>(algo::Smsc95xxRx::kFcsLen) +
        (rx_csum ? static_cast<uint32_t>(algo::Smsc95xxRx::kCoeLen) : 0u));
  }
  return static_cast<uint32_t>(algo::AsixRx::append_size(len));
}

// Bulk-OUT bytes of a frame alone in its transfer (§4.5: TX_CMD_A + TX_CMD_B; §5.3: header,
// dummy header when header + frame is a multiple of 512).
uint32_t tx_usb_len_alone(UsbNic::Chip chip, uint32_t len) {
  if (chip == UsbNic::Chip::kSmsc95xx) {
    return len + static_cast<uint32_t>(algo::Smsc95xxTx::kOverhead);
  }
  const uint32_t n = static_cast<uint32_t>(algo::AsixTx::kHeaderLen) + len;
  return n % 512 == 0 ? n + static_cast<uint32_t>(algo::AsixTx::kHeaderLen) : n;
}

bool within(const std::vector<uint8_t>& buf, const uint8_t* p) {
  const std::less_equal<const uint8_t*> le;
  return !buf.empty() && le(buf.data(), p) && le(p, buf.data() + buf.size());
}

}  // namespace

UsbRxAggregator::Params smsc95xx_rx_aggregation(bool turbo_mode) {
  UsbRxAggregator::Params p;
  p.mode = turbo_mode ? UsbRxAggregator::Mode::kMultiFrame : UsbRxAggregator::Mode::kSingleFrame;
  p.burst_cap_bytes = 18'944;           // DEFAULT_HS_BURST_CAP_SIZE (unused by SEF)
  p.hold_time = Duration::ns(136'533);  // BULK_IN_DLY 0x2000 × 16.667 ns
  p.max_packet_bytes = 512;
  p.packets_per_microframe = 13;
  p.fifo_bytes = 20 * 1024;        // LAN950x 20 KB RX FIFO
  p.pause_high_bytes = 0xF8 * 64;  // AFC_CFG 0x00F830A1: 15,872
  p.pause_low_bytes = 0x30 * 64;   //                      3,072
  return p;
}

UsbRxAggregator::Params asix_rx_aggregation(int64_t max_frame_burst) {
  UsbRxAggregator::Params p;
  p.mode = UsbRxAggregator::Mode::kMultiFrame;
  p.burst_cap_bytes = max_frame_burst;
  p.hold_time = Duration::zero();
  p.max_packet_bytes = 512;
  p.packets_per_microframe = 13;
  p.fifo_bytes = 20 * 1024;  // AX88772: 20 KB RX SRAM
  p.pause_high_bytes = 0;
  p.pause_low_bytes = 0;
  return p;
}

UsbNic::Params UsbNic::linux_smsc95xx(bool turbo_mode) {
  Params p;
  p.chip = Chip::kSmsc95xx;
  p.driver = Driver::kLinux;
  p.rx_aggregation = smsc95xx_rx_aggregation(turbo_mode);
  p.rx_urb_bytes = turbo_mode ? 18'944 : 2048;  // MAX_SINGLE_PACKET_SIZE when turbo is off
  p.rx_transfers = usbnet_rx_qlen(p.rx_urb_bytes);
  p.tx_qlen = usbnet_tx_qlen(1500 + 14 + 12);
  p.tx_frames_per_transfer = 1;
  return p;
}

UsbNic::Params UsbNic::freebsd_smsc95xx(bool rx_packet_batching) {
  Params p = linux_smsc95xx(rx_packet_batching);
  p.driver = Driver::kFreeBsd;
  p.rx_transfers = 1;
  p.rx_urb_bytes = 20'480;  // if_smsc RX usb_xfer buffer
  p.tx_frames_per_transfer = 16;
  // No PAUSE: uether attaches the PHY with mii_attach(..., flags 0) — no MIIF_DOPAUSE, so pause
  // is never advertised or resolved — and smsc_miibus_statchg clears AFC_CFG's flow-control
  // bits (0xF) in full duplex unless IFM_ETH_TXPAUSE was negotiated. The AFC watermarks are
  // written but the chip never sends a PAUSE frame: an RX FIFO overflow drops frames.
  p.rx_aggregation.pause_high_bytes = 0;
  p.rx_aggregation.pause_low_bytes = 0;
  return p;
}

UsbNic::Params UsbNic::linux_asix(int64_t rx_urb_size) {
  Params p;
  p.chip = Chip::kAsix;
  p.driver = Driver::kLinux;
  p.rx_aggregation = asix_rx_aggregation(rx_urb_size);  // MFB chosen to match rx_urb_size
  p.rx_urb_bytes = rx_urb_size;
  p.rx_transfers = usbnet_rx_qlen(rx_urb_size);
  p.tx_qlen = usbnet_tx_qlen(1514);
  p.tx_frames_per_transfer = 1;
  p.rx_csum = false;
  return p;
}

UsbNic::Params UsbNic::freebsd_axe(int64_t max_frame_burst) {
  Params p = linux_asix(max_frame_burst);
  p.driver = Driver::kFreeBsd;
  p.rx_transfers = 1;
  p.rx_urb_bytes = std::max<int64_t>(16'384, max_frame_burst);  // AXE_BULK_BUF_SIZE
  p.tx_frames_per_transfer = 16;
  return p;
}

Validation UsbNic::Params::validate() const {
  if (chip != Chip::kSmsc95xx && chip != Chip::kAsix) {
    return ParamError{"chip", "must be smsc95xx or asix"};
  }
  if (!algo::usb_framing::valid(driver)) {
    return ParamError{"driver", "must be linux_usbnet or freebsd"};
  }
  if (auto e = rx_aggregation.validate()) {
    return e;
  }
  if (rx_transfers < 1) {
    return ParamError{"rx_transfers", "must be >= 1, got " + std::to_string(rx_transfers)};
  }
  const int64_t rx_max = rx_usb_len_for(chip, rx_csum, kEthernetMaxFrame);
  if (rx_urb_bytes < std::max<int64_t>(512, rx_max)) {
    return ParamError{"rx_urb_size", "must hold a full-size frame (" + std::to_string(rx_max) +
                                         " bytes on the USB), got " + std::to_string(rx_urb_bytes)};
  }
  if (rx_aggregation.mode == UsbRxAggregator::Mode::kMultiFrame &&
      rx_aggregation.burst_cap_bytes < rx_max) {
    return ParamError{"burst_cap", "must hold a full-size frame (" + std::to_string(rx_max) +
                                       " bytes on the USB), got " +
                                       std::to_string(rx_aggregation.burst_cap_bytes)};
  }
  if (tx_qlen < 1) {
    return ParamError{"tx_qlen", "must be >= 1, got " + std::to_string(tx_qlen)};
  }
  if (tx_frames_per_transfer < 1 || tx_frames_per_transfer > 256) {
    return ParamError{"tx_frames_per_transfer",
                      "must be 1..256, got " + std::to_string(tx_frames_per_transfer)};
  }
  if (driver == Driver::kLinux && tx_frames_per_transfer != 1) {
    return ParamError{"tx_frames_per_transfer",
                      "must be 1 for linux_usbnet (one URB per skb), got " +
                          std::to_string(tx_frames_per_transfer)};
  }
  if (log2_irq_thresh < 0 || log2_irq_thresh > 6) {
    return ParamError{"log2_irq_thresh", "must be 0..6 (EHCI threshold 1..64 microframes), got " +
                                             std::to_string(log2_irq_thresh)};
  }
  if (irq_latency < Duration::zero()) {
    return ParamError{"irq_latency", "must be >= 0"};
  }
  if (bulk_out_packets_per_microframe < 1 || bulk_out_packets_per_microframe > 13) {
    return ParamError{"bulk_out_packets_per_microframe",
                      "must be 1..13 (USB 2.0 high-speed bulk), got " +
                          std::to_string(bulk_out_packets_per_microframe)};
  }
  const int64_t tx_max = tx_usb_len_alone(chip, kEthernetMaxFrame) + 4;
  if (tx_fifo_bytes < tx_max) {
    return ParamError{"tx_fifo", "must hold a full-size frame (" + std::to_string(tx_max) +
                                     " bytes), got " + std::to_string(tx_fifo_bytes)};
  }
  if (pause_time < Duration::zero() ||
      (rx_aggregation.pause_high_bytes > 0 && pause_time <= Duration::zero())) {
    return ParamError{"pause_time", "must be > 0 when flow control (pause_high) is on"};
  }
  return std::nullopt;
}

namespace {
UsbRxAggregator::Params effective_rx(const UsbNic::Params& p) {
  UsbRxAggregator::Params a = p.rx_aggregation;
  // The device never sends more than the host's buffer holds (§5.1: the host's bulk-IN
  // buffer must be at least the burst size; a transfer also ends when it is full).
  a.burst_cap_bytes = std::min(a.burst_cap_bytes, p.rx_urb_bytes);
  return a;
}
}  // namespace

UsbNic::UsbNic(const Params& params, AnyQueue qdisc, const CpuCosts& costs)
    : params_(require_valid(params)),
      costs_(require_valid(costs)),
      qdisc_(std::move(qdisc)),
      agg_(effective_rx(params)),
      smsc_rx_({.driver = params.driver, .rx_coe = params.rx_csum, .compute_fcs = false}),
      smsc_tx_({.tx_coe = params.driver == Driver::kLinux}),
      asix_rx_({.driver = params.driver, .mtu = 1500}),
      asix_tx_({.max_packet = kMaxPacket}),
      rx_copies_(params.driver == Driver::kFreeBsd || params.chip == Chip::kAsix),
      slot_out_(Duration::ns(125'000 / params.bulk_out_packets_per_microframe)),
      irq_period_(Duration::us(125) * (int64_t{1} << params.log2_irq_thresh)) {
  if (!qdisc_) {
    throw InvalidParams(ParamError{"qdisc", "a qdisc is required"});
  }
}

void UsbNic::attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) {
  out_ = out;
  in_ = in;
  cpu_ = cpu;
  sink_ = sink;
  qdisc_drops_.set_sink(sink);
  qdisc_.set_observer(&qdisc_drops_);
  // ifup: the driver posts its bulk-IN transfers (usbnet rx_submit × rx_qlen; uether one).
  for (int64_t i = 0; i < params_.rx_transfers; ++i) {
    agg_.post_transfer(now_);
  }
  refresh_next();
}

void UsbNic::set_observer(Observer* o) {
  observer_ = o;
  qdisc_drops_.set_user(o);
  agg_.set_observer(o);
}

uint32_t UsbNic::rx_usb_len(uint32_t len) const {
  return rx_usb_len_for(params_.chip, params_.rx_csum, len);
}

uint32_t UsbNic::tx_usb_len(uint32_t len) const { return tx_usb_len_alone(params_.chip, len); }

bool UsbNic::tx_encodable(uint32_t len) const {
  if (params_.chip == Chip::kSmsc95xx) {
    // TX_CMD_A buffer size is 11 bits (smsc95xx_tx_fixup / smsc_bulk_write_callback).
    return len > 0 && len <= algo::Smsc95xxTx::kMaxBufSize;
  }
  return len > 0 && len <= algo::AsixTx::kMaxFrameLen;  // 16-bit length in the header
}

Time UsbNic::completion_boundary(Time c) const {
  const int64_t p = irq_period_.count_ns();
  const int64_t ns = c.ns_since_epoch();
  const int64_t q = ns >= 0 ? (ns + p - 1) / p : -((-ns) / p);
  return Time::from_ns(q * p);
}

// ------------------------------------------------------------------------------------------
// Event loop

namespace {
inline void take_min(std::optional<Time>& t, std::optional<Time> x) {
  if (x && (!t || *x < *t)) {
    t = x;
  }
}
}  // namespace

void UsbNic::refresh_next() {
  std::optional<Time> t = agenda_.next_time();
  take_min(t, agg_.next_ready());
  take_min(t, next_bus_out());
  if (!on_wire_.empty()) {
    take_min(t, on_wire_.front().last_bit);
  }
  internal_next_ = t;
}

std::optional<Time> UsbNic::next_event() const {
  std::optional<Time> t = internal_next_;
  if (in_ != nullptr) {
    take_min(t, in_->next_ready());
  }
  take_min(t, next_mac());
  return t;
}

void UsbNic::advance(Time now) {
  if (in_advance_) {
    return;  // re-entered from a sink callback: the outer call is already at `now`
  }
  in_advance_ = true;
  while (true) {
    const std::optional<Time> t = next_event();
    if (!t || *t > now) {
      break;
    }
    step(max(*t, now_));
  }
  if (now > now_) {
    now_ = now;
  }
  in_advance_ = false;
}

void UsbNic::step(Time t) {
  now_ = t;
  // Device TX FIFO space of frames whose last bit has left.
  while (!on_wire_.empty() && on_wire_.front().last_bit <= t) {
    tx_fifo_used_ -= on_wire_.pop_front().usb_len;
  }
  pop_wire_arrivals(t);
  pop_rx_transfers(t);
  update_pause(t);
  if (const std::optional<Time> b = next_bus_out(); b && *b <= t) {
    bus_out_packet(t);
  }
  if (const std::optional<Time> m = next_mac(); m && *m <= t) {
    mac_transmit(t);
  }
  while (const auto a = agenda_.pop_due(t)) {
    run_action(t, a->second);
  }
  // A bulk-OUT packet waiting for TX FIFO space is NAKed until a frame leaves.
  const bool blocked =
      !bus_meta_.empty() && !out_zlp_pending_ && bus_meta_.front().ready <= t && !next_bus_out();
  if (blocked && !out_blocked_) {
    ++stats_.tx_fifo_stalls;
  }
  out_blocked_ = blocked;
  refresh_next();
}

void UsbNic::run_action(Time t, const Action& a) {
  switch (a.kind) {
    case ActionKind::kInterrupt:
      handle_interrupt(t, a.t);
      break;
    case ActionKind::kRxPost:
      post_rx(t);
      break;
    case ActionKind::kRxDeliver:
      for (uint32_t i = 0; i < a.count; ++i) {
        Packet p = rx_deliver_.pop_front();
        p.stamp(Stage::kRxDeliver, t);
        ++stats_.rx_delivered;
        rx_delivered_bytes_ += p.len;
        sink_->deliver(std::move(p), t);
      }
      break;
    case ActionKind::kTxBusDone:
      register_completion(Completion{XferKind::kTx, a.count, 0, t});
      break;
    case ActionKind::kTxDone:
      tx_done(t, a.count);
      break;
    case ActionKind::kPauseRefresh:
      if (agg_.pause_asserted() && in_ != nullptr) {
        assert_pause(t);
        agenda_.schedule(t + max(params_.pause_time / 2, Duration::ns(1)),
                         Action{ActionKind::kPauseRefresh, 0, t});
      } else {
        pausing_ = false;
      }
      break;
    case ActionKind::kQdiscWatchdog:
      if (watchdog_at_ && *watchdog_at_ <= t) {
        watchdog_at_.reset();
      }
      run_qdisc(t);
      break;
  }
}

// ------------------------------------------------------------------------------------------
// RX

void UsbNic::pop_wire_arrivals(Time t) {
  if (in_ == nullptr) {
    return;
  }
  while (std::optional<Packet> p = in_->pop_arrived(t)) {
    ++stats_.rx_frames_in;
    const uint32_t usb_len = rx_usb_len(p->len);
    if (!agg_.frame_arrived(std::move(*p), usb_len, t)) {
      ++stats_.rx_fifo_drops;
    }
  }
}

void UsbNic::pop_rx_transfers(Time t) {
  while (std::optional<UsbRxAggregator::Transfer> tr = agg_.pop_completed(t)) {
    const uint32_t n = static_cast<uint32_t>(tr->frames.size());
    for (Packet& f : tr->frames) {
      rx_host_.push_back(std::move(f));
    }
    register_completion(Completion{XferKind::kRx, n, tr->bytes, tr->completed});
    if (agg_.posted_transfers() == 0 && !idle_since_) {
      idle_since_ = tr->completed;
    }
    agg_.recycle(std::move(tr->frames));
  }
}

void UsbNic::assert_pause(Time t) {
  const Time until = t + params_.pause_time;
  if (until > paused_until_) {
    stats_.pause_time += until - max(paused_until_, t);
    paused_until_ = until;
  }
  in_->pause_until(until);
  ++stats_.pause_frames;
}

void UsbNic::update_pause(Time t) {
  if (pausing_ || in_ == nullptr || !agg_.pause_asserted()) {
    return;
  }
  pausing_ = true;
  assert_pause(t);
  agenda_.schedule(t + max(params_.pause_time / 2, Duration::ns(1)),
                   Action{ActionKind::kPauseRefresh, 0, t});
}

void UsbNic::post_rx(Time t) {
  if (idle_since_) {
    if (t > *idle_since_) {
      stats_.rx_idle_time += t - *idle_since_;
    }
    idle_since_.reset();
  }
  agg_.post_transfer(t);
}

void UsbNic::register_completion(const Completion& c) {
  pending_.push_back(c);
  const Time b = completion_boundary(c.completed);
  if (!irq_scheduled_ || *irq_scheduled_ != b) {
    agenda_.schedule(b + params_.irq_latency, Action{ActionKind::kInterrupt, 0, b});
    irq_scheduled_ = b;
  }
}

void UsbNic::handle_interrupt(Time now, Time boundary) {
  if (irq_scheduled_ && *irq_scheduled_ == boundary) {
    irq_scheduled_.reset();
  }
  if (pending_.empty() || pending_.front().completed > boundary) {
    return;
  }
  ++stats_.interrupts;
  bool first = true;
  while (!pending_.empty() && pending_.front().completed <= boundary) {
    const Completion c = pending_.pop_front();
    ++stats_.completions;
    const Duration delay = now - c.completed;
    stats_.completion_delay_total += delay;
    stats_.completion_delay_max = max(stats_.completion_delay_max, delay);
    const Duration head =
        (first ? costs_.per_interrupt : Duration::zero()) + costs_.per_usb_transfer;
    first = false;
    if (c.kind == XferKind::kRx) {
      handle_rx_transfer(now, c, head);
    } else {
      const Duration cost = head + costs_.per_tx_clean * static_cast<int64_t>(c.frames);
      charge(cost);
      const Time done = cpu_->run(now, cost);
      agenda_.schedule(done, Action{ActionKind::kTxDone, c.frames, done});
    }
  }
}

void UsbNic::handle_rx_transfer(Time now, const Completion& c, Duration head) {
  ++stats_.rx_transfers;
  stats_.rx_transfer_frames += c.frames;
  stats_.rx_usb_bytes += c.usb_bytes;
  ++stats_.rx_frames_per_transfer[std::min<size_t>(c.frames, kHistBuckets - 1)];

  rx_batch_.clear();
  bool any_payload = false;
  for (uint32_t i = 0; i < c.frames; ++i) {
    rx_batch_.push_back(rx_host_.pop_front());
    any_payload = any_payload || rx_batch_.back().payload != nullptr;
  }
  good_.assign(c.frames, 1);
  if (any_payload) {
    decode_rx_payloads(rx_batch_);
  }
  Duration copy = Duration::zero();
  Duration stack = Duration::zero();
  uint32_t delivered = 0;
  for (uint32_t i = 0; i < c.frames; ++i) {
    if (good_[i] == 0) {
      continue;
    }
    if (rx_copies_) {
      copy += costs_.copy(rx_batch_[i].len);
    }
    stack += costs_.per_rx_frame;
    ++delivered;
  }
  const Duration cost = head + copy + stack;
  charge(cost);
  const Time done = cpu_->run(now, cost);
  const Time start = done - cost;
  // Linux rx_complete resubmits the URB from the completion handler; FreeBSD's callback
  // parses (and copies) the whole buffer first, then resubmits, then flushes to the stack.
  const Time post_at = params_.driver == Driver::kLinux ? start + head : start + head + copy;
  agenda_.schedule(post_at, Action{ActionKind::kRxPost, 0, post_at});
  for (uint32_t i = 0; i < c.frames; ++i) {
    if (good_[i] != 0) {
      rx_deliver_.push_back(std::move(rx_batch_[i]));
    } else {
      ++stats_.rx_malformed_drops;
      if (observer_ != nullptr) {
        observer_->on_drop(now, rx_batch_[i], DropReason::kMalformed);
      }
    }
  }
  rx_batch_.clear();
  if (delivered > 0) {
    agenda_.schedule(done, Action{ActionKind::kRxDeliver, delivered, done});
  }
}

void UsbNic::decode_rx_payloads(std::vector<Packet>& frames) {
  const size_t n = frames.size();
  scratch_.clear();
  offsets_.clear();
  // Device side: the chip writes each frame with its header into the bulk-IN transfer.
  for (const Packet& p : frames) {
    std::span<const uint8_t> bytes;
    if (p.payload) {
      bytes = std::span<const uint8_t>(p.payload->bytes);
    } else {
      if (zeros_.size() < p.len) {
        zeros_.resize(p.len, 0);
      }
      bytes = std::span<const uint8_t>(zeros_.data(), p.len);
    }
    const size_t before = scratch_.size();
    bool ok;
    size_t data_at;
    if (params_.chip == Chip::kSmsc95xx) {
      data_at = before + (4 - before % 4) % 4 + algo::Smsc95xxRx::kStatusLen +
                algo::Smsc95xxRx::kRxDataOffset;
      ok = smsc_rx_.encode_frame(bytes, scratch_);
    } else {
      data_at = before + algo::AsixRx::kHeaderLen;
      ok = asix_rx_.encode_frame(bytes, scratch_);
    }
    offsets_.push_back(ok ? data_at : SIZE_MAX);
  }
  // Host side: the driver parses the transfer; frames it hands up are the decoded bytes.
  good_.assign(n, 0);
  size_t next = 0;
  auto sink = [&](std::span<const uint8_t> data) {
    if (!within(scratch_, data.data())) {
      return;  // reassembled across transfers (cannot happen: frames never straddle here)
    }
    const size_t off = static_cast<size_t>(data.data() - scratch_.data());
    while (next < n && offsets_[next] < off) {
      ++next;  // frames the decoder skipped
    }
    if (next < n && offsets_[next] == off) {
      Packet& p = frames[next];
      if (p.payload) {
        p.payload->bytes.assign(data.begin(), data.end());
      }
      good_[next] = 1;
      ++next;
    }
  };
  const std::span<const uint8_t> transfer(scratch_);
  if (params_.chip == Chip::kSmsc95xx) {
    smsc_rx_.decode(transfer, sink);
  } else {
    asix_rx_.decode(transfer, sink);
  }
}

// ------------------------------------------------------------------------------------------
// TX, host side

Verdict UsbNic::send(Packet&& p, Time now) {
  if (cpu_ == nullptr) {
    throw std::logic_error("UsbNic::send before attach");
  }
  advance(now);
  const Time t = max(now, now_);
  ++stats_.tx_offered;
  p.stamp(Stage::kQdiscIn, t);
  qdisc_drops_.begin_enqueue(p.id);
  const Verdict v = qdisc_.enqueue(std::move(p), t);
  qdisc_drops_.end_enqueue();
  run_qdisc(t);
  refresh_next();
  return v;
}

void UsbNic::split_gso(Packet&& p) {
  // Software GSO (validate_xmit_skb → skb_gso_segment): the device has no TSO. Segment sizes
  // follow nicsim/core/gso.h; segments keep the packet's id and record their index.
  const uint32_t n = p.gso_segs;
  for (uint32_t i = 0; i < n; ++i) {
    Packet s = make_gso_segment(p, i);
    requeue_bytes_ += s.len;
    requeue_.push_back(std::move(s));
  }
  stats_.tx_segments += n;
}

std::optional<Packet> UsbNic::next_tx_frame(Time now, Duration& gso_cost, bool& last_segment) {
  if (requeue_.empty()) {
    std::optional<Packet> p = qdisc_.dequeue(now);
    if (!p) {
      return std::nullopt;
    }
    if (p->gso_segs <= 1 || p->payload) {
      ++stats_.tx_segments;
      last_segment = true;
      return p;
    }
    gso_cost += costs_.per_gso_segment * static_cast<int64_t>(p->gso_segs);
    split_gso(std::move(*p));
  }
  Packet s = requeue_.pop_front();
  requeue_bytes_ -= s.len;
  last_segment = requeue_.empty() || requeue_.front().id != s.id;
  return s;
}

void UsbNic::drop_tx(Packet&& p, Time now, bool last_segment) {
  // tx_fixup failed: usbnet frees the skb (tx_dropped); the socket gets its bytes back.
  ++stats_.tx_malformed_drops;
  if (observer_ != nullptr) {
    observer_->on_drop(now, p, DropReason::kMalformed);
  }
  sink_->tx_released(release_of(p, last_segment), now);
}

void UsbNic::submit_frame(Packet&& p, Time now, Time ready, const TxRelease& rec, uint32_t usb_len,
                          bool seg_end, uint32_t urb_frames) {
  p.stamp(Stage::kRingIn, now);
  tx_records_.push_back(rec);
  ++tx_inflight_frames_;
  tx_inflight_bytes_ += rec.bytes;
  ++stats_.tx_transfer_frames;
  bus_frames_.push_back(std::move(p));
  bus_meta_.push_back(BusFrame{ready, usb_len, seg_end, urb_frames});
}

void UsbNic::encode_tx_payloads(std::span<Packet> frames) {
  auto bytes_of = [this](const Packet& p) {
    if (p.payload) {
      return std::span<const uint8_t>(p.payload->bytes);
    }
    if (zeros_.size() < p.len) {
      zeros_.resize(p.len, 0);
    }
    return std::span<const uint8_t>(zeros_.data(), p.len);
  };
  if (params_.chip == Chip::kSmsc95xx) {
    // Each frame is its own USB frame (Linux: its own URB).
    for (Packet& p : frames) {
      if (!p.payload) {
        continue;
      }
      scratch_.clear();
      if (!smsc_tx_.encode_frame(bytes_of(p), scratch_)) {
        continue;  // cannot happen after tx_encodable()
      }
      smsc_tx_.decode(std::span<const uint8_t>(scratch_), [&p](std::span<const uint8_t> d) {
        p.payload->bytes.assign(d.begin(), d.end());
      });
    }
    return;
  }
  // ASIX: the frames of one transfer back to back, dummy headers where needed.
  scratch_.clear();
  for (const Packet& p : frames) {
    asix_tx_.encode_frame(bytes_of(p), scratch_);
  }
  size_t next = 0;
  asix_tx_.decode(std::span<const uint8_t>(scratch_), [&](std::span<const uint8_t> d) {
    if (next < frames.size()) {
      Packet& p = frames[next++];
      if (p.payload) {
        p.payload->bytes.assign(d.begin(), d.end());
      }
    }
  });
}

void UsbNic::run_qdisc(Time now) {
  if (cpu_ == nullptr) {
    return;
  }
  bool empty_dequeue = false;
  if (params_.driver == Driver::kLinux) {
    // usbnet_start_xmit per frame: tx_fixup, one URB, stop at tx_qlen URBs in flight.
    while (!stopped_) {
      Duration gso = Duration::zero();
      bool last = true;
      std::optional<Packet> p = next_tx_frame(now, gso, last);
      if (!p) {
        empty_dequeue = true;
        break;
      }
      const Duration cost = costs_.per_tx_frame + gso;
      charge(cost);
      const Time ready = cpu_->run(now, cost);
      if (!tx_encodable(p->len)) {
        drop_tx(std::move(*p), now, last);
        continue;
      }
      if (p->payload) {
        encode_tx_payloads(std::span<Packet>(&*p, 1));
      }
      const TxRelease rec{p->id, p->flow_id, p->len, last};
      const uint32_t usb_len = tx_usb_len(p->len);
      ++stats_.tx_transfers;
      ++stats_.tx_frames_per_transfer[1];
      submit_frame(std::move(*p), now, ready, rec, usb_len, /*seg_end=*/true, /*urb_frames=*/1);
      ++tx_inflight_urbs_;
      if (tx_inflight_urbs_ >= static_cast<uint64_t>(params_.tx_qlen)) {
        stopped_ = true;  // netif_stop_queue
        ++stats_.tx_queue_stops;
      }
    }
  } else if (!tx_busy_) {
    // uether TX callback: drain up to tx_frames_per_transfer frames into one transfer.
    tx_batch_.clear();
    tx_batch_rec_.clear();
    Duration cost = Duration::zero();
    bool any_payload = false;
    while (tx_batch_.size() < static_cast<size_t>(params_.tx_frames_per_transfer)) {
      Duration gso = Duration::zero();
      bool last = true;
      std::optional<Packet> p = next_tx_frame(now, gso, last);
      if (!p) {
        empty_dequeue = true;
        break;
      }
      // m_copydata into the transfer buffer.
      cost += costs_.per_tx_frame + gso + costs_.copy(p->len);
      if (!tx_encodable(p->len)) {
        drop_tx(std::move(*p), now, last);
        continue;
      }
      any_payload = any_payload || p->payload != nullptr;
      tx_batch_rec_.push_back(release_of(*p, last));
      tx_batch_.push_back(std::move(*p));
    }
    charge(cost);
    if (!tx_batch_.empty()) {
      const Time ready = cpu_->run(now, cost);
      if (any_payload) {
        encode_tx_payloads(std::span<Packet>(tx_batch_));
      }
      const size_t n = tx_batch_.size();
      ++stats_.tx_transfers;
      ++stats_.tx_frames_per_transfer[std::min(n, kHistBuckets - 1)];
      size_t pos = 0;  // ASIX: position in the transfer (dummy-header rule)
      for (size_t i = 0; i < n; ++i) {
        const bool last_frame = i + 1 == n;
        const uint32_t len = tx_batch_[i].len;
        uint32_t usb_len;
        bool seg_end;
        if (params_.chip == Chip::kSmsc95xx) {
          usb_len = tx_usb_len(len);  // one USB frame per Ethernet frame
          seg_end = true;
        } else {
          usb_len = static_cast<uint32_t>(asix_tx_.append_size(pos, len));
          pos += usb_len;
          seg_end = last_frame;
        }
        submit_frame(std::move(tx_batch_[i]), now, ready, tx_batch_rec_[i], usb_len, seg_end,
                     last_frame ? static_cast<uint32_t>(n) : 0);
      }
      tx_batch_.clear();
      tx_busy_ = true;  // IFF_DRV_OACTIVE
      ++tx_inflight_urbs_;
    } else if (cost > Duration::zero()) {
      cpu_->run(now, cost);  // frames taken and dropped still cost their work
    }
  }
  // A non-work-conserving qdisc (TBF, HTB) with backlog: its watchdog runs the queue later.
  if (empty_dequeue && qdisc_.backlog_packets() > 0) {
    const std::optional<Time> nr = qdisc_.next_ready(now);
    if (nr && *nr > now && (!watchdog_at_ || *watchdog_at_ > *nr)) {
      agenda_.schedule(*nr, Action{ActionKind::kQdiscWatchdog, 0, *nr});
      watchdog_at_ = *nr;
    }
  }
}

void UsbNic::tx_done(Time t, uint32_t frames) {
  ++stats_.tx_transfers_done;
  --tx_inflight_urbs_;
  for (uint32_t i = 0; i < frames; ++i) {
    const TxRelease rec = tx_records_.pop_front();
    --tx_inflight_frames_;
    tx_inflight_bytes_ -= rec.bytes;
    ++stats_.tx_released;
    sink_->tx_released(rec, t);  // skb freed: TSQ gets the bytes back
  }
  if (params_.driver == Driver::kLinux) {
    if (stopped_ && tx_inflight_urbs_ < static_cast<uint64_t>(params_.tx_qlen)) {
      stopped_ = false;  // usbnet_bh: netif_wake_queue
      ++stats_.tx_queue_wakes;
    }
  } else {
    tx_busy_ = false;
  }
  run_qdisc(t);
}

// ------------------------------------------------------------------------------------------
// TX, bus and device

uint64_t UsbNic::segment_bytes_from_head() const {
  uint64_t bytes = 0;
  for (size_t i = 0; i < bus_meta_.size(); ++i) {
    bytes += bus_meta_[i].usb_len;
    if (bus_meta_[i].seg_end) {
      break;
    }
  }
  return bytes - out_sent_;
}

std::optional<Time> UsbNic::next_bus_out() const {
  if (bus_meta_.empty() && !out_zlp_pending_) {
    return std::nullopt;
  }
  const Time t = max(bus_out_free_, now_);
  if (out_zlp_pending_) {
    return t;
  }
  const uint64_t seg_left = out_seg_left_ > 0 ? out_seg_left_ : segment_bytes_from_head();
  const uint64_t packet = std::min<uint64_t>(kMaxPacket, seg_left);
  if (tx_fifo_used_ + packet > static_cast<uint64_t>(params_.tx_fifo_bytes)) {
    return std::nullopt;  // the device NAKs until a frame leaves its TX FIFO
  }
  return max(t, bus_meta_.front().ready);
}

void UsbNic::bus_out_packet(Time t) {
  const Time end = t + slot_out_;
  bus_out_free_ = end;
  ++stats_.tx_usb_packets;
  if (out_zlp_pending_) {
    out_zlp_pending_ = false;
    if (out_urb_after_zlp_ > 0) {
      agenda_.schedule(end, Action{ActionKind::kTxBusDone, out_urb_after_zlp_, end});
      out_urb_after_zlp_ = 0;
    }
    return;
  }
  if (out_seg_left_ == 0) {
    out_seg_left_ = segment_bytes_from_head();
  }
  const uint32_t packet = static_cast<uint32_t>(std::min<uint64_t>(kMaxPacket, out_seg_left_));
  out_seg_left_ -= packet;
  tx_fifo_used_ += packet;
  stats_.tx_usb_bytes += packet;
  stats_.max_tx_fifo_bytes = std::max(stats_.max_tx_fifo_bytes, tx_fifo_used_);
  // A USB frame whose length is a multiple of 512 ends with a ZLP (SMSC: usbnet FLAG_SEND_ZLP,
  // FreeBSD force_short_xfer); ASIX avoids it with the dummy header.
  const bool zlp = out_seg_left_ == 0 && packet == kMaxPacket && params_.chip == Chip::kSmsc95xx;
  uint32_t bytes = packet;
  while (bytes > 0) {
    const BusFrame& h = bus_meta_.front();
    const uint32_t take = std::min(bytes, h.usb_len - out_sent_);
    out_sent_ += take;
    bytes -= take;
    if (out_sent_ == h.usb_len) {
      out_sent_ = 0;
      const BusFrame done = bus_meta_.pop_front();
      // Store and forward: the frame is complete in the device TX FIFO at the packet's end.
      dev_tx_.push_back(bus_frames_.pop_front());
      dev_tx_meta_.push_back(FifoFrame{end, done.usb_len});
      if (done.urb_frames > 0) {
        if (zlp) {
          out_urb_after_zlp_ = done.urb_frames;
        } else {
          agenda_.schedule(end, Action{ActionKind::kTxBusDone, done.urb_frames, end});
        }
      }
    }
  }
  out_zlp_pending_ = zlp;
}

std::optional<Time> UsbNic::next_mac() const {
  if (dev_tx_meta_.empty() || out_ == nullptr) {
    return std::nullopt;
  }
  return out_->free_at(max(dev_tx_meta_.front().ready, now_));
}

void UsbNic::mac_transmit(Time t) {
  if (out_->free_at(t) > t) {
    return;
  }
  Packet f = dev_tx_.pop_front();
  const FifoFrame m = dev_tx_meta_.pop_front();
  const uint32_t len = f.len;
  const Wire::TxTiming timing = out_->transmit(std::move(f), t);
  on_wire_.push_back(WireFrame{timing.last_bit, m.usb_len});
  ++stats_.tx_wire_frames;
  tx_wire_bytes_ += len;
}

// ------------------------------------------------------------------------------------------
// Observability

uint64_t UsbNic::tx_frames_held() const {
  return requeue_.size() + bus_frames_.size() + dev_tx_.size();
}

uint64_t UsbNic::rx_frames_held() const {
  const UsbRxAggregator::Stats& a = agg_.stats();
  return (a.frames_in - a.frames_out - a.fifo_drops) + rx_host_.size() + rx_deliver_.size();
}

NicCounters UsbNic::counters() const {
  NicCounters c;
  c.tx_packets = stats_.tx_wire_frames;
  c.tx_bytes = tx_wire_bytes_;
  c.tx_qdisc_drops = qdisc_.stats().dropped_packets;
  c.rx_packets = stats_.rx_delivered;
  c.rx_bytes = rx_delivered_bytes_;
  c.rx_drops = stats_.rx_fifo_drops + stats_.rx_malformed_drops;
  c.interrupts = stats_.interrupts;
  c.doorbells = 0;  // no doorbell: URBs go through the host controller's schedule
  return c;
}

NicQueueSample UsbNic::queue_sample() const {
  NicQueueSample s;
  s.qdisc_packets = qdisc_.backlog_packets() + requeue_.size();
  s.qdisc_bytes = qdisc_.backlog_bytes() + requeue_bytes_;
  s.ring_packets = tx_inflight_frames_;
  s.ring_bytes = tx_inflight_bytes_;
  s.bql_limit = 0;
  s.device_fifo_bytes = agg_.fifo_bytes() + tx_fifo_used_;
  return s;
}

std::string UsbNic::describe() const {
  const UsbRxAggregator::Params& a = agg_.params();
  std::string s = "usb_nic chip=" + std::string(to_string(params_.chip)) +
                  " driver=" + std::string(to_string(params_.driver));
  if (a.mode == UsbRxAggregator::Mode::kSingleFrame) {
    s += " rx=single_frame";
  } else {
    s += " rx=multi_frame burst_cap=" + std::to_string(a.burst_cap_bytes) +
         "B bulk_in_delay=" + std::to_string(a.hold_time.count_ns()) + "ns";
  }
  s += " rx_fifo=" + std::to_string(a.fifo_bytes) + "B";
  if (a.pause_high_bytes > 0) {
    s += " pause=" + std::to_string(a.pause_high_bytes) + "/" + std::to_string(a.pause_low_bytes) +
         "B/" + std::to_string(params_.pause_time.count_ns()) + "ns";
  }
  s += " rx_transfers=" + std::to_string(params_.rx_transfers) + "x" +
       std::to_string(params_.rx_urb_bytes) + "B";
  if (params_.driver == Driver::kLinux) {
    s += " tx_qlen=" + std::to_string(params_.tx_qlen);
  } else {
    s += " tx_frames_per_transfer=" + std::to_string(params_.tx_frames_per_transfer);
  }
  s += " tx_fifo=" + std::to_string(params_.tx_fifo_bytes) +
       "B ehci_irq=" + std::to_string(irq_period_.count_ns() / 1000) + "us";
  return s;
}

std::string_view to_string(UsbNic::Chip c) {
  return c == UsbNic::Chip::kSmsc95xx ? "smsc95xx" : "asix";
}

std::string_view to_string(UsbNic::Driver d) {
  return d == UsbNic::Driver::kFreeBsd ? "freebsd" : "linux_usbnet";
}

std::optional<UsbNic::Chip> parse_usb_chip(std::string_view s) {
  if (s == "smsc95xx") {
    return UsbNic::Chip::kSmsc95xx;
  }
  if (s == "asix") {
    return UsbNic::Chip::kAsix;
  }
  return std::nullopt;
}

std::optional<UsbNic::Driver> parse_usb_driver(std::string_view s) {
  if (s == "linux_usbnet") {
    return UsbNic::Driver::kLinux;
  }
  if (s == "freebsd") {
    return UsbNic::Driver::kFreeBsd;
  }
  return std::nullopt;
}

}  // namespace nicsim::model

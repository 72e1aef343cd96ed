#pragma once
// Test/benchmark harness (not part of the library): N TcpSender → TcpReceiver pairs through one
// drop-tail bottleneck of fixed rate, then a fixed propagation delay; ACKs return over a
// fixed-delay path with no queue. Optional random loss of data frames (seeded). GSO units are
// segmented in software when they enter the bottleneck. TSQ bytes are released when a frame
// enters the bottleneck queue (a remote bottleneck behind a fast NIC) or, with
// release_at_departure, when it leaves it (the bottleneck is the sender's own NIC); dropped
// frames are released at once (kfree_skb). Everything is deterministic.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/receiver.h"
#include "nicsim/sim/tcp/sender.h"

namespace nicsim::sim::tcp::testing {

// The payload rate of a link carrying full segments: frame = 66 bytes of headers (Ethernet 14,
// IPv4 20, TCP 20, timestamps 12) + mss payload.
inline double max_goodput_bps(Rate r, uint32_t mss) {
  return static_cast<double>(r.bits_per_sec()) * mss / (mss + 66.0);
}

struct LinkConfig {
  Rate rate = Rate::mbit(100);
  Duration delay = Duration::ms(5);     // one-way propagation, each direction
  uint64_t queue_limit_bytes = 64'000;  // drop-tail limit (frame bytes)
  double loss = 0.0;                    // probability a data frame is lost on the wire
  uint64_t seed = 1;
  bool release_at_departure = false;
  // ECN marking of ECT frames as they join the queue (0 = off): a step at a queue length (DCTCP's
  // switch threshold K, RFC 8257 §3.1) and/or a fixed probability (seeded, independent of the
  // queue: a constant marking fraction).
  uint64_t ce_threshold_bytes = 0;
  double ce_probability = 0.0;
};

class Loopback {
 public:
  Loopback(const LinkConfig& link, const std::vector<Params>& senders, const Params& receiver,
           const std::vector<Duration>& start_times = {})
      : link_(link), rng_(link.seed) {
    for (size_t i = 0; i < senders.size(); ++i) {
      flows_.push_back(Flow{std::make_unique<TcpSender>(senders[i]),
                            std::make_unique<TcpReceiver>(receiver),
                            i < start_times.size() ? Time::zero() + start_times[i] : Time::zero()});
    }
  }

  TcpSender& sender(size_t i) { return *flows_[i].snd; }
  TcpReceiver& receiver(size_t i) { return *flows_[i].rcv; }
  size_t flows() const { return flows_.size(); }
  Time now() const { return now_; }
  uint64_t queue_drops() const { return queue_drops_; }
  uint64_t ce_marks() const { return ce_marks_; }
  uint64_t queue_bytes() const { return queue_bytes_; }  // the bottleneck's backlog now
  uint64_t wire_losses() const { return wire_losses_; }
  uint64_t frames_sent() const { return frames_sent_; }
  uint64_t bytes_transmitted() const { return bytes_transmitted_; }
  uint64_t max_queue_bytes() const { return max_queue_bytes_; }
  uint64_t events() const { return events_; }
  uint64_t trace_hash() const { return hash_; }

  void run_until(Time end) {
    for (;;) {
      const std::optional<Time> t = next_time();
      if (!t || *t > end) {
        now_ = end;
        return;
      }
      now_ = *t;
      step();
    }
  }

 private:
  struct Flow {
    std::unique_ptr<TcpSender> snd;
    std::unique_ptr<TcpReceiver> rcv;
    Time start;
    bool started = false;
  };
  struct InFlight {
    Time at;
    uint32_t flow;
    Segment seg;
  };
  struct Frame {
    uint32_t flow;
    Segment seg;
    uint32_t bytes;
  };

  std::optional<Time> next_time() const {
    std::optional<Time> t;
    auto take = [&t](std::optional<Time> c) {
      if (c && (!t || *c < *t)) {
        t = c;
      }
    };
    take(tx_done_);
    if (!data_pipe_.empty()) take(data_pipe_.front().at);
    if (!ack_pipe_.empty()) take(ack_pipe_.front().at);
    for (const Flow& f : flows_) {
      if (!f.started) {
        take(f.start);
      } else {
        take(f.snd->next_event());
        take(f.rcv->next_event());
      }
    }
    return t;
  }

  void mix(uint64_t v) { hash_ = (hash_ ^ v) * 0x100000001b3ull; }

  void step() {
    ++events_;
    if (tx_done_ && *tx_done_ <= now_) {
      tx_done_.reset();
      Frame f = std::move(queue_.front());
      queue_.pop_front();
      queue_bytes_ -= f.bytes;
      bytes_transmitted_ += f.bytes;
      if (link_.release_at_departure) {
        release(f);
      }
      const bool lost = link_.loss > 0.0 && f.seg.len > 0 && uniform_(rng_) < link_.loss;
      if (lost) {
        ++wire_losses_;
      } else {
        data_pipe_.push_back(InFlight{now_ + link_.delay, f.flow, f.seg});
      }
      start_tx();
    }
    while (!data_pipe_.empty() && data_pipe_.front().at <= now_) {
      const InFlight p = data_pipe_.front();
      data_pipe_.pop_front();
      flows_[p.flow].rcv->on_segment(p.seg, now_);
      drain_receiver(p.flow);
    }
    while (!ack_pipe_.empty() && ack_pipe_.front().at <= now_) {
      const InFlight p = ack_pipe_.front();
      ack_pipe_.pop_front();
      flows_[p.flow].snd->on_segment(p.seg, now_);
      drain_sender(p.flow);
    }
    for (uint32_t i = 0; i < flows_.size(); ++i) {
      Flow& f = flows_[i];
      if (!f.started) {
        if (f.start <= now_) {
          f.started = true;
          f.snd->connect(now_);
          drain_sender(i);
        }
        continue;
      }
      if (const auto t = f.snd->next_event(); t && *t <= now_) {
        f.snd->advance(now_);
        drain_sender(i);
      }
      if (const auto t = f.rcv->next_event(); t && *t <= now_) {
        f.rcv->advance(now_);
        drain_receiver(i);
      }
    }
  }

  void release(const Frame& f) {
    if (f.seg.truesize > 0) {
      flows_[f.flow].snd->on_tx_released(f.seg.truesize, now_);
      drain_sender(f.flow);
    }
  }

  void drain_sender(uint32_t flow) {
    TcpSender& s = *flows_[flow].snd;
    while (s.has_output()) {
      const Segment unit = s.pop_output();
      for (uint16_t i = 0; i < unit.gso_segs; ++i) {
        const Segment seg = gso_segment(unit, i);
        Frame f{flow, seg, frame_header_bytes(seg) + seg.len};
        ++frames_sent_;
        mix(static_cast<uint64_t>(now_.ns_since_epoch()));
        mix(seg.seq * 31 + seg.len + flow);
        if (queue_bytes_ + f.bytes > link_.queue_limit_bytes) {
          ++queue_drops_;
          pending_release_.push_back(f);  // freed at once (after this drain)
          continue;
        }
        if (f.seg.ecn != Ecn::kNotEct && should_mark()) {
          f.seg.ecn = Ecn::kCe;
          ++ce_marks_;
        }
        queue_bytes_ += f.bytes;
        max_queue_bytes_ = std::max(max_queue_bytes_, queue_bytes_);
        if (!link_.release_at_departure) {
          pending_release_.push_back(f);
        }
        queue_.push_back(std::move(f));
      }
    }
    start_tx();
    // Releases after the drain (a TX completion is a later, separate event in a host).
    while (!pending_release_.empty()) {
      const Frame f = pending_release_.back();
      pending_release_.pop_back();
      s.on_tx_released(f.seg.truesize, now_);
    }
    if (s.has_output()) {
      drain_sender(flow);
    }
  }

  bool should_mark() {
    const bool step = link_.ce_threshold_bytes > 0 && queue_bytes_ > link_.ce_threshold_bytes;
    const bool random = link_.ce_probability > 0.0 && uniform_(rng_) < link_.ce_probability;
    return step || random;
  }

  void drain_receiver(uint32_t flow) {
    TcpReceiver& r = *flows_[flow].rcv;
    while (r.has_output()) {
      const Segment a = r.pop_output();
      mix(a.ack * 7 + a.num_sacks);
      ack_pipe_.push_back(InFlight{now_ + link_.delay, flow, a});
    }
  }

  void start_tx() {
    if (!tx_done_ && !queue_.empty()) {
      tx_done_ = now_ + link_.rate.transmit_time(queue_.front().bytes);
    }
  }

  LinkConfig link_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  std::vector<Flow> flows_;
  std::deque<Frame> queue_;
  uint64_t queue_bytes_ = 0;
  std::optional<Time> tx_done_;
  std::deque<InFlight> data_pipe_;
  std::deque<InFlight> ack_pipe_;
  std::vector<Frame> pending_release_;
  Time now_;
  uint64_t queue_drops_ = 0;
  uint64_t ce_marks_ = 0;
  uint64_t wire_losses_ = 0;
  uint64_t frames_sent_ = 0;
  uint64_t bytes_transmitted_ = 0;
  uint64_t max_queue_bytes_ = 0;
  uint64_t events_ = 0;
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace nicsim::sim::tcp::testing

#pragma once
// Tbf — token bucket filter: shapes a packet stream to `rate` with bursts up to `burst` bytes,
// optionally capped at `peakrate` by a second, one-MTU-deep bucket; packets wait in an inner
// byte-limited FIFO (bfifo) and are never reordered.
//
// Behaviour follows Linux net/sched/sch_tbf.c as described in docs/mechanisms §9.1/§9.2.
// Tokens are kept in nanoseconds of transmission time (psched_l2t_ns): the bucket depth is
// buffer = l2t(rate, burst); the peak bucket depth is mtu_time = l2t(peakrate, mtu).
//   enqueue: len > max_size -> drop (DropReason::kTooBig), where max_size = burst, or
//            min(burst, mtu) with a peak rate (tbf_change with TCA_TBF_BURST/PBURST, which
//            modern tc always sends); else append to the inner bfifo if
//            backlog + len <= limit, otherwise tail drop (kQueueFull).
//   dequeue: head of the FIFO, len = its size;
//            elapsed = min(now - t_c, buffer);
//            ptoks   = min(elapsed + ptokens, mtu_time) - l2t(peakrate, len)   (peak only)
//            toks    = min(elapsed + tokens, buffer) - l2t(rate, len);
//            if toks >= 0 and ptoks >= 0: release it, t_c = now, tokens = toks,
//            ptokens = ptoks; else overlimits++ and nothing leaves (the kernel arms its
//            watchdog for now + max(-toks, -ptoks), which is what next_ready returns).
// next_ready(now) is exact: the head can leave at next_ready(now) and not one ns earlier
// (tokens grow 1 ns per ns and the caps cannot bind while a bucket is short of a packet
// that fits, since l2t(len) <= buffer for len <= max_size).
// peek(now) returns the head only if dequeue(now) would release it (pure, no token change),
// else nullptr.
//
// Units: rates in bit/s (Rate), sizes in bytes (skb->len), tokens in ns.
// Deviations (docs/algorithms/tbf.md): l2t rounds UP to the next ns (Rate::transmit_time);
// Linux's psched_l2t_ns = (len * mult) >> shift rounds down, so per packet we charge at most
// 1 ns more than the exact time and Linux at most ~1 ns less. GSO packets longer than
// max_size are dropped (kTooBig) instead of being software-segmented (tbf_segment); the
// model layer must segment before TBF. No overhead/mpu/linklayer (ATM) adjustment. The inner
// qdisc is always the default bfifo (no grafted child). kCanBypass is false (TBF does not
// set TCQ_F_CAN_BYPASS).

#include <cstdint>
#include <optional>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"

namespace nicsim::algo {

class Tbf {
 public:
  static constexpr bool kCanBypass = false;

  struct Params {
    // tc tbf has no defaults for these: "rate" and "burst" are mandatory (iproute2 tc/q_tbf.c).
    Rate rate{};        // token rate; must be >= 8 bit/s (the kernel keeps bytes/s)
    int64_t burst = 0;  // bucket size in bytes (TCA_TBF_BURST, u32); buffer = l2t(rate, burst)
    // The inner bfifo limit in bytes. tc requires exactly one of limit / latency; with only
    // latency, tc computes limit = rate * latency + burst, and with a peak rate the smaller of
    // that and peakrate * latency + mtu (see effective_limit()).
    int64_t limit = 0;
    Duration latency = Duration::zero();
    Rate peakrate{};  // zero = no peak bucket
    int64_t mtu = 0;  // peak bucket size in bytes (tc "mtu"/"minburst"); required with peakrate
    // psched_mtu(dev) = dev->mtu + hard_header_len = 1500 + 14 for Ethernet. Linux only warns
    // ("burst is lower than device mtu") when max_size is below it and then drops every
    // full-size packet; we reject such a configuration. 0 disables the check.
    int64_t dev_mtu = 1514;

    Validation validate() const;
    // The inner FIFO's byte limit: `limit` if given, else derived from `latency` as tc does
    // (integer arithmetic: bytes `rate` carries in `latency`, rounded down, plus burst).
    // Precondition: validate() passed.
    uint64_t effective_limit() const;
  };

  struct Stats : QueueStats {
    uint64_t dropped_too_big = 0;  // arrivals longer than max_size (also in dropped_packets)
  };

  explicit Tbf(const Params& params);

  Verdict enqueue(Packet&& p, Time now);

  std::optional<Packet> dequeue(Time now) {
    if (queue_.empty()) {
      return std::nullopt;
    }
    const Buckets b = buckets_at(now, queue_.front().len);
    if (b.toks < Duration::zero() || b.ptoks < Duration::zero()) {
      ++stats_.overlimits;
      return std::nullopt;
    }
    Packet p = queue_.pop_front();
    t_c_ = now;
    tokens_ = b.toks;
    ptokens_ = b.ptoks;
    backlog_bytes_ -= p.len;
    ++stats_.dequeued_packets;
    stats_.dequeued_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_dequeue(now, p);
    }
    return p;
  }

  const Packet* peek(Time now) const {
    if (queue_.empty()) {
      return nullptr;
    }
    const Buckets b = buckets_at(now, queue_.front().len);
    return b.toks >= Duration::zero() && b.ptoks >= Duration::zero() ? &queue_.front() : nullptr;
  }

  std::optional<Time> next_ready(Time now) const {
    if (queue_.empty()) {
      return std::nullopt;
    }
    const Buckets b = buckets_at(now, queue_.front().len);
    if (b.toks >= Duration::zero() && b.ptoks >= Duration::zero()) {
      return now;
    }
    return now + max(-b.toks, -b.ptoks);
  }

  uint64_t backlog_packets() const { return queue_.size(); }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

  // State and derived configuration, for tests and reports (tc -s shows tokens/ptokens).
  Duration tokens() const { return tokens_; }
  Duration ptokens() const { return ptokens_; }
  Time t_c() const { return t_c_; }
  Duration buffer() const { return buffer_; }
  Duration mtu_time() const { return mtu_time_; }
  uint64_t max_size() const { return max_size_; }
  uint64_t limit_bytes() const { return limit_; }

 private:
  struct Buckets {
    Duration toks;
    Duration ptoks;
  };
  // The token counts the kernel's tbf_dequeue computes for a head of `len` bytes at `now`.
  Buckets buckets_at(Time now, uint32_t len) const {
    const Duration elapsed = min(now - t_c_, buffer_);
    Duration ptoks = Duration::zero();
    if (has_peak_) {
      ptoks = min(elapsed + ptokens_, mtu_time_) - params_.peakrate.transmit_time(len);
    }
    const Duration toks = min(elapsed + tokens_, buffer_) - params_.rate.transmit_time(len);
    return {toks, ptoks};
  }

  Params params_;
  bool has_peak_ = false;
  Duration buffer_;        // l2t(rate, burst): bucket depth in ns
  Duration mtu_time_;      // l2t(peakrate, mtu): peak bucket depth in ns (0 without peak)
  uint64_t max_size_ = 0;  // longest packet the buckets can ever pass
  uint64_t limit_ = 0;     // inner bfifo limit in bytes
  Duration tokens_;        // B tokens (ns), starts full
  Duration ptokens_;       // P tokens (ns), starts full
  Time t_c_;               // time check-point: last release (or construction, at Time zero)
  PacketFifo queue_;
  uint64_t backlog_bytes_ = 0;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<Tbf>);

}  // namespace nicsim::algo

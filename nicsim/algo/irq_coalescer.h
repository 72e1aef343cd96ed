#pragma once
// IrqCoalescer — interrupt moderation for one completion source (RX frames or TX completions).
//
// Behaviour follows the ethtool -C contract (Linux include/uapi/linux/ethtool.h, struct
// ethtool_coalesce; docs/mechanisms §7.1): for a (usecs, frames) pair the device raises an
// interrupt when
//     (usecs > 0 AND now − time of the first pending completion >= usecs)
//  OR (frames > 0 AND pending completions >= frames).
// Both zero is illegal; "no coalescing" is usecs = 0, frames = 1 (the default here).
// usecs = 0 with frames > 1 waits for `frames` completions with no timer, as the contract says.
//
// NAPI masking (§7.2): while the driver polls, its interrupt is masked; completions still
// accumulate but raise nothing. unmask(now) (napi_complete_done re-enabling the IRQ) fires at
// once if the pending completions already satisfy the condition; otherwise the timer keeps
// running from the first pending completion.
//
// While masked the poll loop consumes completions (consumed()); only those left when the IRQ
// is re-enabled can raise the next one.
// The element never reads a clock: the back-end calls expire(now) at next_ready().
// Adaptive moderation (DIM) is algo::NetDim, which reprograms this through set_params().
// Deviations: the *-irq variants are not modelled; drivers that ignore `frames` are expressed by
// frames = 0 (docs/algorithms/irq_coalescer.md).

#include <cstdint>
#include <optional>

#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

class IrqCoalescer {
 public:
  struct Params {
    Duration usecs = Duration::zero();  // rx-usecs / tx-usecs; 0 = no timer
    int64_t frames = 1;                 // rx-frames / tx-frames; 0 = no frame threshold
    Validation validate() const;
  };
  struct Stats {
    uint64_t events = 0;       // on_event calls
    uint64_t completions = 0;  // frames/descriptors completed
    uint64_t interrupts = 0;   // interrupts raised
    uint64_t by_frames = 0;    // ... because the frame threshold was reached
    uint64_t by_timer = 0;     // ... because the usecs timer expired
    uint64_t on_unmask = 0;    // ... when NAPI re-enabled the interrupt
    Duration max_delay;        // longest first-completion-to-interrupt delay
    // Identity: interrupts == by_frames + by_timer + on_unmask.
  };

  IrqCoalescer() : IrqCoalescer(Params{}) {}
  explicit IrqCoalescer(const Params& params);

  // Records `count` completions at `now`. Returns true if an interrupt is raised now.
  bool on_event(Time now, uint32_t count = 1);
  // When the pending timer will raise an interrupt; nullopt if none is pending or masked.
  std::optional<Time> next_ready() const;
  // Timer service: raises the interrupt if the timer has expired at `now`.
  bool expire(Time now);
  // NAPI: mask while polling; unmask returns true if an interrupt is raised at once.
  void mask();
  bool unmask(Time now);
  // The driver's poll processed `count` of the pending completions (they no longer count toward
  // the next interrupt). The timer of any remaining ones keeps its original start.
  void consumed(uint64_t count);
  // The driver reprograms the moderation (ethtool -C, or adaptive moderation's work item): the
  // new values decide from now on; pending completions keep their first-pending time.
  void set_params(const Params& params) { params_ = require_valid(params); }

  bool masked() const { return masked_; }
  uint64_t pending() const { return pending_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  bool frames_reached() const {
    return params_.frames > 0 && pending_ >= static_cast<uint64_t>(params_.frames);
  }
  bool timer_expired(Time now) const {
    return params_.usecs > Duration::zero() && now - first_pending_ >= params_.usecs;
  }
  void raise(Time now, uint64_t& reason);

  Params params_;
  uint64_t pending_ = 0;  // completions since the last interrupt
  Time first_pending_;    // time of the first of them
  bool masked_ = false;
  Stats stats_;
};

}  // namespace nicsim::algo

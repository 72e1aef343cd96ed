#pragma once
// NetDim — Linux's Dynamic Interrupt Moderation for network queues (net_dim): every
// DIM_NEVENTS = 64 interrupts it compares the traffic rate of the last window with the one
// before and walks a table of five moderation profiles (usecs, frames) towards the one that
// moves the most bytes (then packets, then fewest interrupts).
//
// Behaviour follows Linux lib/dim/net_dim.c (commit 2b1333b80885: the RX/TX profile tables for
// the EQE and CQE period modes, net_dim_step, net_dim_exit_parking, net_dim_stats_compare,
// net_dim_decision, net_dim), lib/dim/dim.c (commit 01bc4ac9da94: dim_on_top, dim_turn,
// dim_park_on_top, dim_park_tired, dim_calc_stats) and include/linux/dim.h (DIM_NEVENTS 64,
// IS_SIGNIFICANT_DIFF: more than 10%, BIT_GAP). Ported behaviour, not code:
//  * on_interrupt(sample): the driver calls it at the end of each NAPI poll with its running
//    counters (events = interrupts, packets, bytes) and the time. A window starts at a sample
//    and ends at the first sample >= 64 events later (u16 event counter, wrap-aware).
//  * Stats of a window (dim_calc_stats): ppms, bpms, epms = ceil(x * 1000 / delta_us); a
//    window of 0 us decides nothing.
//  * Compare (net_dim_stats_compare) current against previous: bytes/ms first (more is
//    better), then packets/ms, then events/ms (fewer is better); a difference counts only if
//    it is more than 10% of the previous value; a previous value of 0 makes any current value
//    better (and events/ms 0 "same").
//  * Decide (net_dim_decision): GOING_RIGHT/LEFT turn round unless the stats got BETTER; if
//    then "on top" (steps_left > 1 and steps_right == 1 going right, mirrored going left) park
//    on top; else step: at the table's edge park on top, after 2 x 5 steps without parking
//    (tired) park tired. PARKING_ON_TOP leaves (towards the middle: left unless at profile 0)
//    when the stats differ; PARKING_TIRED leaves after as many windows as it was tired.
//    prev_stats is kept while parked on top, else replaced by the current window.
//  * A decision that changes the profile moves to APPLY_NEW_PROFILE: the driver applies
//    profile() (Linux: in a work item) and calls profile_applied(); no windows are measured
//    meanwhile (the next on_interrupt after it starts a new window).
// Default profile (net_dim_get_def_rx_moderation): index 1 in both modes, default_profile().
//
// Units: usecs in microseconds, frames as the profile's pkts; samples carry Time (no clock is
// read). Deviation: the completion counter (cpms, cpe_ratio — used only by RDMA DIM) is absent.

#include <array>
#include <cstdint>

#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

class NetDim {
 public:
  // DIM_CQ_PERIOD_MODE_START_FROM_EQE (the timer restarts at each event) / _FROM_CQE (at each
  // completion; mlx5's default on ConnectX-5+ with CQE compression).
  enum class Mode : uint8_t { kEqe, kCqe };
  enum class Direction : uint8_t { kRx, kTx };
  enum class Tune : uint8_t { kParkingOnTop, kParkingTired, kGoingRight, kGoingLeft };
  enum class Phase : uint8_t { kStartMeasure, kMeasureInProgress, kApplyNewProfile };

  static constexpr int kProfiles = 5;   // NET_DIM_PARAMS_NUM_PROFILES
  static constexpr int kNEvents = 64;   // DIM_NEVENTS
  static constexpr int kDefaultIx = 1;  // NET_DIM_DEF_PROFILE_EQE / _CQE

  struct Profile {
    int64_t usecs = 0;   // dim_cq_moder.usec
    int64_t frames = 0;  // dim_cq_moder.pkts
    friend bool operator==(const Profile&, const Profile&) = default;
  };
  // The net_dim.c tables.
  static const std::array<Profile, kProfiles>& profiles(Direction d, Mode m);

  struct Params {
    Direction direction = Direction::kRx;
    Mode mode = Mode::kEqe;
    Validation validate() const { return std::nullopt; }
  };
  // dim_sample: the driver's running counters at the end of a poll.
  struct Sample {
    Time time;
    uint32_t packets = 0;
    uint32_t bytes = 0;
    uint16_t events = 0;
  };
  // dim_stats of one window.
  struct WindowStats {
    int64_t ppms = 0;  // packets per ms
    int64_t bpms = 0;  // bytes per ms
    int64_t epms = 0;  // events per ms
    friend bool operator==(const WindowStats&, const WindowStats&) = default;
  };
  struct State {
    Phase phase = Phase::kStartMeasure;
    // Drivers zero their struct dim (kzalloc / memset: bnxt, mlx5), so it starts parked on top
    // at profile 0 while the hardware runs the default profile (index 1) until the first
    // decision; the first window with traffic leaves the parking going right (to profile 1).
    Tune tune = Tune::kParkingOnTop;
    int profile_ix = 0;
    int steps_right = 0;
    int steps_left = 0;
    int tired = 0;
    WindowStats prev;
    Sample start;
  };
  struct Stats {
    uint64_t windows = 0;  // windows that reached DIM_NEVENTS and were decided
    uint64_t changes = 0;  // decisions that changed the profile
    uint64_t parked_top = 0;
    uint64_t parked_tired = 0;
  };

  NetDim() : NetDim(Params{}) {}
  explicit NetDim(const Params& params);

  // net_dim(dim, end_sample). Returns true when a new profile is to be applied.
  bool on_interrupt(const Sample& s);
  // The driver applied profile() (the work item ran): measuring starts again.
  void profile_applied() { state_.phase = Phase::kStartMeasure; }

  Profile profile() const { return table_[static_cast<size_t>(state_.profile_ix)]; }
  Profile default_profile() const { return table_[kDefaultIx]; }
  const State& state() const { return state_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

  // The pieces, public for tests: dim_calc_stats (false: a 0 us window) and
  // net_dim_stats_compare (-1 worse, 0 same, +1 better).
  static bool calc_stats(const Sample& start, const Sample& end, WindowStats& out);
  static int compare(const WindowStats& curr, const WindowStats& prev);

 private:
  enum class Step : uint8_t { kStepped, kTooTired, kOnEdge };
  Step step();
  void exit_parking();
  bool on_top() const;
  void turn();
  void park_on_top();
  void park_tired();
  bool decide(const WindowStats& curr);

  Params params_;
  const std::array<Profile, kProfiles>& table_;
  State state_;
  Stats stats_;
};

}  // namespace nicsim::algo

#include "nicsim/algo/net_dim.h"

#include <cstdlib>

namespace nicsim::algo {

namespace {

using P = NetDim::Profile;

// net_dim.c: NET_DIM_RX_EQE_PROFILES (pkts NET_DIM_DEFAULT_RX_CQ_PKTS_FROM_EQE = 256),
// NET_DIM_RX_CQE_PROFILES, NET_DIM_TX_EQE_PROFILES (NET_DIM_DEFAULT_TX_CQ_PKTS_FROM_EQE = 128),
// NET_DIM_TX_CQE_PROFILES.
constexpr std::array<P, NetDim::kProfiles> kRxEqe = {
    {{1, 256}, {8, 256}, {64, 256}, {128, 256}, {256, 256}}};
constexpr std::array<P, NetDim::kProfiles> kRxCqe = {
    {{2, 256}, {8, 128}, {16, 64}, {32, 64}, {64, 64}}};
constexpr std::array<P, NetDim::kProfiles> kTxEqe = {
    {{1, 128}, {8, 128}, {32, 128}, {64, 128}, {128, 128}}};
constexpr std::array<P, NetDim::kProfiles> kTxCqe = {
    {{5, 128}, {8, 64}, {16, 32}, {32, 32}, {64, 32}}};

// IS_SIGNIFICANT_DIFF: more than 10% of the reference (integer percent, as the kernel).
bool significant(int64_t val, int64_t ref) { return (100 * std::llabs(val - ref)) / ref > 10; }

int64_t div_round_up(uint64_t n, uint64_t d) { return static_cast<int64_t>((n + d - 1) / d); }

}  // namespace

const std::array<NetDim::Profile, NetDim::kProfiles>& NetDim::profiles(Direction d, Mode m) {
  if (d == Direction::kRx) {
    return m == Mode::kEqe ? kRxEqe : kRxCqe;
  }
  return m == Mode::kEqe ? kTxEqe : kTxCqe;
}

NetDim::NetDim(const Params& params)
    : params_(require_valid(params)), table_(profiles(params.direction, params.mode)) {}

bool NetDim::calc_stats(const Sample& start, const Sample& end, WindowStats& out) {
  // ktime_us_delta truncated to u32; the u32 counters wrap (BIT_GAP).
  const int64_t delta_ns = (end.time - start.time).count_ns();
  const uint32_t delta_us = static_cast<uint32_t>(delta_ns / 1000);
  if (delta_us == 0) {
    return false;
  }
  const uint32_t npkts = end.packets - start.packets;
  const uint32_t nbytes = end.bytes - start.bytes;
  // USEC_PER_MSEC is 1000L: the products are 64-bit on a 64-bit kernel.
  out.ppms = div_round_up(uint64_t{npkts} * 1000u, delta_us);
  out.bpms = div_round_up(uint64_t{nbytes} * 1000u, delta_us);
  out.epms = div_round_up(static_cast<uint64_t>(kNEvents) * 1000u, delta_us);
  return true;
}

int NetDim::compare(const WindowStats& curr, const WindowStats& prev) {
  if (prev.bpms == 0) {
    return curr.bpms != 0 ? 1 : 0;
  }
  if (significant(curr.bpms, prev.bpms)) {
    return curr.bpms > prev.bpms ? 1 : -1;
  }
  if (prev.ppms == 0) {
    return curr.ppms != 0 ? 1 : 0;
  }
  if (significant(curr.ppms, prev.ppms)) {
    return curr.ppms > prev.ppms ? 1 : -1;
  }
  if (prev.epms == 0) {
    return 0;
  }
  if (significant(curr.epms, prev.epms)) {
    return curr.epms < prev.epms ? 1 : -1;  // fewer interrupts for the same traffic
  }
  return 0;
}

NetDim::Step NetDim::step() {
  if (state_.tired == kProfiles * 2) {
    return Step::kTooTired;
  }
  switch (state_.tune) {
    case Tune::kParkingOnTop:
    case Tune::kParkingTired:
      break;
    case Tune::kGoingRight:
      if (state_.profile_ix == kProfiles - 1) {
        return Step::kOnEdge;
      }
      ++state_.profile_ix;
      ++state_.steps_right;
      break;
    case Tune::kGoingLeft:
      if (state_.profile_ix == 0) {
        return Step::kOnEdge;
      }
      --state_.profile_ix;
      ++state_.steps_left;
      break;
  }
  ++state_.tired;
  return Step::kStepped;
}

void NetDim::exit_parking() {
  state_.tune = state_.profile_ix != 0 ? Tune::kGoingLeft : Tune::kGoingRight;
  step();
}

bool NetDim::on_top() const {
  switch (state_.tune) {
    case Tune::kParkingOnTop:
    case Tune::kParkingTired:
      return true;
    case Tune::kGoingRight:
      return state_.steps_left > 1 && state_.steps_right == 1;
    case Tune::kGoingLeft:
      return state_.steps_right > 1 && state_.steps_left == 1;
  }
  return true;
}

void NetDim::turn() {
  if (state_.tune == Tune::kGoingRight) {
    state_.tune = Tune::kGoingLeft;
    state_.steps_left = 0;
  } else if (state_.tune == Tune::kGoingLeft) {
    state_.tune = Tune::kGoingRight;
    state_.steps_right = 0;
  }
}

void NetDim::park_on_top() {
  state_.steps_right = 0;
  state_.steps_left = 0;
  state_.tired = 0;
  state_.tune = Tune::kParkingOnTop;
  ++stats_.parked_top;
}

void NetDim::park_tired() {
  state_.steps_right = 0;
  state_.steps_left = 0;
  state_.tune = Tune::kParkingTired;
  ++stats_.parked_tired;
}

bool NetDim::decide(const WindowStats& curr) {
  const Tune prev_tune = state_.tune;
  const int prev_ix = state_.profile_ix;
  switch (state_.tune) {
    case Tune::kParkingOnTop:
      if (compare(curr, state_.prev) != 0) {
        exit_parking();
      }
      break;
    case Tune::kParkingTired:
      --state_.tired;
      if (state_.tired == 0) {
        exit_parking();
      }
      break;
    case Tune::kGoingRight:
    case Tune::kGoingLeft: {
      if (compare(curr, state_.prev) != 1) {
        turn();
      }
      if (on_top()) {
        park_on_top();
        break;
      }
      const Step r = step();
      if (r == Step::kOnEdge) {
        park_on_top();
      } else if (r == Step::kTooTired) {
        park_tired();
      }
      break;
    }
  }
  if (prev_tune != Tune::kParkingOnTop || state_.tune != Tune::kParkingOnTop) {
    state_.prev = curr;
  }
  return state_.profile_ix != prev_ix;
}

bool NetDim::on_interrupt(const Sample& s) {
  switch (state_.phase) {
    case Phase::kMeasureInProgress: {
      const uint16_t nevents = static_cast<uint16_t>(s.events - state_.start.events);
      if (nevents < kNEvents) {
        return false;
      }
      WindowStats curr;
      if (!calc_stats(state_.start, s, curr)) {
        return false;
      }
      ++stats_.windows;
      if (decide(curr)) {
        ++stats_.changes;
        state_.phase = Phase::kApplyNewProfile;
        return true;
      }
      state_.start = s;  // fallthrough to DIM_START_MEASURE
      return false;
    }
    case Phase::kStartMeasure:
      state_.start = s;
      state_.phase = Phase::kMeasureInProgress;
      return false;
    case Phase::kApplyNewProfile:
      return false;
  }
  return false;
}

}  // namespace nicsim::algo

#include "nicsim/sim/stage_times.h"

namespace nicsim::sim {

std::vector<report::StageTime> StageTimes::result(report::Direction dir) const {
  static const char* kNames[kStages] = {"qdisc", "ring", "wire", "rx", "forward"};
  const auto& a = acc_[static_cast<size_t>(dir)];
  std::vector<report::StageTime> out;
  for (size_t i = 0; i < (with_forward_ ? kStages : kForward); ++i) {
    const double mean =
        a[i].packets > 0 ? (a[i].total / static_cast<int64_t>(a[i].packets)).to_ms() : 0.0;
    out.push_back(report::StageTime{kNames[i], mean, a[i].packets});
  }
  return out;
}

}  // namespace nicsim::sim

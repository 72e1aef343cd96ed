#include "nicsim/model/cpu.h"

namespace nicsim::model {

Validation CpuCosts::validate() const {
  const struct {
    const char* key;
    Duration d;
  } costs[] = {{"per_interrupt", per_interrupt},       {"per_poll", per_poll},
               {"per_rx_frame", per_rx_frame},         {"per_tx_frame", per_tx_frame},
               {"per_tx_clean", per_tx_clean},         {"per_gso_segment", per_gso_segment},
               {"per_usb_transfer", per_usb_transfer}, {"per_kick", per_kick},
               {"per_forward", per_forward},           {"per_qdisc_op", per_qdisc_op}};
  for (const auto& c : costs) {
    if (c.d < Duration::zero()) {
      return ParamError{c.key, "CPU cost must be >= 0"};
    }
  }
  if (per_rx_packet < Duration::zero()) {
    return ParamError{"per_rx_packet", "CPU cost must be >= 0"};
  }
  if (per_rx_packet > per_rx_frame) {
    return ParamError{"per_rx_packet", "must be <= per_rx_frame (it is the stack's share of it)"};
  }
  if (copy_ps_per_byte < 0) {
    return ParamError{"copy_ps_per_byte", "CPU cost must be >= 0"};
  }
  return std::nullopt;
}

}  // namespace nicsim::model

#include "nicsim/config/host_nic.h"

#include "nicsim/model/platform_nic.h"
#include "nicsim/model/usb_nic.h"

namespace nicsim::config {

std::unique_ptr<model::Nic> make_host_nic(const HostConfig& h) {
  AnyQueue q = h.qdisc.build();
  if (h.nic.model == NicModel::kPlatform) {
    model::PlatformNic::Params p = h.nic.platform;
    p.qdisc_bypass = h.qdisc.can_bypass();
    return std::make_unique<model::PlatformNic>(p, std::move(q), h.cpu);
  }
  return std::make_unique<model::UsbNic>(h.nic.usb, std::move(q), h.cpu);
}

}  // namespace nicsim::config

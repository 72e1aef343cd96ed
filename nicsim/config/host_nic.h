#pragma once
// The NIC model of one scenario host: the preset + overrides' PlatformNic or UsbNic with the
// host's qdisc tree (qdisc bypass when the tree allows it) and CPU costs. Both back-ends build
// their NICs here, so a scenario host is the same device in `nicsim run` and `nicsim emulate`.

#include <memory>

#include "nicsim/config/scenario.h"
#include "nicsim/model/nic.h"

namespace nicsim::config {

// Throws InvalidParams when the host's NIC or qdisc parameters are invalid.
std::unique_ptr<model::Nic> make_host_nic(const HostConfig& host);

}  // namespace nicsim::config

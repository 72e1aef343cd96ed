#pragma once
// The NIC model of one scenario host, built as the simulator builds it (sim/simulation.cc
// make_nic): the preset + overrides' PlatformNic or UsbNic with the host's qdisc tree and CPU
// costs. The emulator runs it on real frames (Datapath).

#include <memory>

#include "nicsim/config/scenario.h"
#include "nicsim/model/nic.h"

namespace nicsim::emu {

// Throws InvalidParams when the host's NIC or qdisc parameters are invalid.
std::unique_ptr<model::Nic> make_host_nic(const config::HostConfig& host);

}  // namespace nicsim::emu

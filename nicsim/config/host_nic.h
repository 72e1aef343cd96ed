#pragma once
// The NIC model of one scenario interface (a host's only one, or a router's): the preset +
// overrides' PlatformNic or UsbNic with the interface's qdisc tree (qdisc bypass when the tree
// allows it) and its node's CPU costs; and a router's forwarding element over those NICs. Both
// back-ends build their NICs and routers here, so a scenario node is the same device in
// `nicsim run` and `nicsim emulate`.

#include <memory>

#include "nicsim/config/network.h"
#include "nicsim/config/scenario.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/router.h"
#include "nicsim/report/results.h"

namespace nicsim::config {

// Throws InvalidParams when the NIC or qdisc parameters are invalid.
std::unique_ptr<model::Nic> make_interface_nic(const NicConfig& nic, const QdiscConfig& qdisc,
                                               const model::CpuCosts& cpu);
// A host's NIC: make_interface_nic with the host's nic, qdisc and cpu.
std::unique_ptr<model::Nic> make_host_nic(const HostConfig& host);

// The shaping/scheduling qdiscs a packet passes in `qdisc` beyond a plain FIFO, each charged
// per_qdisc_op on a router (docs/presets.md, "Router costs"): 0 for pfifo / bfifo / pfifo_fast
// (their work is in per_tx_frame), 1 for any other kind, and for HTB 1 + the most of its leaves'.
int shaping_operations(const QdiscConfig& qdisc);

// Router node `node` of `net`: one NIC per interface (in the node's interface order) on the
// router's CPU, routes from net.egress() as local interface indexes, each interface's
// qdisc_cost = per_qdisc_op x shaping_operations. The NICs are not attached to wires yet.
std::unique_ptr<model::Router> make_router(const Network& net, int node);

// Appends the NIC's queue sample at `t` to a results queue series (docs/results.md
// "queues"): both back-ends sample their NICs with it.
void append_queue_sample(report::QueueSeries& s, Time t, const model::NicQueueSample& n);

}  // namespace nicsim::config

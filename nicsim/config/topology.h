#pragma once
// A scenario's network for people (`nicsim topology FILE [--dot]`): the nodes with their CPU,
// each interface's NIC preset and qdisc, each link per direction (rate, delay, loss, jitter) and
// every node's route table, as text or as a Graphviz graph (dot). Two-host files too: their
// [wire] is the one link.

#include <string>

#include "nicsim/config/network.h"
#include "nicsim/config/scenario.h"

namespace nicsim::config {

// The plain-text description: nodes (with interfaces), links, routes.
std::string topology_text(const Scenario& s, const Network& n);

// The same as an undirected Graphviz graph: hosts as boxes, routers as ellipses, one edge per
// link labelled with its directions, interface names and NICs at the edge's ends.
std::string topology_dot(const Scenario& s, const Network& n);

// "pfifo limit = 100": the qdisc's kind and the keys that differ from the kind's defaults.
std::string describe_qdisc(const QdiscConfig& q);

}  // namespace nicsim::config

#pragma once
// Node — one node of the simulated network (a host or a router) as an Engine process with one
// Wakeup at its next event. Its NICs read their incoming wires themselves, so after a node
// runs, every neighbour whose incoming wire got new frames is rescheduled (only new frames can
// move a NIC's next event earlier).

#include <cstdint>
#include <optional>
#include <vector>

#include "nicsim/model/wire.h"
#include "nicsim/sim/engine.h"

namespace nicsim::sim {

class Node : public Process {
 public:
  Node(Engine& engine) : wakeup_(engine, this, 0) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Interface `out` sends on wire `out`, which `peer` reads. In the node's interface order.
  void add_port(model::Wire* out, Node* peer) { ports_.push_back(Port{out, peer, 0}); }
  // Sets the wake-up to the node's next event (none after the end of the run).
  virtual void reschedule() = 0;

 protected:
  void set_wakeup(std::optional<Time> t) { wakeup_.set(t); }
  // Call before the node runs: remembers each outgoing wire's frame count.
  void note_wires() {
    for (Port& p : ports_) {
      p.sent_before = p.out->stats().frames;
    }
  }
  // Call after: reschedules the peers whose incoming wire got new frames.
  void wake_peers() {
    for (const Port& p : ports_) {
      if (p.out->stats().frames != p.sent_before) {
        p.peer->reschedule();
      }
    }
  }

 private:
  struct Port {
    model::Wire* out;
    Node* peer;
    uint64_t sent_before;
  };
  Engine::Wakeup wakeup_;
  std::vector<Port> ports_;
};

}  // namespace nicsim::sim

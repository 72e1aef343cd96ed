#pragma once
// Optional observation hook. Elements hold a non-owning `Observer*` (null by default) and call
// it on enqueue, dequeue, drop and ECN mark; they never print or write files. The report layer
// and the tests subscribe. Calls happen synchronously, before the element releases the packet,
// so an observer may inspect (not keep) it.

#include <cstdint>

#include "nicsim/core/packet.h"
#include "nicsim/core/time.h"

namespace nicsim {

enum class DropReason : uint8_t {
  kQueueFull,    // tail drop: packet or byte limit reached on arrival
  kOverlimit,    // fq_codel: packet limit, head drop from the fattest flow
  kOvermemory,   // fq_codel: memory limit, head drop from the fattest flow
  kCodel,        // CoDel control law at dequeue
  kTooBig,       // TBF: larger than the bucket can ever pass
  kRingFull,     // driver ring / device FIFO had no room
  kMalformed,    // framing decoder rejected it
  kWireLoss,     // random loss on the wire model
  kAqm,          // probabilistic early drop (PIE, FQ-PIE, DualPI2)
};

const char* to_string(DropReason r);

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_enqueue(Time /*now*/, const Packet& /*p*/) {}
  virtual void on_dequeue(Time /*now*/, const Packet& /*p*/) {}
  virtual void on_drop(Time /*now*/, const Packet& /*p*/, DropReason /*why*/) {}
  virtual void on_mark(Time /*now*/, const Packet& /*p*/) {}
};

}  // namespace nicsim

#pragma once
// Counters shared by every queueing element, with the identity the tests assert:
//
//   enqueued_packets == dequeued_packets + dropped_packets + backlog_packets
//   enqueued_bytes   == dequeued_bytes   + dropped_bytes   + backlog_bytes
//
// `enqueued` counts every packet offered to enqueue(), including one rejected on arrival
// (tail drop), which is then also counted in `dropped`. Drops taken from inside the queue
// (fq_codel's fattest-flow head drop, CoDel's dequeue-time drops) count in `dropped` too.
// ECN marks are not drops: a marked packet is still dequeued. Counters only grow.

#include <cstdint>

namespace nicsim {

struct QueueStats {
  uint64_t enqueued_packets = 0;
  uint64_t enqueued_bytes = 0;
  uint64_t dequeued_packets = 0;
  uint64_t dequeued_bytes = 0;
  uint64_t dropped_packets = 0;
  uint64_t dropped_bytes = 0;
  uint64_t ecn_marked = 0;
  uint64_t overlimits = 0;  // times a non-work-conserving element refused to release (tc -s)
};

}  // namespace nicsim

#pragma once
// Fifo — tail-drop FIFO with a packet limit and/or a byte limit.
//
// Behaviour follows Linux net/sched/sch_fifo.c: pfifo accepts while qlen < limit (packets);
// bfifo accepts while backlog + len <= limit (bytes). Here both limits may be active at once
// (a packet must satisfy both). Default packet limit 1000 = DEFAULT_TX_QUEUE_LEN (txqueuelen of
// an Ethernet device, include/linux/netdevice.h), which is what pfifo uses when no limit is
// given. Work-conserving: next_ready is `now` whenever it holds a packet.
// Units: bytes are skb->len. Deviations: none known (docs/algorithms/fifo.md).

#include <cstdint>
#include <optional>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"

namespace nicsim::algo {

class Fifo {
 public:
  struct Params {
    int64_t limit_packets = 1000;  // pfifo limit; 0 = no packet limit (byte limit only)
    int64_t limit_bytes = 0;       // bfifo limit in bytes; 0 = no byte limit
    Validation validate() const;
  };
  using Stats = QueueStats;

  Fifo() : Fifo(Params{}) {}
  explicit Fifo(const Params& params);

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  const Packet* peek(Time now) const;
  std::optional<Time> next_ready(Time now) const;

  uint64_t backlog_packets() const { return queue_.size(); }
  uint64_t backlog_bytes() const { return backlog_bytes_; }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o) { observer_ = o; }

 private:
  bool has_room_for(uint32_t len) const;

  Params params_;
  PacketFifo queue_;
  uint64_t backlog_bytes_ = 0;
  Stats stats_;
  Observer* observer_ = nullptr;
};

static_assert(QueueElement<Fifo>);

}  // namespace nicsim::algo

// Put BQL (nicsim::algo::Dql, the kernel's lib/dynamic_queue_limits.c) in your own driver model:
// a toy NIC with a transmit ring that completes its frames in batches on a coalesced TX
// interrupt. The driver reports bytes it queues (netdev_tx_sent_queue -> Dql::queued), stops the
// queue when Dql::avail() goes negative, and on each completion interrupt reports the completed
// bytes (netdev_tx_completed_queue -> Dql::completed) and wakes the queue. The stack keeps
// the queue full. Prints the limit BQL settles on and how long a frame waits in the ring, for
// two interrupt coalescing intervals. docs/library.md walks through it.
#include <algorithm>
#include <cstdio>
#include <deque>

#include "nicsim/algo/dql.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"

using namespace nicsim;

// The driver model: a ring of frame lengths, the wire draining it at `rate`, completions
// reported every `irq_interval`.
class ToyDriver {
 public:
  ToyDriver(Rate rate, Duration irq_interval) : rate_(rate), irq_interval_(irq_interval) {}

  // ndo_start_xmit: the stack calls it while the queue is not stopped.
  void xmit(uint32_t len, Time now) {
    ring_.push_back(Frame{len, now});
    dql_.queued(len);
    if (dql_.avail() < 0) {  // netif_tx_stop_queue: BQL says the ring holds enough
      stopped_ = true;
    }
  }
  bool stopped() const { return stopped_; }

  // Advances the wire to `now`; on interrupt ticks, completes what it sent and wakes the queue.
  void run_until(Time now) {
    while (!ring_.empty() && wire_free_ + rate_.transmit_time(ring_.front().len) <= now) {
      const Frame f = ring_.front();
      ring_.pop_front();
      wire_free_ = std::max(wire_free_, f.queued_at) + rate_.transmit_time(f.len);
      sent_bytes_ += f.len;
      ring_wait_ms_ += (wire_free_ - f.queued_at).to_ms();
      ++frames_;
    }
    if (now >= next_irq_) {
      dql_.completed(sent_bytes_, now);  // netdev_tx_completed_queue
      sent_bytes_ = 0;
      next_irq_ = now + irq_interval_;
      stopped_ = dql_.avail() < 0;
    }
    if (ring_.empty()) {
      wire_free_ = std::max(wire_free_, now);
    }
  }

  uint32_t bql_limit() const { return dql_.limit(); }
  double mean_ring_wait_ms() const { return frames_ ? ring_wait_ms_ / frames_ : 0.0; }

 private:
  struct Frame {
    uint32_t len;
    Time queued_at;
  };
  algo::Dql dql_{algo::Dql::Params{}};  // the kernel's defaults: hold time 1 s, HZ 250
  Rate rate_;
  Duration irq_interval_;
  std::deque<Frame> ring_;
  bool stopped_ = false;
  Time wire_free_ = Time::zero();
  Time next_irq_ = Time::zero();
  uint32_t sent_bytes_ = 0;  // sent since the last completion interrupt
  double ring_wait_ms_ = 0;
  uint64_t frames_ = 0;
};

int main() {
  const Rate rate = Rate::mbit(100);
  const Duration irqs[2] = {Duration::us(250), Duration::ms(2)};
  uint32_t limits[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ToyDriver driver(rate, irqs[i]);
    Time now = Time::zero();
    for (int step = 0; step < 50'000; ++step) {  // 50 us steps: 2.5 s, past BQL's hold time
      now += Duration::us(50);
      while (!driver.stopped()) {  // a bulk sender: the qdisc always has a 1514-byte frame
        driver.xmit(1514, now);
      }
      driver.run_until(now);
    }
    limits[i] = driver.bql_limit();
    std::printf(
        "TX interrupt every %6.3f ms: BQL limit %6u bytes, mean wait in the ring %6.3f ms\n",
        irqs[i].to_ms(), limits[i], driver.mean_ring_wait_ms());
  }
  // BQL's point, checked: coarser completions need (and get) a larger limit.
  return limits[1] > limits[0] ? 0 : 1;
}

// Drive the fq_codel queue (nicsim::algo::FqCodel, RFC 8290) packet by packet on your own clock:
// two bulk flows and one sparse flow share a 10 Mbit/s link for two seconds. The sparse flow's
// packets skip the bulk flows' standing queue (fq_codel's new-flows list). The bulk sources have
// no congestion control, so CoDel's drops do not slow them and their queues grow. Prints each
// flow's mean sojourn and CoDel's drops.
// docs/library.md walks through it.
#include <algorithm>
#include <cstdio>

#include "nicsim/algo/fq_codel.h"
#include "nicsim/core/rate.h"
#include "nicsim/core/time.h"

using namespace nicsim;

int main() {
  algo::FqCodel q(algo::FqCodel::Params{});  // the kernel's defaults: 1024 flows, 5 ms / 100 ms
  const Rate link = Rate::mbit(10);
  const uint32_t kFlowHash[3] = {0x1111'0000u, 0x2222'0000u, 0x3333'0000u};  // bulk, bulk, sparse
  double sojourn_ms[3] = {0, 0, 0};
  int sent[3] = {0, 0, 0};
  Time now = Time::zero();
  Time link_free = Time::zero();
  uint64_t next_id = 1;

  for (int step = 0; step < 20'000; ++step) {  // 100 us steps: two seconds
    now += Duration::us(100);
    // Each bulk flow offers 1514 bytes every 0.5 ms (24 Mbit/s each, 4.8x the link together).
    for (int f = 0; f < 2; ++f) {
      if (step % 5 == 0) {
        Packet p;
        p.id = next_id++;
        p.len = 1514;
        p.flow_hash = kFlowHash[f];
        p.flow_id = static_cast<uint32_t>(f);
        q.enqueue(std::move(p), now);
      }
    }
    if (step % 100 == 0) {  // the sparse flow: a 100-byte packet every 10 ms
      Packet p;
      p.id = next_id++;
      p.len = 100;
      p.flow_hash = kFlowHash[2];
      p.flow_id = 2;
      q.enqueue(std::move(p), now);
    }
    // The link takes the next packet when it is free; its sojourn is now - enqueue time.
    while (link_free <= now) {
      std::optional<Packet> p = q.dequeue(now);
      if (!p) {
        break;
      }
      sojourn_ms[p->flow_id] += (now - p->enqueue_ts).to_ms();
      ++sent[p->flow_id];
      link_free = std::max(link_free, now) + link.transmit_time(p->len);
    }
  }

  const char* names[3] = {"bulk 1", "bulk 2", "sparse"};
  for (int f = 0; f < 3; ++f) {
    std::printf("%-7s sent %5d packets, mean sojourn %7.3f ms\n", names[f], sent[f],
                sent[f] ? sojourn_ms[f] / sent[f] : 0.0);
  }
  const algo::FqCodel::Stats& s = q.stats();
  std::printf("CoDel drops %llu, overlimit drops %llu, backlog %llu packets\n",
              static_cast<unsigned long long>(s.codel.drop_count),
              static_cast<unsigned long long>(s.drop_overlimit),
              static_cast<unsigned long long>(q.backlog_packets()));
  // fq_codel's promise, checked: the sparse flow waits far less than the bulk flows.
  return sent[2] > 0 && sojourn_ms[2] / sent[2] < 1.0 ? 0 : 1;
}

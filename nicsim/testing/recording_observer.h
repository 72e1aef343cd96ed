#pragma once
// Test helper: an Observer that records every event with the packet id.

#include <cstdint>
#include <vector>

#include "nicsim/core/observer.h"

namespace nicsim::testing {

class RecordingObserver : public Observer {
 public:
  struct Event {
    enum Kind { kEnqueue, kDequeue, kDrop, kMark } kind;
    Time at;
    uint64_t id;
    uint32_t len;
    DropReason reason;
  };
  void on_enqueue(Time now, const Packet& p) override {
    events.push_back({Event::kEnqueue, now, p.id, p.len, DropReason::kQueueFull});
  }
  void on_dequeue(Time now, const Packet& p) override {
    events.push_back({Event::kDequeue, now, p.id, p.len, DropReason::kQueueFull});
  }
  void on_drop(Time now, const Packet& p, DropReason why) override {
    events.push_back({Event::kDrop, now, p.id, p.len, why});
  }
  void on_mark(Time now, const Packet& p) override {
    events.push_back({Event::kMark, now, p.id, p.len, DropReason::kQueueFull});
  }
  size_t count(Event::Kind k) const {
    size_t n = 0;
    for (const Event& e : events) {
      n += e.kind == k ? 1 : 0;
    }
    return n;
  }
  std::vector<uint64_t> ids(Event::Kind k) const {
    std::vector<uint64_t> out;
    for (const Event& e : events) {
      if (e.kind == k) {
        out.push_back(e.id);
      }
    }
    return out;
  }
  std::vector<Event> events;
};

}  // namespace nicsim::testing

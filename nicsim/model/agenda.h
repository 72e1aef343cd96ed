#pragma once
// Agenda — a model's private list of future actions, ordered by (time, insertion sequence).
//
// Models are deterministic state machines that never read a clock; when an action is due later
// (a frame's last bit, a coalescing timer, a CPU job's completion) they put it on their agenda,
// report the earliest time through next_event(), and run everything due when the back-end calls
// advance(now). Ties run in insertion order, so runs are reproducible. The payload is a small
// trivially-copyable struct chosen by the model (no std::function, no allocation per action
// once the heap has grown).

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "nicsim/core/time.h"

namespace nicsim::model {

template <class Action>
class Agenda {
 public:
  void schedule(Time at, const Action& action) { heap_.push(Entry{at, next_seq_++, action}); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  std::optional<Time> next_time() const {
    return heap_.empty() ? std::nullopt : std::optional<Time>(heap_.top().at);
  }
  // Removes and returns the earliest action if it is due at or before `now`.
  std::optional<std::pair<Time, Action>> pop_due(Time now) {
    if (heap_.empty() || heap_.top().at > now) {
      return std::nullopt;
    }
    Entry e = heap_.top();
    heap_.pop();
    return std::make_pair(e.at, e.action);
  }

 private:
  struct Entry {
    Time at;
    uint64_t seq;
    Action action;
    bool operator>(const Entry& o) const {
      return at != o.at ? at > o.at : seq > o.seq;
    }
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace nicsim::model

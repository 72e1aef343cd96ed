#pragma once
// Engine — the discrete-event core of the simulator.
//
// Events are ordered by (time, insertion sequence): ties run in the order they were scheduled,
// so a run with the same inputs and seed is bit-for-bit reproducible (style-anchors lesson 6).
// No global state: several engines can run in one process (sweeps, tests, `[vary]` runs).
// An event targets a Process with a 64-bit tag; a process that reschedules itself often (a
// NIC model's next_event) uses a Wakeup, which keeps only its latest time live and lets stale
// entries fall through cheaply (lazy deletion), so rescheduling never searches the heap.

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "nicsim/core/time.h"

namespace nicsim::sim {

class Process {
 public:
  virtual ~Process() = default;
  virtual void on_event(Time now, uint64_t tag) = 0;
};

class Engine {
 public:
  struct Stats {
    uint64_t scheduled = 0;
    uint64_t executed = 0;  // events delivered to processes
    uint64_t stale = 0;     // superseded Wakeup entries skipped
  };

  Time now() const { return now_; }
  // Schedules `p->on_event(at, tag)`. `at` earlier than now() runs at now() (never back in time).
  void schedule(Time at, Process* p, uint64_t tag) {
    heap_.push(Entry{at < now_ ? now_ : at, seq_++, p, tag, 0, nullptr});
    ++stats_.scheduled;
  }
  // Runs events in order until the queue is empty or the next event is after `until`; the
  // clock then stands at `until` (or at the last event if the queue emptied earlier).
  void run_until(Time until);
  // Runs exactly one event if any is due at or before `until`; returns whether it did.
  bool step(Time until);
  std::optional<Time> next_time() const;
  bool empty() const { return heap_.empty(); }
  const Stats& stats() const { return stats_; }

  // A self-rescheduling timer for one process: set(t) replaces any earlier setting.
  class Wakeup {
   public:
    Wakeup(Engine& engine, Process* p, uint64_t tag) : engine_(&engine), p_(p), tag_(tag) {}
    // Sets the wakeup to `at` (nullopt cancels it). Setting the same time again is free.
    void set(std::optional<Time> at);
    std::optional<Time> when() const { return armed_ ? std::optional<Time>(at_) : std::nullopt; }

   private:
    friend class Engine;
    Engine* engine_;
    Process* p_;
    uint64_t tag_;
    uint64_t generation_ = 0;
    Time at_;
    bool armed_ = false;
  };

 private:
  struct Entry {
    Time at;
    uint64_t seq;
    Process* process;
    uint64_t tag;
    uint64_t generation;  // for Wakeup entries: must match the Wakeup's current generation
    Wakeup* wakeup;       // null for plain events
    bool operator>(const Entry& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  void dispatch(const Entry& e);

  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
  uint64_t seq_ = 0;
  Time now_;
  Stats stats_;
};

}  // namespace nicsim::sim

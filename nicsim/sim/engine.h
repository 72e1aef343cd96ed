#pragma once
// Engine — the discrete-event core of the simulator.
//
// Events are ordered by (time, insertion sequence): ties run in the order they were scheduled,
// so a run with the same inputs and seed is bit-for-bit reproducible.
// No global state: several engines can run in one process (sweeps, tests, `[vary]` runs).
// An event targets a Process with a 64-bit tag; a process that reschedules itself often (a
// host's next wake-up) uses a Wakeup, which has at most one pending entry: setting it again
// re-keys that entry in place (an indexed heap; each Wakeup knows its entry's position), and
// while it fires its entry stays at the root, so the usual "fire, then set the next time"
// costs one sift-down instead of a pop and a push.
//
// The pending set is a 4-ary min-heap over (time, sequence): half the depth of a binary heap
// and the four children of a node on one or two cache lines. Any heap gives the same order —
// the key is unique — so the data structure never changes what a simulation computes.

#include <cstddef>
#include <cstdint>
#include <optional>
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
    uint64_t scheduled = 0;    // schedule() calls plus Wakeup settings that changed the time
    uint64_t executed = 0;     // events delivered to processes
    uint64_t rescheduled = 0;  // of `scheduled`: a pending or firing Wakeup re-keyed in place
  };

  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Time now() const { return now_; }
  // Schedules `p->on_event(at, tag)`. `at` earlier than now() runs at now() (never back in time).
  void schedule(Time at, Process* p, uint64_t tag) {
    push(Node{key_of(at < now_ ? now_ : at, seq_++), p, tag, nullptr});
    ++stats_.scheduled;
  }
  // Runs events in order until the queue is empty or the next event is after `until`; the
  // clock then stands at `until` (or at the last event if the queue emptied earlier).
  void run_until(Time until);
  // Runs exactly one event if any is due at or before `until`; returns whether it did.
  bool step(Time until);
  // The time of the earliest pending event (not meaningful from inside on_event, where the
  // firing Wakeup's entry is still at the root).
  std::optional<Time> next_time() const;
  bool empty() const { return heap_.empty(); }
  size_t pending() const { return heap_.size(); }
  const Stats& stats() const { return stats_; }

  // A self-rescheduling timer for one process: set(t) replaces any earlier setting. It must
  // not outlive its Engine, and it stays where it was constructed (its pending entry points
  // at it).
  class Wakeup {
   public:
    Wakeup(Engine& engine, Process* p, uint64_t tag) : engine_(&engine), p_(p), tag_(tag) {}
    ~Wakeup() { set(std::nullopt); }
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;
    // Sets the wakeup to `at` (nullopt cancels it). Setting the same time again is free.
    void set(std::optional<Time> at);
    std::optional<Time> when() const { return armed_ ? std::optional<Time>(at_) : std::nullopt; }

   private:
    friend class Engine;
    Engine* engine_;
    Process* p_;
    uint64_t tag_;
    Time at_;
    size_t pos_ = 0;       // index of its entry in the heap, while it has one
    bool armed_ = false;   // a setting is pending
    bool firing_ = false;  // on_event is running; the entry is still in the heap
  };

 private:
  // (time, sequence) as one unsigned 128-bit number, so a comparison is two machine compares:
  // the time's sign bit flipped (order-preserving for any int64) above the sequence.
  using Key = unsigned __int128;
  static Key key_of(Time at, uint64_t seq) {
    const uint64_t t = static_cast<uint64_t>(at.ns_since_epoch()) ^ (uint64_t{1} << 63);
    return (static_cast<Key>(t) << 64) | seq;
  }
  static Time time_of(Key k) {
    return Time::from_ns(
        static_cast<int64_t>(static_cast<uint64_t>(k >> 64) ^ (uint64_t{1} << 63)));
  }
  struct Node {
    Key key;
    Process* process;
    uint64_t tag;
    Wakeup* wakeup;  // null for plain events
    bool before(const Node& o) const { return key < o.key; }
  };
  static constexpr size_t kArity = 4;

  void push(const Node& n);
  void remove(size_t pos);
  void rekey(size_t pos, Time at);
  // Puts `n` at `pos` (a hole) and moves it up / down until the heap order holds again.
  void sift_up(size_t pos, Node n);
  void sift_down(size_t pos, Node n);
  void place(size_t pos, const Node& n) {
    heap_[pos] = n;
    if (n.wakeup != nullptr) {
      n.wakeup->pos_ = pos;
    }
  }

  std::vector<Node> heap_;
  uint64_t seq_ = 0;
  Time now_;
  Stats stats_;
};

}  // namespace nicsim::sim

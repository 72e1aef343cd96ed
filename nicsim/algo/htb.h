#pragma once
// Htb — the Linux hierarchical token bucket qdisc.
//
// Behaviour follows Linux net/sched/sch_htb.c as described in docs/mechanisms §9.1 and
// §9.3 (facts only; no kernel code is copied). A tree of classes: every class has a rate
// bucket (`tokens`, depth `buffer`) and a ceil bucket (`ctokens`, depth `cbuffer`), both kept
// in nanoseconds of transmission time at rate / ceil (psched_l2t_ns), capped at the bucket
// depth and floored at 1 - mbuffer (mbuffer = 60 s). From them each class has a mode:
//   CANT_SEND  ctokens < lowater                 (over ceil: may not send at all)
//   CAN_SEND   else tokens >= hiwater            (within rate: sends on its own tokens)
//   MAY_BORROW otherwise                         (over rate, under ceil: borrows)
// with lowater = hiwater = 0 unless the hysteresis of old kernels is switched on.
// Leaves hold a qdisc each (default: pfifo of 1000 packets). A backlogged leaf that is
// CAN_SEND sits in the row of level 0 at its priority; a MAY_BORROW class hooks into its
// parent's "feed" for the priority, and so on up to the first CAN_SEND ancestor, which sits
// in the row of its own level. Dequeue serves the direct queue first, then scans levels 0..7
// and priorities 0..7 (lower first), processing the level's due mode-change events before
// the level, and descends from the row through the feeds to a leaf with per-feed DRR
// pointers (classes ordered by class id; deficit[level] per leaf, quantum = rate / r2q
// clamped to [1000, 200000] bytes unless given). The packet is charged from the leaf to the
// root: rate tokens for classes at levels >= the level it was found at (lends), "borrows"
// for the lower ones, ceil tokens for all.
//
// Class ids are tc minor numbers of major 1, written in hex as tc does: id 0x10 is "1:10".
// Levels are the kernel's: leaves 0, a top-level inner class 7, its inner children 6, ...
//
// Units: tokens, buffers and times in nanoseconds; bytes are skb->len; rates in bit/s.
//
// Deviations (docs/algorithms/htb.md):
//  - Transmission time is exact, rounded up (Rate::transmit_time); the kernel uses a
//    mult/shift approximation (psched_l2t_ns) and tc rounds buffer to 64 ns ticks.
//  - Rows and feeds are id-sorted small vectors instead of rb-trees, the event queue per level
//    is a binary heap ordered by (time, insertion) instead of an rb-tree; the visiting order,
//    DRR pointers (including last_ptr_id recovery) and event order are the kernel's.
//  - No "too many events" jiffy guard; no near_ev_cache (the heap top is read directly).
//  - next_ready() returns the exact earliest time a backlogged leaf can be served (what a
//    simulator needs); the kernel's watchdog instant (earliest pending mode-change event,
//    possibly earlier and fruitless) is next_event().
//  - No tc filters: classification is Params::classify (or the skb->priority rule, see there).
//  - Per-class `drops` counts every drop inside the leaf qdisc (the kernel counts enqueue
//    drops only); `giants` is kept for tc -s parity and, as in modern kernels, stays 0.
//  - A class cannot be deleted or changed after it is added.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/core/element.h"
#include "nicsim/core/packet_fifo.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/rate.h"

namespace nicsim::algo {

class Htb {
 public:
  static constexpr int kMaxDepth = 8;                    // TC_HTB_MAXDEPTH (levels 0..7)
  static constexpr int kNumPrio = 8;                     // TC_HTB_NUMPRIO (prio 0..7)
  static constexpr uint32_t kMaxClassId = 0xFFFF;        // minor part of a classid
  static constexpr uint32_t kDirect = 0xFFFFFFFFu;       // classifier result "1:0": direct queue
  static constexpr Duration kMbuffer = Duration::s(60);  // cl->mbuffer, max token wait

  enum class Mode : uint8_t { kCantSend = 0, kMayBorrow = 1, kCanSend = 2 };

  // Returns a class id (minor), 0 for "unclassified" (→ default class) or kDirect.
  using Classifier = std::function<uint32_t(const Packet&)>;

  struct Params {
    // `default` minor id of the class for unclassified packets; 0 = none. If that class does
    // not exist or is an inner class, unclassified packets use the direct queue (htb_classify).
    uint32_t default_class = 0;
    // quantum = rate_bytes_per_s / r2q (tc `r2q`, 10 by default in iproute2 tc/q_htb.c).
    int64_t r2q = 10;
    // Direct (unshaped) queue length in packets; default = txqueuelen 1000
    // (DEFAULT_TX_QUEUE_LEN, as htb_init uses when TCA_HTB_DIRECT_QLEN is absent).
    int64_t direct_qlen = 1000;
    // Module parameter htb_hysteresis: 0 (off) in modern kernels.
    bool hysteresis = false;
    // Filter stand-in. Empty: the skb->priority rule of htb_classify — a packet whose
    // `priority` equals the minor id of an existing leaf goes to that leaf (our priority field
    // holds the minor only, so only leaves 1:1..1:f are reachable); otherwise default class.
    // A result naming an inner or missing class also falls back to the default class.
    Classifier classify{};

    Validation validate() const;
  };

  struct ClassParams {
    uint32_t id = 0;      // minor id, 1..0xffff ("1:10" is 0x10)
    uint32_t parent = 0;  // parent minor id; 0 = attached to the qdisc root
    Rate rate{};          // guaranteed rate; must be > 0
    Rate ceil{};          // maximum rate; zero = rate (tc default "ceil = rate")
    int64_t burst = 0;    // bytes; 0 = tc default rate/HZ + mtu with HZ = 1e9 (§9.3)
    int64_t cburst = 0;   // bytes; 0 = tc default ceil/HZ + mtu
    int64_t mtu = 1600;   // tc `mtu`, only used for the default burst/cburst (iproute2 1600)
    int64_t prio = 0;     // 0..7, lower is served first (leaves only)
    int64_t quantum = 0;  // DRR quantum in bytes; 0 = rate_bytes_per_s / r2q, clamped
    AnyQueue leaf{};      // leaf qdisc; empty = pfifo with limit 1000 (qdisc_create_dflt)

    Validation validate() const;
  };

  // Per-class counters, as `tc -s class show` reports them (tokens in ns, not ticks).
  struct ClassStats {
    uint64_t bytes = 0;  // bytes sent through the class (leaf: dequeued; inner: charged)
    uint64_t packets = 0;
    uint64_t drops = 0;       // packets dropped inside this leaf's qdisc
    uint64_t overlimits = 0;  // transitions into CANT_SEND
    uint64_t lends = 0;       // packets charged to this class at its own level
    uint64_t borrows = 0;     // packets sent by a descendant on an ancestor's tokens
    uint64_t giants = 0;      // never incremented (as in modern kernels)
    int64_t tokens = 0;       // ns of transmission at rate, as of the last update (t_c)
    int64_t ctokens = 0;      // ns of transmission at ceil
    Mode mode = Mode::kCanSend;
    int level = 0;
    int64_t quantum = 0;
    int64_t buffer = 0;   // ns
    int64_t cbuffer = 0;  // ns
    uint64_t backlog_packets = 0;
    uint64_t backlog_bytes = 0;
  };

  // QueueStats for the whole qdisc (overlimits = transitions into CANT_SEND, as q->overlimits)
  // plus direct_packets (q->direct_pkts: packets that went through the direct queue).
  struct Stats : QueueStats {
    uint64_t direct_packets = 0;
  };

  Htb() : Htb(Params{}) {}
  explicit Htb(Params params);
  Htb(Htb&&) noexcept;
  Htb& operator=(Htb&&) noexcept;
  Htb(const Htb&) = delete;
  Htb& operator=(const Htb&) = delete;
  ~Htb();

  // Adds a class (tc class add). Throws InvalidParams naming the class and key, e.g.
  // "class 1:10 ceil: must be >= rate ...". A new class starts CAN_SEND with full buckets and
  // t_c = now. Adding a child to an empty leaf turns it into an inner class (its qdisc is
  // discarded), as htb_change_class does; a leaf holding packets is rejected.
  void add_class(ClassParams params, Time now = Time::zero());

  Verdict enqueue(Packet&& p, Time now);
  std::optional<Packet> dequeue(Time now);
  // Like qdisc_peek_dequeued: runs dequeue (charging tokens) and stashes the packet, which the
  // next dequeue() returns. The stashed packet still counts in the backlog.
  const Packet* peek(Time now);
  // Exact earliest time at which dequeue() can return a packet, assuming no other call in
  // between; `now` if it can now; nullopt when empty.
  std::optional<Time> next_ready(Time now) const;
  // Earliest pending class mode-change event: where the kernel arms its qdisc watchdog after a
  // dequeue that returned nothing. nullopt if no class waits for a mode change.
  std::optional<Time> next_event() const;

  uint64_t backlog_packets() const { return backlog_packets_ + (stash_ ? 1 : 0); }
  uint64_t backlog_bytes() const { return backlog_bytes_ + (stash_ ? stash_->len : 0); }
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }
  void set_observer(Observer* o);

  bool has_class(uint32_t id) const { return index_of(id) >= 0; }
  // Throws std::out_of_range for an unknown id.
  ClassStats class_stats(uint32_t id) const;
  // The leaf's qdisc (e.g. leaf(0x10).get<FqCodel>()); throws std::out_of_range if `id` is
  // not a leaf.
  AnyQueue& leaf(uint32_t id);
  uint64_t direct_backlog() const { return direct_queue_.size(); }

  // "1:10" for id 0x10.
  static std::string class_name(uint32_t id);

 private:
  // htb_prio: a row (per level and prio, holds CAN_SEND classes of that level) or an inner
  // class's feed (per prio, holds MAY_BORROW children). Members sorted by class id, like the
  // kernel's rb-tree; `ptr` is the DRR position (-1 = NULL), `last_ptr_id` the id to resume
  // from when the pointed-to class left the feed.
  struct Feed {
    // (class id << 32) | class index, ascending: ordered by class id like the rb-tree.
    std::vector<uint64_t> keys;
    int32_t ptr = -1;
    uint32_t last_ptr_id = 0;

    static uint64_t key(uint32_t id, int32_t cl) {
      return (uint64_t{id} << 32) | static_cast<uint32_t>(cl);
    }
    static int32_t index(uint64_t k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }
    bool empty() const { return keys.empty(); }
    int32_t first() const { return index(keys.front()); }
    void insert(uint32_t id, int32_t cl) {
      const uint64_t k = key(id, cl);
      keys.push_back(k);
      size_t i = keys.size() - 1;
      for (; i > 0 && keys[i - 1] > k; --i) {
        keys[i] = keys[i - 1];
      }
      keys[i] = k;
    }
    void erase(uint32_t id, int32_t cl) {
      const uint64_t k = key(id, cl);
      const size_t n = keys.size();
      size_t i = 0;
      while (i < n && keys[i] != k) {
        ++i;
      }
      if (i == n) {
        return;
      }
      for (; i + 1 < n; ++i) {
        keys[i] = keys[i + 1];
      }
      keys.pop_back();
    }
    // The member after `cl` (whose id is `id`), -1 past the end (rb_next).
    int32_t next(uint32_t id, int32_t cl) const {
      const uint64_t k = key(id, cl);
      const size_t n = keys.size();
      for (size_t i = 0; i < n; ++i) {
        if (keys[i] == k) {
          return i + 1 < n ? index(keys[i + 1]) : -1;
        }
      }
      return -1;
    }
    // First member with class id >= id, -1 if none (htb_id_find_next_upper).
    int32_t find_next_upper(uint32_t id) const {
      const uint64_t k = uint64_t{id} << 32;
      for (uint64_t m : keys) {
        if (m >= k) {
          return index(m);
        }
      }
      return -1;
    }
  };

  // psched_l2t_ns for one rate: ceil(bytes * 8e9 / bps), exact, without a division on the
  // packet path (a 128-bit multiply by a precomputed reciprocal and one correction step).
  struct L2t {
    uint64_t bps = 1;
    uint64_t magic = ~uint64_t{0};  // floor((2^64 - 1) / bps)
    static L2t of(Rate r) { return L2t{r.bits_per_sec(), ~uint64_t{0} / r.bits_per_sec()}; }
    int64_t operator()(uint32_t bytes) const {
      if (bytes >= (uint32_t{1} << 31)) {
        return Rate::bps(bps).transmit_time(bytes).count_ns();
      }
      const uint64_t num = uint64_t{bytes} * 8'000'000'000ull;  // < 2^64 for bytes < 2^31
      // q <= floor(num / bps) <= q + 1 (see docs/algorithms/htb.md).
      uint64_t q = static_cast<uint64_t>((static_cast<unsigned __int128>(num) * magic) >> 64);
      uint64_t r = num - q * bps;
      if (r >= bps) {
        ++q;
        r -= bps;
      }
      return static_cast<int64_t>(q + (r != 0 ? 1 : 0));
    }
  };

  struct Class {
    uint32_t id = 0;
    int32_t parent = -1;  // index into classes_, -1 = root
    int level = 0;        // 0 = leaf; inner: parent's level - 1, top level 7
    int prio = 0;
    int children = 0;
    int64_t quantum = 0;
    Rate rate;
    Rate ceil;
    L2t rate_l2t;
    L2t ceil_l2t;
    int64_t buffer = 0;   // ns
    int64_t cbuffer = 0;  // ns

    int64_t tokens = 0;   // ns
    int64_t ctokens = 0;  // ns
    int64_t t_c = 0;      // checkpoint time, ns
    Mode cmode = Mode::kCanSend;
    uint32_t prio_activity = 0;  // bit p: active (in a feed or row) for prio p

    int64_t pq_key = 0;   // time of the pending mode change, ns
    uint64_t pq_seq = 0;  // insertion order among equal keys
    int32_t pq_pos = -1;  // position in the level's wait heap, -1 = not waiting

    std::array<Feed, kNumPrio> feed;           // inner classes
    AnyQueue q;                                // leaves
    const QueueStats* qstats = nullptr;        // q.stats(), read around every leaf operation
    std::array<int64_t, kMaxDepth> deficit{};  // leaves, per level
    uint64_t qlen = 0;                         // mirror of the leaf's backlog
    uint64_t qbytes = 0;

    uint64_t bytes = 0;
    uint64_t packets = 0;
    uint64_t drops = 0;
    uint64_t overlimits = 0;
    uint64_t lends = 0;
    uint64_t borrows = 0;
  };

  struct Level {
    std::array<Feed, kNumPrio> hprio;  // rows
    std::vector<int32_t> wait_pq;      // min-heap of class indices by (pq_key, pq_seq)
  };

  class LeafObserver;

  int32_t index_of(uint32_t id) const { return id < id_to_index_.size() ? id_to_index_[id] : -1; }
  int32_t classify(const Packet& p) const;  // class index, or -1 = direct
  Verdict enqueue_leaf(int32_t cl, Packet&& p, Time now);
  std::optional<Packet> leaf_dequeue(int32_t cl, Time now);
  std::optional<Packet> dequeue_internal(Time now);
  std::optional<Packet> dequeue_tree(int prio, int level);
  std::optional<Packet> take_stash();
  int32_t lookup_leaf(Feed& row, int prio);
  void charge_class(int32_t cl, int level, uint32_t bytes);

  Mode class_mode(const Class& c, int64_t& diff) const;
  void change_class_mode(int32_t cl, int64_t& diff);
  void set_class_mode(int32_t cl, Mode new_mode);  // the change, when there is one
  void activate(int32_t cl);
  void deactivate(int32_t cl);
  void activate_prios(int32_t cl);
  void deactivate_prios(int32_t cl);
  void add_class_to_row(int32_t cl, uint32_t mask);
  void remove_class_from_row(int32_t cl, uint32_t mask);
  void do_events(int level);

  void next_node(Feed& f) { f.ptr = f.ptr < 0 ? -1 : f.next(classes_[f.ptr].id, f.ptr); }

  // Wait-queue heap helpers.
  bool pq_less(int32_t a, int32_t b) const;
  void pq_set(std::vector<int32_t>& h, size_t i, int32_t cl);
  void pq_sift_up(std::vector<int32_t>& h, size_t i);
  void pq_sift_down(std::vector<int32_t>& h, size_t i);
  void pq_push(int32_t cl);
  void pq_erase(int32_t cl);
  void add_to_wait_tree(int32_t cl, int64_t delay);

  int64_t earliest_send_ns(int32_t leaf) const;
  void reserve_structures();

  Params params_;
  std::vector<Class> classes_;
  std::vector<int32_t> id_to_index_;
  std::array<Level, kMaxDepth> hlevel_;
  std::array<uint32_t, kMaxDepth> row_mask_{};
  PacketFifo direct_queue_;
  std::optional<Packet> stash_;
  int64_t now_ = 0;  // q->now: time of the dequeue in progress
  uint64_t pq_seq_ = 0;
  uint64_t backlog_packets_ = 0;  // direct queue + leaves (stash excluded)
  uint64_t backlog_bytes_ = 0;
  Stats stats_;
  Observer* observer_ = nullptr;
  std::unique_ptr<LeafObserver> leaf_observer_;
};

static_assert(QueueElement<Htb>);

}  // namespace nicsim::algo

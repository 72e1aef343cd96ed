#include "nicsim/algo/htb.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>
#include <utility>

#include "nicsim/algo/fifo.h"

namespace nicsim::algo {

namespace {

constexpr int64_t kMbufferNs = Htb::kMbuffer.count_ns();
// tc's quantum clamp when derived from r2q (sch_htb.c htb_change_class).
constexpr int64_t kMinDerivedQuantum = 1000;
constexpr int64_t kMaxDerivedQuantum = 200000;
// iproute2 tc: burst = rate / get_hz() + mtu, get_hz() = 1e9 with 1 ns hrtimers (§9.3).
constexpr uint64_t kTcHz = 1'000'000'000;

std::string to_hex(uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 0xF]);
    v >>= 4;
  } while (v != 0);
  return s;
}

}  // namespace

// Forwards the leaf qdiscs' enqueue/drop/mark events to the Htb's observer. Dequeues are
// reported by Htb itself, when the packet leaves the qdisc (a leaf dequeue may be a peek).
class Htb::LeafObserver final : public Observer {
 public:
  void on_enqueue(Time now, const Packet& p) override {
    if (target != nullptr) {
      target->on_enqueue(now, p);
    }
  }
  void on_drop(Time now, const Packet& p, DropReason why) override {
    if (target != nullptr) {
      target->on_drop(now, p, why);
    }
  }
  void on_mark(Time now, const Packet& p) override {
    if (target != nullptr) {
      target->on_mark(now, p);
    }
  }
  Observer* target = nullptr;
};

std::string Htb::class_name(uint32_t id) { return "1:" + to_hex(id); }

Validation Htb::Params::validate() const {
  if (r2q < 1) {
    return ParamError{"r2q", "must be >= 1, got " + std::to_string(r2q)};
  }
  if (direct_qlen < 0) {
    return ParamError{"direct_qlen", "must be >= 0, got " + std::to_string(direct_qlen)};
  }
  if (default_class > kMaxClassId) {
    return ParamError{"default",
                      "must be a minor class id 0..ffff (0 = none), got " + to_hex(default_class)};
  }
  return std::nullopt;
}

Validation Htb::ClassParams::validate() const {
  const std::string name = "class " + class_name(id);
  if (id == 0 || id > kMaxClassId) {
    return ParamError{name + " classid", "minor id must be 1..ffff, got " + to_hex(id)};
  }
  if (parent > kMaxClassId) {
    return ParamError{name + " parent",
                      "must be 0 (root) or a minor id 1..ffff, got " + to_hex(parent)};
  }
  if (parent == id) {
    return ParamError{name + " parent", "a class cannot be its own parent"};
  }
  if (rate.is_zero()) {
    return ParamError{name + " rate", "must be > 0"};
  }
  if (!ceil.is_zero() && ceil < rate) {
    return ParamError{name + " ceil", "must be >= rate (rate " +
                                          std::to_string(rate.bits_per_sec()) + " bit/s, ceil " +
                                          std::to_string(ceil.bits_per_sec()) + " bit/s)"};
  }
  if (burst < 0) {
    return ParamError{name + " burst",
                      "must be >= 0 bytes (0 = default), got " + std::to_string(burst)};
  }
  if (cburst < 0) {
    return ParamError{name + " cburst",
                      "must be >= 0 bytes (0 = default), got " + std::to_string(cburst)};
  }
  if (mtu < 1) {
    return ParamError{name + " mtu", "must be >= 1, got " + std::to_string(mtu)};
  }
  if (prio < 0 || prio >= kNumPrio) {
    return ParamError{name + " prio", "must be 0..7, got " + std::to_string(prio)};
  }
  if (quantum < 0) {
    return ParamError{name + " quantum",
                      "must be >= 0 (0 = rate / r2q), got " + std::to_string(quantum)};
  }
  return std::nullopt;
}

Htb::Htb(Params params)
    : params_(std::move(params)), leaf_observer_(std::make_unique<LeafObserver>()) {
  require_valid(params_);
  id_to_index_.assign(1, -1);
}

Htb::Htb(Htb&&) noexcept = default;
Htb& Htb::operator=(Htb&&) noexcept = default;
Htb::~Htb() = default;

void Htb::add_class(ClassParams cp, Time now) {
  require_valid(cp);
  const std::string name = "class " + class_name(cp.id);
  if (has_class(cp.id)) {
    throw InvalidParams(ParamError{name + " classid", "already exists"});
  }
  if (cp.leaf && cp.leaf.backlog_packets() > 0) {
    throw InvalidParams(ParamError{name + " leaf", "the leaf qdisc must be empty"});
  }
  int32_t parent = -1;
  if (cp.parent != 0) {
    parent = index_of(cp.parent);
    if (parent < 0) {
      throw InvalidParams(
          ParamError{name + " parent", "no class " + class_name(cp.parent) + " (add it first)"});
    }
    const Class& p = classes_[parent];
    if (p.level == 0 && p.qlen > 0) {
      throw InvalidParams(ParamError{
          name + " parent",
          class_name(cp.parent) + " is a leaf holding " + std::to_string(p.qlen) + " packets"});
    }
    // htb_change_class: "tree is too deep" when the grandparent's level is below 2, i.e. at
    // most 8 levels of classes (TC_HTB_MAXDEPTH).
    if (p.parent >= 0 && classes_[p.parent].level < 2) {
      throw InvalidParams(ParamError{
          name + " parent",
          "tree is too deep (at most " + std::to_string(kMaxDepth) + " levels of classes)"});
    }
  }

  if (parent >= 0 && classes_[parent].level == 0) {
    // The parent leaf becomes an inner class: off its feeds and the wait queue, CAN_SEND,
    // level = grandparent's level - 1 (7 at the top), its qdisc discarded (it is empty).
    Class& p = classes_[parent];
    deactivate(parent);
    if (p.cmode != Mode::kCanSend) {
      pq_erase(parent);
      p.cmode = Mode::kCanSend;
    }
    p.level = (p.parent >= 0 ? classes_[p.parent].level : kMaxDepth) - 1;
    p.feed = {};
    p.deficit = {};
    p.q = AnyQueue();
  }

  Class c;
  c.id = cp.id;
  c.parent = parent;
  c.level = 0;
  c.prio = static_cast<int>(cp.prio);
  c.rate = cp.rate;
  c.ceil = cp.ceil.is_zero() ? cp.rate : cp.ceil;
  const Bytes burst = cp.burst > 0 ? static_cast<Bytes>(cp.burst)
                                   : c.rate.bytes_per_sec() / kTcHz + static_cast<Bytes>(cp.mtu);
  const Bytes cburst = cp.cburst > 0 ? static_cast<Bytes>(cp.cburst)
                                     : c.ceil.bytes_per_sec() / kTcHz + static_cast<Bytes>(cp.mtu);
  c.rate_l2t = L2t::of(c.rate);
  c.ceil_l2t = L2t::of(c.ceil);
  c.buffer = c.rate.transmit_time(burst).count_ns();
  c.cbuffer = c.ceil.transmit_time(cburst).count_ns();
  c.tokens = c.buffer;
  c.ctokens = c.cbuffer;
  c.t_c = now.ns_since_epoch();
  c.cmode = Mode::kCanSend;
  if (cp.quantum > 0) {
    c.quantum = cp.quantum;
  } else {
    const int64_t derived = static_cast<int64_t>(
        std::min<uint64_t>(c.rate.bytes_per_sec() / static_cast<uint64_t>(params_.r2q),
                           static_cast<uint64_t>(std::numeric_limits<int32_t>::max())));
    c.quantum = std::clamp(derived, kMinDerivedQuantum, kMaxDerivedQuantum);
  }
  c.q = cp.leaf ? std::move(cp.leaf)
                : AnyQueue::make<Fifo>(Fifo::Params{.limit_packets = 1000, .limit_bytes = 0});
  c.q.set_observer(observer_ != nullptr ? leaf_observer_.get() : nullptr);
  c.qstats = &c.q.stats();

  const auto index = static_cast<int32_t>(classes_.size());
  classes_.push_back(std::move(c));
  if (id_to_index_.size() <= cp.id) {
    id_to_index_.resize(cp.id + 1, -1);
  }
  id_to_index_[cp.id] = index;
  if (parent >= 0) {
    ++classes_[parent].children;
  }
  reserve_structures();
}

// Rows and feeds never hold more than all classes / all children, and the wait heaps never
// more than the classes of their level: reserving now keeps the packet path allocation-free.
void Htb::reserve_structures() {
  const size_t n = classes_.size();
  for (Level& level : hlevel_) {
    level.wait_pq.reserve(n);
    for (Feed& row : level.hprio) {
      row.keys.reserve(n);
    }
  }
  for (Class& c : classes_) {
    for (Feed& f : c.feed) {
      f.keys.reserve(static_cast<size_t>(c.children));
    }
  }
}

void Htb::set_observer(Observer* o) {
  observer_ = o;
  leaf_observer_->target = o;
  for (Class& c : classes_) {
    if (c.level == 0) {
      c.q.set_observer(o != nullptr ? leaf_observer_.get() : nullptr);
    }
  }
}

Htb::ClassStats Htb::class_stats(uint32_t id) const {
  const int32_t i = index_of(id);
  if (i < 0) {
    throw std::out_of_range("htb: no class " + class_name(id));
  }
  const Class& c = classes_[i];
  ClassStats s;
  s.bytes = c.bytes;
  s.packets = c.packets;
  s.drops = c.drops;
  s.overlimits = c.overlimits;
  s.lends = c.lends;
  s.borrows = c.borrows;
  s.giants = 0;
  s.tokens = c.tokens;
  s.ctokens = c.ctokens;
  s.mode = c.cmode;
  s.level = c.level;
  s.quantum = c.quantum;
  s.buffer = c.buffer;
  s.cbuffer = c.cbuffer;
  s.backlog_packets = c.level == 0 ? c.qlen : 0;
  s.backlog_bytes = c.level == 0 ? c.qbytes : 0;
  return s;
}

AnyQueue& Htb::leaf(uint32_t id) {
  const int32_t i = index_of(id);
  if (i < 0 || classes_[i].level != 0) {
    throw std::out_of_range("htb: no leaf class " + class_name(id));
  }
  return classes_[i].q;
}

// ---------------------------------------------------------------------------------------------
// The packet path's helpers below are `inline` (used in this file only): each runs a few times
// per packet and its call cost as much as its body (docs/benchmarks.md, issue 11 item 5).

// ---------------------------------------------------------------------------------------------
// Classification and enqueue (htb_classify, htb_enqueue).

inline int32_t Htb::classify(const Packet& p) const {
  const uint32_t id = params_.classify ? params_.classify(p) : p.priority;
  if (id == kDirect) {
    return -1;
  }
  if (id != 0) {
    const int32_t i = index_of(id);
    if (i >= 0 && classes_[i].level == 0) {
      return i;
    }
  }
  const int32_t d = index_of(params_.default_class);
  if (d >= 0 && classes_[d].level == 0) {
    return d;
  }
  return -1;  // no (leaf) default class: the direct queue
}

Verdict Htb::enqueue(Packet&& p, Time now) {
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += p.len;
  const int32_t cl = classify(p);
  if (cl >= 0) {
    return enqueue_leaf(cl, std::move(p), now);
  }
  if (direct_queue_.size() < static_cast<uint64_t>(params_.direct_qlen)) {
    p.enqueue_ts = now;
    ++stats_.direct_packets;
    ++backlog_packets_;
    backlog_bytes_ += p.len;
    if (observer_ != nullptr) {
      observer_->on_enqueue(now, p);
    }
    direct_queue_.push_back(std::move(p));
    return Verdict::kQueued;
  }
  ++stats_.dropped_packets;
  stats_.dropped_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_drop(now, p, DropReason::kQueueFull);
  }
  return Verdict::kDropped;
}

// The leaf's own counters tell what happened inside it: it counted the arrival as enqueued,
// and every packet it dropped (the arrival or others) as dropped. Its backlog therefore
// changed by 1 - drops; HTB mirrors that and counts the drops as its own.
inline Verdict Htb::enqueue_leaf(int32_t cl, Packet&& p, Time now) {
  Class& c = classes_[cl];
  const uint32_t len = p.len;
  const QueueStats& s = *c.qstats;
  const uint64_t drops0 = s.dropped_packets;
  const uint64_t drop_bytes0 = s.dropped_bytes;
  const uint64_t marks0 = s.ecn_marked;
  const Verdict v = c.q.enqueue(std::move(p), now);
  const QueueStats& s1 = s;  // read again: the leaf updated its counters in place
  const uint64_t drops = s1.dropped_packets - drops0;
  const uint64_t drop_bytes = s1.dropped_bytes - drop_bytes0;
  stats_.ecn_marked += s1.ecn_marked - marks0;
  c.qlen = c.qlen + 1 - drops;
  c.qbytes = c.qbytes + len - drop_bytes;
  backlog_packets_ = backlog_packets_ + 1 - drops;
  backlog_bytes_ = backlog_bytes_ + len - drop_bytes;
  if (drops != 0) {
    c.drops += drops;
    stats_.dropped_packets += drops;
    stats_.dropped_bytes += drop_bytes;
  }
  if (c.qlen > 0) {
    activate(cl);
  }
  return v;
}

inline std::optional<Packet> Htb::leaf_dequeue(int32_t cl, Time now) {
  Class& c = classes_[cl];
  const QueueStats& s = *c.qstats;
  const uint64_t drops0 = s.dropped_packets;
  const uint64_t drop_bytes0 = s.dropped_bytes;
  const uint64_t marks0 = s.ecn_marked;
  std::optional<Packet> out = c.q.dequeue(now);
  const uint64_t drops = s.dropped_packets - drops0;
  const uint64_t drop_bytes = s.dropped_bytes - drop_bytes0;
  stats_.ecn_marked += s.ecn_marked - marks0;
  const uint64_t sent = out ? 1 : 0;
  const uint64_t sent_bytes = out ? out->len : 0;
  c.qlen -= drops + sent;
  c.qbytes -= drop_bytes + sent_bytes;
  backlog_packets_ -= drops + sent;
  backlog_bytes_ -= drop_bytes + sent_bytes;
  if (drops != 0) {
    c.drops += drops;
    stats_.dropped_packets += drops;
    stats_.dropped_bytes += drop_bytes;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Dequeue (htb_dequeue, htb_dequeue_tree, htb_lookup_leaf, htb_charge_class).

// Packets travel by return value from the leaf to the caller: each hop is at most one move
// (a default-constructed std::optional<Packet> costs a 120-byte clear with libstdc++).
std::optional<Packet> Htb::dequeue(Time now) {
  std::optional<Packet> p = stash_ ? take_stash() : dequeue_internal(now);
  if (p) {
    ++stats_.dequeued_packets;
    stats_.dequeued_bytes += p->len;
    if (observer_ != nullptr) {
      observer_->on_dequeue(now, *p);
    }
  }
  return p;
}

std::optional<Packet> Htb::take_stash() {
  std::optional<Packet> p = std::move(stash_);
  stash_.reset();
  return p;
}

const Packet* Htb::peek(Time now) {
  if (!stash_) {
    stash_ = dequeue_internal(now);
  }
  return stash_ ? &*stash_ : nullptr;
}

std::optional<Packet> Htb::dequeue_internal(Time now) {
  // Direct packets first, unshaped ("as high prio (!) to minimize cpu work").
  if (!direct_queue_.empty()) {
    --backlog_packets_;
    backlog_bytes_ -= direct_queue_.front().len;
    return direct_queue_.pop_front();
  }
  if (backlog_packets_ == 0) {
    return std::nullopt;
  }
  now_ = now.ns_since_epoch();
  for (int level = 0; level < kMaxDepth; ++level) {
    const std::vector<int32_t>& wait = hlevel_[level].wait_pq;
    if (!wait.empty() && classes_[wait.front()].pq_key <= now_) {
      do_events(level);
    }
    // The priorities active when the level is reached (the kernel iterates a snapshot).
    uint32_t m = row_mask_[level];
    while (m != 0) {
      const int prio = std::countr_zero(m);
      m &= m - 1;
      std::optional<Packet> p = dequeue_tree(prio, level);
      if (p) {
        return p;
      }
    }
  }
  return std::nullopt;
}

inline std::optional<Packet> Htb::dequeue_tree(int prio, int level) {
  Feed& row = hlevel_[level].hprio[prio];
  int32_t start = lookup_leaf(row, prio);
  int32_t cl = start;
  for (;;) {
    if (cl < 0) {
      return std::nullopt;
    }
    if (classes_[cl].qlen == 0) {
      // An active class with an empty qdisc (its qdisc dropped packets): deactivate, skip.
      deactivate(cl);
      if ((row_mask_[level] & (1u << prio)) == 0) {
        return std::nullopt;
      }
      const int32_t next = lookup_leaf(row, prio);
      if (cl == start) {
        start = next;
      }
      cl = next;
      continue;
    }
    std::optional<Packet> skb = leaf_dequeue(cl, Time::from_ns(now_));
    if (skb) {
      Class& c = classes_[cl];
      const uint32_t len = skb->len;
      c.bytes += len;
      ++c.packets;
      c.deficit[level] -= len;
      if (c.deficit[level] < 0) {
        c.deficit[level] += c.quantum;
        next_node(level != 0 ? classes_[c.parent].feed[prio] : hlevel_[0].hprio[prio]);
      }
      if (c.qlen == 0) {
        deactivate(cl);
      }
      charge_class(cl, level, len);
      return skb;
    }
    // A non-work-conserving leaf: move past it.
    next_node(level != 0 ? classes_[classes_[cl].parent].feed[prio] : hlevel_[0].hprio[prio]);
    cl = lookup_leaf(row, prio);
    if (cl == start) {
      return std::nullopt;
    }
  }
}

// Descends from the row's DRR pointer through the feeds' pointers to a leaf. A pointer that
// was invalidated resumes at the first class with id >= last_ptr_id; a pointer past the end of
// its feed rewinds to the first class and advances the pointer one level up.
inline int32_t Htb::lookup_leaf(Feed& row, int prio) {
  if (row.empty()) {
    return -1;
  }
  std::array<Feed*, kMaxDepth + 1> stack{};
  int sp = 0;
  stack[0] = &row;
  for (int i = 0; i < 65535; ++i) {
    Feed& f = *stack[sp];
    if (f.ptr < 0 && f.last_ptr_id != 0) {
      f.ptr = f.find_next_upper(f.last_ptr_id);
    }
    f.last_ptr_id = 0;
    if (f.ptr < 0) {
      if (f.empty()) {
        return -1;  // cannot happen while feeds and rows are consistent
      }
      f.ptr = f.first();
      if (sp > 0) {
        --sp;
        Feed& up = *stack[sp];
        if (up.ptr < 0) {
          return -1;
        }
        next_node(up);
      }
    } else {
      Class& c = classes_[f.ptr];
      if (c.level == 0) {
        return f.ptr;
      }
      if (sp + 1 >= static_cast<int>(stack.size())) {
        return -1;
      }
      stack[++sp] = &c.feed[prio];
    }
  }
  return -1;
}

// Mode at t_c + diff. When not CAN_SEND, diff becomes the time until the mode changes.
inline Htb::Mode Htb::class_mode(const Class& c, int64_t& diff) const {
  const int64_t lowater =
      params_.hysteresis && c.cmode != Mode::kCantSend ? -c.cbuffer : int64_t{0};
  int64_t toks = c.ctokens + diff;
  if (toks < lowater) {
    diff = -toks;
    return Mode::kCantSend;
  }
  const int64_t hiwater = params_.hysteresis && c.cmode == Mode::kCanSend ? -c.buffer : int64_t{0};
  toks = c.tokens + diff;
  if (toks >= hiwater) {
    return Mode::kCanSend;
  }
  diff = -toks;
  return Mode::kMayBorrow;
}

// Most calls (two of three per packet in a busy tree) find the mode unchanged: that check is
// inlined into the callers, the change itself is not (docs/benchmarks.md, issue 11 item 5).
[[gnu::always_inline]] inline void Htb::change_class_mode(int32_t cl, int64_t& diff) {
  const Mode new_mode = class_mode(classes_[cl], diff);
  if (new_mode != classes_[cl].cmode) {
    set_class_mode(cl, new_mode);
  }
}

// Charges `bytes` found at `level` from the leaf up to the root (§9.3 "Charging").
inline void Htb::charge_class(int32_t cl, int level, uint32_t bytes) {
  for (int32_t i = cl; i >= 0; i = classes_[i].parent) {
    Class& c = classes_[i];
    int64_t diff = std::min(now_ - c.t_c, kMbufferNs);
    if (c.level >= level) {
      if (c.level == level) {
        ++c.lends;
      }
      int64_t toks = std::min(diff + c.tokens, c.buffer) - c.rate_l2t(bytes);
      if (toks <= -kMbufferNs) {
        toks = 1 - kMbufferNs;
      }
      c.tokens = toks;
    } else {
      ++c.borrows;
      c.tokens += diff;  // t_c moves on: keep tokens consistent
    }
    int64_t ctoks = std::min(diff + c.ctokens, c.cbuffer) - c.ceil_l2t(bytes);
    if (ctoks <= -kMbufferNs) {
      ctoks = 1 - kMbufferNs;
    }
    c.ctokens = ctoks;
    c.t_c = now_;

    const Mode old_mode = c.cmode;
    diff = 0;
    change_class_mode(i, diff);
    if (old_mode != c.cmode) {
      if (c.cmode != Mode::kCanSend) {
        add_to_wait_tree(i, diff);  // re-keyed in place if it was waiting
      } else {
        pq_erase(i);
      }
    }
    if (c.level != 0) {
      c.bytes += bytes;
      ++c.packets;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Modes, activation, rows and feeds.

void Htb::set_class_mode(int32_t cl, Mode new_mode) {
  Class& c = classes_[cl];
  if (new_mode == Mode::kCantSend) {
    ++c.overlimits;
    ++stats_.overlimits;
  }
  if (c.prio_activity != 0) {
    if (c.cmode != Mode::kCantSend) {
      deactivate_prios(cl);
    }
    classes_[cl].cmode = new_mode;
    if (new_mode != Mode::kCantSend) {
      activate_prios(cl);
    }
  } else {
    c.cmode = new_mode;
  }
}

void Htb::activate(int32_t cl) {
  Class& c = classes_[cl];
  if (c.prio_activity == 0) {
    c.prio_activity = 1u << c.prio;
    activate_prios(cl);
  }
}

void Htb::deactivate(int32_t cl) {
  if (classes_[cl].prio_activity == 0) {
    return;
  }
  deactivate_prios(cl);
  classes_[cl].prio_activity = 0;
}

// Hooks the class into its parent's feeds while it is MAY_BORROW, walking up as long as the
// parent's feed was empty (the parent was not yet active for that prio); a CAN_SEND class at
// the end of the chain joins its level's row.
inline void Htb::activate_prios(int32_t cl) {
  int32_t p = classes_[cl].parent;
  uint32_t mask = classes_[cl].prio_activity;
  while (classes_[cl].cmode == Mode::kMayBorrow && p >= 0 && mask != 0) {
    Class& pc = classes_[p];
    uint32_t m = mask;
    while (m != 0) {
      const int prio = std::countr_zero(m);
      m &= m - 1;
      if (!pc.feed[prio].empty()) {
        mask &= ~(1u << prio);  // parent already active for this prio
      }
      pc.feed[prio].insert(classes_[cl].id, cl);
    }
    pc.prio_activity |= mask;
    cl = p;
    p = pc.parent;
  }
  if (classes_[cl].cmode == Mode::kCanSend && mask != 0) {
    add_class_to_row(cl, mask);
  }
}

// Undoes activate_prios (with the class's old mode still set).
inline void Htb::deactivate_prios(int32_t cl) {
  int32_t p = classes_[cl].parent;
  uint32_t mask = classes_[cl].prio_activity;
  while (classes_[cl].cmode == Mode::kMayBorrow && p >= 0 && mask != 0) {
    Class& pc = classes_[p];
    uint32_t m = mask;
    mask = 0;
    while (m != 0) {
      const int prio = std::countr_zero(m);
      m &= m - 1;
      Feed& f = pc.feed[prio];
      if (f.ptr == cl) {
        // Forget the pointer, remember where it was.
        f.last_ptr_id = classes_[cl].id;
        f.ptr = -1;
      }
      f.erase(classes_[cl].id, cl);
      if (f.empty()) {
        mask |= 1u << prio;
      }
    }
    pc.prio_activity &= ~mask;
    cl = p;
    p = pc.parent;
  }
  if (classes_[cl].cmode == Mode::kCanSend && mask != 0) {
    remove_class_from_row(cl, mask);
  }
}

inline void Htb::add_class_to_row(int32_t cl, uint32_t mask) {
  const int level = classes_[cl].level;
  row_mask_[level] |= mask;
  while (mask != 0) {
    const int prio = std::countr_zero(mask);
    mask &= mask - 1;
    hlevel_[level].hprio[prio].insert(classes_[cl].id, cl);
  }
}

inline void Htb::remove_class_from_row(int32_t cl, uint32_t mask) {
  const int level = classes_[cl].level;
  uint32_t emptied = 0;
  while (mask != 0) {
    const int prio = std::countr_zero(mask);
    mask &= mask - 1;
    Feed& row = hlevel_[level].hprio[prio];
    if (row.ptr == cl) {
      next_node(row);
    }
    row.erase(classes_[cl].id, cl);
    if (row.empty()) {
      emptied |= 1u << prio;
    }
  }
  row_mask_[level] &= ~emptied;
}

// ---------------------------------------------------------------------------------------------
// Event queue (wait_pq per level): classes that are not CAN_SEND, keyed by the time their mode
// changes; ties in insertion order, like the kernel's rb-tree insertion to the right.

inline void Htb::do_events(int level) {
  std::vector<int32_t>& heap = hlevel_[level].wait_pq;
  while (!heap.empty()) {
    const int32_t cl = heap.front();
    if (classes_[cl].pq_key > now_) {
      return;
    }
    int64_t diff = std::min(now_ - classes_[cl].t_c, kMbufferNs);
    change_class_mode(cl, diff);  // touches rows and feeds, not the wait heaps
    if (classes_[cl].cmode != Mode::kCanSend) {
      add_to_wait_tree(cl, diff);  // re-keyed in place
    } else {
      pq_erase(cl);
    }
  }
}

inline void Htb::add_to_wait_tree(int32_t cl, int64_t delay) {
  Class& c = classes_[cl];
  c.pq_key = now_ + delay;
  if (c.pq_key == now_) {
    ++c.pq_key;
  }
  c.pq_seq = ++pq_seq_;
  if (c.pq_pos < 0) {
    pq_push(cl);
  } else {
    // Same as erasing and pushing again: keys are unique (the sequence), so the order in
    // which events come out does not depend on where the heap keeps them.
    std::vector<int32_t>& h = hlevel_[c.level].wait_pq;
    const auto i = static_cast<size_t>(c.pq_pos);
    pq_sift_down(h, i);
    pq_sift_up(h, static_cast<size_t>(c.pq_pos));
  }
}

inline bool Htb::pq_less(int32_t a, int32_t b) const {
  const Class& x = classes_[a];
  const Class& y = classes_[b];
  return x.pq_key != y.pq_key ? x.pq_key < y.pq_key : x.pq_seq < y.pq_seq;
}

inline void Htb::pq_set(std::vector<int32_t>& h, size_t i, int32_t cl) {
  h[i] = cl;
  classes_[cl].pq_pos = static_cast<int32_t>(i);
}

inline void Htb::pq_sift_up(std::vector<int32_t>& h, size_t i) {
  const int32_t cl = h[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!pq_less(cl, h[parent])) {
      break;
    }
    pq_set(h, i, h[parent]);
    i = parent;
  }
  pq_set(h, i, cl);
}

inline void Htb::pq_sift_down(std::vector<int32_t>& h, size_t i) {
  const int32_t cl = h[i];
  const size_t n = h.size();
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= n) {
      break;
    }
    if (child + 1 < n && pq_less(h[child + 1], h[child])) {
      ++child;
    }
    if (!pq_less(h[child], cl)) {
      break;
    }
    pq_set(h, i, h[child]);
    i = child;
  }
  pq_set(h, i, cl);
}

inline void Htb::pq_push(int32_t cl) {
  std::vector<int32_t>& h = hlevel_[classes_[cl].level].wait_pq;
  h.push_back(cl);
  pq_sift_up(h, h.size() - 1);
}

inline void Htb::pq_erase(int32_t cl) {
  Class& c = classes_[cl];
  if (c.pq_pos < 0) {
    return;
  }
  std::vector<int32_t>& h = hlevel_[c.level].wait_pq;
  const auto i = static_cast<size_t>(c.pq_pos);
  c.pq_pos = -1;
  const int32_t last = h.back();
  h.pop_back();
  if (i < h.size()) {
    pq_set(h, i, last);
    pq_sift_down(h, i);
    pq_sift_up(h, static_cast<size_t>(classes_[last].pq_pos));
  }
}

// ---------------------------------------------------------------------------------------------
// Wake-up times.

// Earliest time (ns) at which `leaf` can be served if nothing is dequeued before: some
// ancestor-or-self A is CAN_SEND and no class from the leaf up to A is CANT_SEND. Between
// charges a class's buckets only fill, so from its stored mode: a CANT_SEND class stops being
// one when ctokens reach 0 (t_c - ctokens); a class that is not CAN_SEND becomes CAN_SEND when
// tokens reach 0 (t_c - tokens) — with or without hysteresis, whose thresholds apply only to
// the way down. These are exactly the instants the kernel's events fire at.
int64_t Htb::earliest_send_ns(int32_t leaf) const {
  int64_t ceil_gate = std::numeric_limits<int64_t>::min();
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int32_t i = leaf; i >= 0; i = classes_[i].parent) {
    const Class& c = classes_[i];
    if (c.cmode == Mode::kCantSend) {
      ceil_gate = std::max(ceil_gate, c.t_c - c.ctokens);
    }
    const int64_t can_send_at =
        c.cmode == Mode::kCanSend ? std::numeric_limits<int64_t>::min() : c.t_c - c.tokens;
    best = std::min(best, std::max(ceil_gate, can_send_at));
  }
  return best;
}

std::optional<Time> Htb::next_ready(Time now) const {
  if (stash_ || !direct_queue_.empty()) {
    return now;
  }
  if (backlog_packets_ == 0) {
    return std::nullopt;
  }
  int64_t best = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < classes_.size(); ++i) {
    const Class& c = classes_[i];
    if (c.level != 0 || c.qlen == 0) {
      continue;
    }
    int64_t t = earliest_send_ns(static_cast<int32_t>(i));
    // A non-work-conserving leaf qdisc adds its own wait.
    const std::optional<Time> leaf_ready = c.q.next_ready(now);
    if (!leaf_ready) {
      continue;
    }
    t = std::max(t, leaf_ready->ns_since_epoch());
    best = std::min(best, t);
  }
  if (best == std::numeric_limits<int64_t>::max()) {
    return std::nullopt;
  }
  return Time::from_ns(std::max(best, now.ns_since_epoch()));
}

std::optional<Time> Htb::next_event() const {
  std::optional<Time> t;
  for (const Level& level : hlevel_) {
    if (!level.wait_pq.empty()) {
      const Time key = Time::from_ns(classes_[level.wait_pq.front()].pq_key);
      t = t ? min(*t, key) : key;
    }
  }
  return t;
}

}  // namespace nicsim::algo

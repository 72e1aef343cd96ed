#pragma once
// The element contract: anything that holds packets over time.
//
// Pull-based, Click-style, with the clock as an argument (Seastar / DPDK style — see
// docs/ARCHITECTURE.md). An element never reads a clock, sleeps, logs or does I/O.
//
//   Verdict enqueue(Packet&&, Time now)    accept or drop the arriving packet
//   std::optional<Packet> dequeue(Time now) next packet to send, if one may leave now
//   const Packet* peek(Time now)           the packet dequeue(now) would return, left in
//                                          place (like qdisc_peek_dequeued, it may run the
//                                          element's dequeue-time logic and stash the result)
//   std::optional<Time> next_ready(Time now) const
//                                          for a non-work-conserving element with backlog that
//                                          can send nothing now: the earliest time it may.
//                                          Returns `now` if it can send now, nullopt if empty.
//                                          Idempotent; the back-end schedules on it.
//   backlog_packets() / backlog_bytes(), stats() (a QueueStats or a struct derived from it),
//   set_observer(Observer*).
//
// Burst forms (DPDK-style) are free functions with a default built on the single-packet ops;
// an element may provide a faster member `dequeue_burst` which the free function prefers.
//
// Static dispatch (the concept) inside hot compositions; AnyQueue (type erasure) for
// composition at configuration time, e.g. HTB leaves chosen by a scenario file.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "nicsim/core/observer.h"
#include "nicsim/core/packet.h"
#include "nicsim/core/stats.h"
#include "nicsim/core/time.h"

namespace nicsim {

enum class Verdict : uint8_t {
  kQueued,      // the packet was accepted
  kDropped,     // the arriving packet was dropped (it is gone)
  kCongested,   // accepted, but the element dropped other packets of the same flow
                // (NET_XMIT_CN from fq_codel's overload path)
};

template <class E>
concept QueueElement = requires(E e, const E ce, Packet&& p, Time t, Observer* o) {
  { e.enqueue(std::move(p), t) } -> std::same_as<Verdict>;
  { e.dequeue(t) } -> std::same_as<std::optional<Packet>>;
  { e.peek(t) } -> std::same_as<const Packet*>;
  { ce.next_ready(t) } -> std::same_as<std::optional<Time>>;
  { ce.backlog_packets() } -> std::convertible_to<uint64_t>;
  { ce.backlog_bytes() } -> std::convertible_to<uint64_t>;
  { ce.stats() } -> std::convertible_to<const QueueStats&>;
  { e.set_observer(o) };
};

template <class E>
concept HasDequeueBurst = requires(E e, std::span<Packet> out, Time t) {
  { e.dequeue_burst(out, t) } -> std::same_as<size_t>;
};

// Dequeues up to out.size() packets that may leave at `now`; returns how many were written.
template <QueueElement E>
size_t dequeue_burst(E& e, std::span<Packet> out, Time now) {
  if constexpr (HasDequeueBurst<E>) {
    return e.dequeue_burst(out, now);
  } else {
    size_t n = 0;
    while (n < out.size()) {
      std::optional<Packet> p = e.dequeue(now);
      if (!p) {
        break;
      }
      out[n++] = std::move(*p);
    }
    return n;
  }
}

// Enqueues every packet of `in` (moved from); returns how many were accepted (not kDropped).
template <QueueElement E>
size_t enqueue_burst(E& e, std::span<Packet> in, Time now) {
  size_t accepted = 0;
  for (Packet& p : in) {
    if (e.enqueue(std::move(p), now) != Verdict::kDropped) {
      ++accepted;
    }
  }
  return accepted;
}

// Type-erased queue element for composition at configuration time. One virtual call per
// operation; hot fixed compositions use the concrete types instead.
class AnyQueue {
 public:
  AnyQueue() = default;
  template <QueueElement E>
    requires(!std::same_as<std::remove_cvref_t<E>, AnyQueue>)
  explicit AnyQueue(E&& e) : impl_(std::make_unique<Model<std::remove_cvref_t<E>>>(std::move(e))) {}
  template <QueueElement E, class... Args>
  static AnyQueue make(Args&&... args) {
    AnyQueue q;
    q.impl_ = std::make_unique<Model<E>>(std::forward<Args>(args)...);
    return q;
  }

  explicit operator bool() const { return impl_ != nullptr; }

  Verdict enqueue(Packet&& p, Time now) { return impl_->enqueue(std::move(p), now); }
  std::optional<Packet> dequeue(Time now) { return impl_->dequeue(now); }
  const Packet* peek(Time now) { return impl_->peek(now); }
  std::optional<Time> next_ready(Time now) const { return impl_->next_ready(now); }
  uint64_t backlog_packets() const { return impl_->backlog_packets(); }
  uint64_t backlog_bytes() const { return impl_->backlog_bytes(); }
  const QueueStats& stats() const { return impl_->stats(); }
  void set_observer(Observer* o) { impl_->set_observer(o); }
  size_t dequeue_burst(std::span<Packet> out, Time now) { return impl_->dequeue_burst(out, now); }

  // Access to the concrete element (nullptr if it is not an E).
  template <class E>
  E* get() {
    auto* m = dynamic_cast<Model<E>*>(impl_.get());
    return m != nullptr ? &m->element : nullptr;
  }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual Verdict enqueue(Packet&& p, Time now) = 0;
    virtual std::optional<Packet> dequeue(Time now) = 0;
    virtual const Packet* peek(Time now) = 0;
    virtual std::optional<Time> next_ready(Time now) const = 0;
    virtual uint64_t backlog_packets() const = 0;
    virtual uint64_t backlog_bytes() const = 0;
    virtual const QueueStats& stats() const = 0;
    virtual void set_observer(Observer* o) = 0;
    virtual size_t dequeue_burst(std::span<Packet> out, Time now) = 0;
  };
  template <class E>
  struct Model final : Concept {
    template <class... Args>
    explicit Model(Args&&... args) : element(std::forward<Args>(args)...) {}
    Verdict enqueue(Packet&& p, Time now) override { return element.enqueue(std::move(p), now); }
    std::optional<Packet> dequeue(Time now) override { return element.dequeue(now); }
    const Packet* peek(Time now) override { return element.peek(now); }
    std::optional<Time> next_ready(Time now) const override { return element.next_ready(now); }
    uint64_t backlog_packets() const override { return element.backlog_packets(); }
    uint64_t backlog_bytes() const override { return element.backlog_bytes(); }
    const QueueStats& stats() const override { return element.stats(); }
    void set_observer(Observer* o) override { element.set_observer(o); }
    size_t dequeue_burst(std::span<Packet> out, Time now) override {
      return nicsim::dequeue_burst(element, out, now);
    }
    E element;
  };
  std::unique_ptr<Concept> impl_;
};

static_assert(QueueElement<AnyQueue>);

}  // namespace nicsim

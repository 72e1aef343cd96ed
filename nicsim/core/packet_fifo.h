#pragma once
// Packet storage for queueing elements, allocation-free in steady state.
//
// PacketFifo: a growable ring buffer of packets (one queue, e.g. a FIFO band). Capacity grows
// by doubling and never shrinks, so after warm-up no operation allocates.
//
// PacketPool + PacketList: many FIFO lists sharing one node pool (fq_codel's 1024 flow
// queues, HTB leaves). Memory is bounded by the peak total backlog, not by the sum of each
// list's peak. Lists are intrusive singly-linked over pool indices.

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "nicsim/core/packet.h"

namespace nicsim {

class PacketFifo {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  void push_back(Packet&& p) {
    if (size_ == slots_.size()) {
      grow();
    }
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(p);
    ++size_;
  }
  Packet pop_front() {
    assert(size_ > 0);
    Packet p = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return p;
  }
  // pop_front() into `out` with one move (a Packet returned by value and then placed in an
  // optional is moved twice).
  void pop_front_into(std::optional<Packet>& out) {
    assert(size_ > 0);
    out.emplace(std::move(slots_[head_]));
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  Packet& front() {
    assert(size_ > 0);
    return slots_[head_];
  }
  const Packet& front() const {
    assert(size_ > 0);
    return slots_[head_];
  }
  // i-th packet from the head (0 = front).
  const Packet& at(size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }

 private:
  void grow() {
    const size_t cap = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<Packet> next(cap);
    for (size_t i = 0; i < size_; ++i) {
      next[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    }
    slots_ = std::move(next);
    head_ = 0;
  }
  std::vector<Packet> slots_;  // size is a power of two (or 0)
  size_t head_ = 0;
  size_t size_ = 0;
};

class PacketPool {
 public:
  static constexpr uint32_t kNil = UINT32_MAX;

  uint32_t allocate(Packet&& p) {
    uint32_t i;
    if (free_ != kNil) {
      i = free_;
      free_ = nodes_[i].next;
    } else {
      i = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[i].packet = std::move(p);
    nodes_[i].next = kNil;
    return i;
  }
  Packet release(uint32_t i) {
    Packet p = std::move(nodes_[i].packet);
    nodes_[i].next = free_;
    free_ = i;
    return p;
  }
  // release() into an optional with one move (what a dequeue returns; release() followed by
  // constructing an optional moves the packet twice).
  std::optional<Packet> release_optional(uint32_t i) {
    std::optional<Packet> p(std::in_place, std::move(nodes_[i].packet));
    nodes_[i].next = free_;
    free_ = i;
    return p;
  }
  Packet& packet(uint32_t i) { return nodes_[i].packet; }
  const Packet& packet(uint32_t i) const { return nodes_[i].packet; }
  uint32_t& next(uint32_t i) { return nodes_[i].next; }
  uint32_t next(uint32_t i) const { return nodes_[i].next; }
  void reserve(size_t n) { nodes_.reserve(n); }

 private:
  struct Node {
    Packet packet;
    uint32_t next = kNil;
  };
  std::vector<Node> nodes_;
  uint32_t free_ = kNil;
};

// A FIFO list of pool nodes. 12 bytes; the pool is passed to every operation so per-flow
// state stays small (fq_codel asks for <= 64 bytes per flow).
struct PacketList {
  uint32_t head = PacketPool::kNil;
  uint32_t tail = PacketPool::kNil;
  uint32_t size = 0;

  bool empty() const { return size == 0; }
  void push_back(PacketPool& pool, Packet&& p) {
    const uint32_t i = pool.allocate(std::move(p));
    if (tail == PacketPool::kNil) {
      head = i;
    } else {
      pool.next(tail) = i;
    }
    tail = i;
    ++size;
  }
  Packet pop_front(PacketPool& pool) {
    assert(size > 0);
    const uint32_t i = head;
    head = pool.next(i);
    if (head == PacketPool::kNil) {
      tail = PacketPool::kNil;
    }
    --size;
    return pool.release(i);
  }
  Packet& front(PacketPool& pool) const { return pool.packet(head); }
  const Packet& front(const PacketPool& pool) const { return pool.packet(head); }
};

}  // namespace nicsim

#include "nicsim/sim/engine.h"

namespace nicsim::sim {

void Engine::Wakeup::set(std::optional<Time> at) {
  if (!at) {
    if (armed_) {
      armed_ = false;
      if (!firing_) {
        engine_->remove(pos_);  // a firing entry is removed when on_event returns
      }
    }
    return;
  }
  const Time t = *at < engine_->now_ ? engine_->now_ : *at;
  if (armed_ && t == at_) {
    return;
  }
  at_ = t;
  ++engine_->stats_.scheduled;
  if (armed_ || firing_) {
    // Same key a fresh entry would get (a new sequence number), so the order is the same as
    // with one entry per setting.
    ++engine_->stats_.rescheduled;
    engine_->rekey(pos_, t);
  } else {
    engine_->push(Node{key_of(t, engine_->seq_++), p_, tag_, this});
  }
  armed_ = true;
}

void Engine::push(const Node& n) {
  heap_.emplace_back();
  sift_up(heap_.size() - 1, n);
}

void Engine::remove(size_t pos) {
  const Node last = heap_.back();
  heap_.pop_back();
  if (pos == heap_.size()) {
    return;  // it was the last one
  }
  if (pos > 0 && last.before(heap_[(pos - 1) / kArity])) {
    sift_up(pos, last);
  } else {
    sift_down(pos, last);
  }
}

void Engine::rekey(size_t pos, Time at) {
  Node n = heap_[pos];
  n.key = key_of(at, seq_++);
  // The new sequence number is the largest, so the entry can only move up if its time did.
  if (pos > 0 && n.before(heap_[(pos - 1) / kArity])) {
    sift_up(pos, n);
  } else {
    sift_down(pos, n);
  }
}

void Engine::sift_up(size_t pos, Node n) {
  while (pos > 0) {
    const size_t parent = (pos - 1) / kArity;
    if (!n.before(heap_[parent])) {
      break;
    }
    place(pos, heap_[parent]);
    pos = parent;
  }
  place(pos, n);
}

void Engine::sift_down(size_t pos, Node n) {
  const size_t size = heap_.size();
  for (;;) {
    const size_t first = pos * kArity + 1;
    if (first >= size) {
      break;
    }
    size_t best = first;
    Key bk = heap_[first].key;
    const size_t last = first + kArity < size ? first + kArity : size;
    for (size_t c = first + 1; c < last; ++c) {
      const Key k = heap_[c].key;
      const bool lt = k < bk;
      best = lt ? c : best;
      bk = lt ? k : bk;
    }
    if (!(bk < n.key)) {
      break;
    }
    place(pos, heap_[best]);
    pos = best;
  }
  place(pos, n);
}

bool Engine::step(Time until) {
  if (heap_.empty() || time_of(heap_.front().key) > until) {
    return false;
  }
  const Node top = heap_.front();
  now_ = time_of(top.key);
  ++stats_.executed;
  if (top.wakeup == nullptr) {
    remove(0);
    top.process->on_event(now_, top.tag);
    return true;
  }
  // A Wakeup fires with its entry left at the root: a set() from on_event re-keys it in place
  // (it can only move down: every new key is later than the root's), otherwise it goes now.
  Wakeup& w = *top.wakeup;
  w.armed_ = false;
  w.firing_ = true;
  w.p_->on_event(now_, w.tag_);
  w.firing_ = false;
  if (!w.armed_) {
    remove(w.pos_);
  }
  return true;
}

void Engine::run_until(Time until) {
  while (step(until)) {
  }
  if (until > now_ && until != Time::max()) {
    now_ = until;
  }
}

std::optional<Time> Engine::next_time() const {
  return heap_.empty() ? std::nullopt : std::optional<Time>(time_of(heap_.front().key));
}

}  // namespace nicsim::sim

#include "nicsim/sim/tcp/scoreboard.h"

#include <algorithm>
#include <bit>

namespace nicsim::sim::tcp {

void Scoreboard::reset(uint64_t base_seq, uint32_t mss, size_t capacity_hint) {
  const size_t cap = std::bit_ceil(std::max<size_t>(capacity_hint, 64));
  ring_.assign(cap, Entry{});
  mask_ = cap - 1;
  base_ = base_seq;
  mss_ = mss;
  head_ = tail_ = 0;
  sacked_out_ = lost_out_ = retrans_out_ = 0;
  highest_sacked_end_ = lost_mark_end_ = retransmit_hint_ = 0;
  cache_n_ = 0;
}

void Scoreboard::grow() {
  std::vector<Entry> bigger(ring_.size() * 2);
  const uint64_t new_mask = bigger.size() - 1;
  for (uint64_t n = head_; n < tail_; ++n) {
    bigger[n & new_mask] = ring_[n & mask_];
  }
  ring_ = std::move(bigger);
  mask_ = new_mask;
}

Scoreboard::AckResult Scoreboard::ack_to(uint64_t ack, DeliveryRate* rate, RateSample* rs) {
  AckResult r;
  while (head_ < tail_) {
    Entry& e = ring_[head_ & mask_];
    if (seq_of(head_) + e.len > ack) {
      break;
    }
    if (rate != nullptr) {
      rate->on_delivered(e.tx, e.sent, seq_of(head_) + e.len, (e.bits & kEverRetrans) != 0, *rs);
    }
    if ((e.bits & kSacked) != 0) {
      --sacked_out_;
      ++r.acked_sacked;
    }
    if ((e.bits & kLost) != 0) {
      --lost_out_;
    }
    if ((e.bits & kRetrans) != 0) {
      --retrans_out_;
    }
    if ((e.bits & kEverRetrans) != 0) {
      r.retrans_acked = true;
    } else if ((e.bits & kSacked) == 0) {
      if (!r.has_first_sent) {
        r.has_first_sent = true;
        r.first_sent = e.sent;
      }
      r.last_sent = max(r.last_sent, e.sent);
    }
    ++r.acked;
    ++head_;
  }
  if (lost_mark_end_ < head_) {
    lost_mark_end_ = head_;
  }
  if (retransmit_hint_ < head_) {
    retransmit_hint_ = head_;
  }
  return r;
}

void Scoreboard::sack(const SackBlock& b, SackResult& r, DeliveryRate* rate, RateSample* rs) {
  if (b.end <= b.start || head_ == tail_) {
    return;
  }
  // Skip the part already processed from the same block on the previous ACK.
  uint64_t start = b.start;
  for (uint32_t i = 0; i < cache_n_; ++i) {
    if (cache_[i].start == b.start) {
      if (b.end <= cache_[i].end) {
        return;
      }
      start = std::max(start, cache_[i].end);
      break;
    }
  }
  sack_range(start, b.end, r, rate, rs);
}

void Scoreboard::sack_range(uint64_t start, uint64_t end, SackResult& r, DeliveryRate* rate,
                            RateSample* rs) {
  const uint64_t lo = seq_of(head_);
  if (end <= lo) {
    return;  // below the cumulative ACK (D-SACK or stale): ignored
  }
  start = std::max(start, lo);
  uint64_t n = segment_of(start);
  if (seq_of(n) < start) {
    ++n;  // only whole segments count
  }
  for (; n < tail_; ++n) {
    Entry& e = ring_[n & mask_];
    if (seq_of(n) + e.len > end) {
      break;
    }
    if ((e.bits & kSacked) != 0) {
      continue;
    }
    if ((e.bits & kLost) != 0) {
      --lost_out_;
    }
    if ((e.bits & kRetrans) != 0) {
      --retrans_out_;
      ++r.newly_sacked_retrans;
    }
    if ((e.bits & kEverRetrans) == 0 && !r.has_first_sent) {
      r.has_first_sent = true;
      r.first_sent = e.sent;
    } else if ((e.bits & kEverRetrans) == 0 && e.sent < r.first_sent) {
      r.first_sent = e.sent;
    }
    if ((e.bits & kEverRetrans) == 0) {
      r.last_sent = max(r.last_sent, e.sent);
    }
    if (rate != nullptr) {
      rate->on_delivered(e.tx, e.sent, seq_of(n) + e.len, (e.bits & kEverRetrans) != 0, *rs);
    }
    e.bits = static_cast<uint8_t>((e.bits & kEverRetrans) | kSacked);
    ++sacked_out_;
    ++r.newly_sacked;
    if (n + 1 > highest_sacked_end_) {
      highest_sacked_end_ = n + 1;
    }
  }
}

void Scoreboard::set_sack_cache(const SackBlock* blocks, uint32_t n) {
  cache_n_ = std::min<uint32_t>(n, kMaxSackBlocks);
  for (uint32_t i = 0; i < cache_n_; ++i) {
    cache_[i] = blocks[i];
  }
}

uint32_t Scoreboard::mark_lost_rfc6675(uint32_t dupthresh) {
  if (sacked_out_ < dupthresh) {
    return 0;
  }
  const uint64_t floor = std::max(lost_mark_end_, head_);
  uint64_t n = highest_sacked_end();
  uint32_t count = 0;
  bool found = false;
  while (n > floor) {
    --n;
    if ((ring_[n & mask_].bits & kSacked) != 0 && ++count == dupthresh) {
      found = true;
      break;
    }
  }
  if (!found) {
    return 0;
  }
  // Every un-SACKed segment below n has DupThresh SACKed segments above it.
  uint32_t marked = 0;
  for (uint64_t m = floor; m < n; ++m) {
    Entry& e = ring_[m & mask_];
    if ((e.bits & (kSacked | kLost)) == 0) {
      e.bits = static_cast<uint8_t>(e.bits | kLost);
      ++lost_out_;
      if (marked++ == 0 && m < retransmit_hint_) {
        retransmit_hint_ = m;
      }
    }
  }
  lost_mark_end_ = n;
  return marked;
}

bool Scoreboard::mark_lost(uint64_t n) {
  if (n < head_ || n >= tail_) {
    return false;
  }
  Entry& e = ring_[n & mask_];
  if ((e.bits & (kSacked | kLost)) != 0) {
    return false;
  }
  e.bits = static_cast<uint8_t>(e.bits | kLost);
  ++lost_out_;
  if (n < retransmit_hint_) {
    retransmit_hint_ = n;
  }
  return true;
}

uint32_t Scoreboard::mark_all_lost() {
  uint32_t marked = 0;
  for (uint64_t n = head_; n < tail_; ++n) {
    Entry& e = ring_[n & mask_];
    if ((e.bits & kRetrans) != 0) {
      e.bits = static_cast<uint8_t>(e.bits & ~kRetrans);
    }
    if ((e.bits & (kSacked | kLost)) == 0) {
      e.bits = static_cast<uint8_t>(e.bits | kLost);
      ++lost_out_;
      ++marked;
    }
  }
  retrans_out_ = 0;
  lost_mark_end_ = tail_;
  retransmit_hint_ = head_;
  return marked;
}

std::optional<uint64_t> Scoreboard::next_retransmit() {
  if (pending_retransmits() == 0) {
    return std::nullopt;
  }
  uint64_t n = std::max(retransmit_hint_, head_);
  for (; n < tail_; ++n) {
    const uint8_t bits = ring_[n & mask_].bits;
    if ((bits & (kLost | kRetrans)) == kLost) {
      retransmit_hint_ = n;
      return n;
    }
  }
  retransmit_hint_ = tail_;
  return std::nullopt;
}

uint32_t Scoreboard::retransmit_run(uint64_t n, uint32_t max) const {
  uint32_t run = 0;
  while (run < max && n + run < tail_ &&
         (ring_[(n + run) & mask_].bits & (kLost | kRetrans | kSacked)) == kLost) {
    ++run;
  }
  return run;
}

}  // namespace nicsim::sim::tcp

#pragma once
// Scoreboard — the sender's per-segment record of outstanding data: send time, SACKed, lost,
// retransmitted (Linux: the retransmit queue's TCPCB_SACKED_ACKED / TCPCB_LOST /
// TCPCB_SACKED_RETRANS / TCPCB_EVER_RETRANS bits with the packets_out, sacked_out, lost_out and
// retrans_out counters), and the RFC 6675 loss rules on top of it.
//
// Data is numbered in MSS-sized segments: segment n covers [base + n·mss, base + n·mss + len)
// and every segment but the last of a finite stream is full-sized, because the sender only
// ever cuts data at MSS boundaries. Entries live in a power-of-two ring (grown by doubling;
// no allocation in steady state).
//
//  * pipe (RFC 6675 §4 SetPipe) = packets_out − sacked_out − lost_out + retrans_out, which is
//    Linux's tcp_packets_in_flight; equal to RFC 6675's octet count when IsLost marks agree.
//  * IsLost (RFC 6675 §4): a segment is lost when DupThresh segments above it are SACKed
//    (full-sized segments, so "more than (DupThresh − 1)·SMSS bytes" is the same test). The
//    DupThresh-th highest SACKed segment only moves up, so marking is incremental: every
//    un-SACKed segment below it is marked once.
//  * NextSeg (RFC 6675 §4) rule 1 is next_retransmit(): the lowest lost segment not yet
//    retransmitted; rules 3 and 4 (rescue retransmission) are not implemented (Linux does not
//    do them either).
// SACK blocks repeated from the previous ACK are skipped (Linux's recv_sack_cache), so a
// long-lived block costs only its new part.

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "nicsim/core/time.h"
#include "nicsim/sim/tcp/delivery_rate.h"
#include "nicsim/sim/tcp/segment.h"

namespace nicsim::sim::tcp {

class Scoreboard {
 public:
  enum Bit : uint8_t {
    kSacked = 1 << 0,       // TCPCB_SACKED_ACKED
    kLost = 1 << 1,         // TCPCB_LOST
    kRetrans = 1 << 2,      // TCPCB_SACKED_RETRANS: a retransmission is in flight
    kEverRetrans = 1 << 3,  // TCPCB_EVER_RETRANS (Karn)
  };
  struct Entry {
    Time sent;         // last (re)transmission time
    uint32_t len = 0;  // payload bytes (mss except the final segment)
    uint8_t bits = 0;
    RateTx tx;  // delivery-rate snapshot of the last transmission (tcp_rate_skb_sent)
  };
  struct AckResult {
    uint32_t acked = 0;          // segments removed from the head
    uint32_t acked_sacked = 0;   // of which were already SACKed
    bool retrans_acked = false;  // any of them ever retransmitted (Karn)
    bool has_first_sent = false;
    Time first_sent;  // oldest send time among never-retransmitted, un-SACKed ones
    Time last_sent;   // newest send time among those (Linux last_ackt: the CC's RTT sample)
  };
  struct SackResult {
    uint32_t newly_sacked = 0;
    uint32_t newly_sacked_retrans = 0;  // of which had a retransmission in flight
    bool has_first_sent = false;
    Time first_sent;  // oldest send time among newly SACKed never-retransmitted ones
    Time last_sent;   // newest send time among those (Linux last_sackt)
  };

  Scoreboard() = default;
  void reset(uint64_t base_seq, uint32_t mss, size_t capacity_hint);

  // --- numbering ---
  uint64_t head() const { return head_; }  // first outstanding segment
  uint64_t tail() const { return tail_; }  // next segment number to send
  uint64_t seq_of(uint64_t n) const { return base_ + n * mss_; }
  // Segment number containing `seq` (seq >= base).
  uint64_t segment_of(uint64_t seq) const { return (seq - base_) / mss_; }
  const Entry& at(uint64_t n) const { return ring_[n & mask_]; }
  Entry& at(uint64_t n) { return ring_[n & mask_]; }

  // --- counters (segments) ---
  uint32_t packets_out() const { return static_cast<uint32_t>(tail_ - head_); }
  uint32_t sacked_out() const { return sacked_out_; }
  uint32_t lost_out() const { return lost_out_; }
  uint32_t retrans_out() const { return retrans_out_; }
  uint32_t in_flight() const { return packets_out() - sacked_out_ - lost_out_ + retrans_out_; }
  // Lost segments waiting for their (first or next) retransmission.
  uint32_t pending_retransmits() const { return lost_out_ - retrans_out_; }
  // One past the highest SACKed segment (head() if none).
  uint64_t highest_sacked_end() const {
    return highest_sacked_end_ > head_ ? highest_sacked_end_ : head_;
  }

  // --- transmission ---
  void push(Time sent, uint32_t len, const RateTx& tx = {}) {
    if (tail_ - head_ == ring_.size()) {
      grow();
    }
    ring_[tail_ & mask_] = Entry{sent, len, 0, tx};
    ++tail_;
  }
  // Removes the newest segment again (a local drop of never-transmitted new data).
  void pop_tail() { --tail_; }
  void mark_retransmitted(uint64_t n, Time now, const RateTx& tx = {}) {
    Entry& e = at(n);
    e.sent = now;
    e.tx = tx;
    e.bits = static_cast<uint8_t>(e.bits | kRetrans | kEverRetrans);
    ++retrans_out_;
  }
  // Undoes mark_retransmitted for a retransmission the qdisc refused.
  void unmark_retransmitted(uint64_t n) {
    Entry& e = at(n);
    if ((e.bits & kRetrans) != 0) {
      e.bits = static_cast<uint8_t>(e.bits & ~kRetrans);
      --retrans_out_;
      if (n < retransmit_hint_) {
        retransmit_hint_ = n;
      }
    }
  }

  // --- ACK processing ---
  // Cumulative ACK: removes every segment that ends at or before `ack`. With `rate`, each
  // newly delivered segment is offered to the delivery-rate estimator (sample `rs`).
  AckResult ack_to(uint64_t ack, DeliveryRate* rate = nullptr, RateSample* rs = nullptr);
  // One SACK block (RFC 2018); only whole segments inside it are marked.
  void sack(const SackBlock& b, SackResult& r, DeliveryRate* rate = nullptr,
            RateSample* rs = nullptr);
  // Remembers this ACK's blocks so the next ACK's repeats are skipped.
  void set_sack_cache(const SackBlock* blocks, uint32_t n);

  // --- loss marking ---
  // RFC 6675 IsLost over the new part of the window; returns segments newly marked lost.
  uint32_t mark_lost_rfc6675(uint32_t dupthresh);
  // Marks one segment lost (no-SACK recovery marks the head; Linux tcp_mark_head_lost).
  bool mark_lost(uint64_t n);
  // RTO (tcp_enter_loss): every un-SACKed segment becomes lost, retransmissions in flight are
  // forgotten; returns the number of segments marked lost.
  uint32_t mark_all_lost();

  // RFC 6675 NextSeg rule 1: the lowest lost segment not yet retransmitted.
  std::optional<uint64_t> next_retransmit();
  // How many consecutive segments from n (inclusive, at most max) are lost and not yet
  // retransmitted: one GSO retransmission unit.
  uint32_t retransmit_run(uint64_t n, uint32_t max) const;

  // --- no-SACK (NewReno) duplicate-ACK accounting (Linux tcp_add_reno_sack) ---
  void reno_add_sack() {
    ++sacked_out_;
    reno_limit_sacked();
  }
  // tcp_remove_reno_sacks: an ACK for `acked` segments fills one hole; the rest were dupacks.
  void reno_remove_sacks(uint32_t acked) {
    if (acked > 0) {
      sacked_out_ = acked - 1 >= sacked_out_ ? 0 : sacked_out_ - (acked - 1);
    }
    reno_limit_sacked();
  }
  // tcp_limit_reno_sacked (via tcp_check_reno_reordering, after both of the above): dupacks
  // count at most packets_out minus the holes, max(lost_out, 1), so sacked_out + lost_out
  // never exceeds packets_out (e.g. after an RTO marked every segment lost).
  void reno_limit_sacked() {
    const uint32_t holes = std::min(std::max(lost_out_, 1u), packets_out());
    if (sacked_out_ + holes > packets_out()) {
      sacked_out_ = packets_out() - holes;
    }
  }
  void reno_reset_sacks() { sacked_out_ = 0; }

 private:
  void grow();
  void sack_range(uint64_t start, uint64_t end, SackResult& r, DeliveryRate* rate, RateSample* rs);

  std::vector<Entry> ring_;
  uint64_t mask_ = 0;
  uint64_t base_ = 0;
  uint32_t mss_ = 1;
  uint64_t head_ = 0;
  uint64_t tail_ = 0;
  uint32_t sacked_out_ = 0;
  uint32_t lost_out_ = 0;
  uint32_t retrans_out_ = 0;
  uint64_t highest_sacked_end_ = 0;
  uint64_t lost_mark_end_ = 0;    // un-SACKed segments below this have been marked lost
  uint64_t retransmit_hint_ = 0;  // no retransmission candidate below this
  std::array<SackBlock, kMaxSackBlocks> cache_{};
  uint32_t cache_n_ = 0;
};

}  // namespace nicsim::sim::tcp

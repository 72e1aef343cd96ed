#pragma once
// Gro — Generic Receive Offload for one NAPI context: in-order TCP segments of one flow that
// arrive within a poll are merged into one packet (up to gro_max_size bytes) that the stack
// then processes once, so the per-packet receive cost is paid per merged packet.
//
// Behaviour follows Linux net/core/gro.c (commit 0b1605e45c36: dev_gro_receive,
// skb_gro_receive, napi_gro_flush, gro_flush_oldest; MAX_GRO_SKBS = 8, GRO_HASH_BUCKETS = 8)
// and net/ipv4/tcp_offload.c (commit 023af5a72ab1: tcp_gro_receive), with inet_gro_receive's
// IP-header check (TOS and TTL must match). Ported behaviour, not code:
//  * A frame goes to bucket flow_hash & 7 and is compared with the held packet of its flow
//    there (gro_list_prepare + tcp_gro_lookup).
//  * It joins that packet unless (tcp_gro_receive's `flush`): it has CWR; its flags differ
//    from the held packet's other than CWR/FIN/PSH; its ack number, TCP option bytes (so a
//    TSval tick) or IP TOS differ (a CE mark); its payload is larger than the held packet's
//    mss (the first segment's payload: gso_size) — which also excludes pure ACKs; it does not
//    continue the held packet's sequence (out of order, a retransmission); or the merged IP
//    packet would reach gro_max_size (skb_gro_receive: p->len + len >= gro_max_size).
//    A refused frame completes the held packet (delivered to the stack) and starts its own.
//  * After the merge check (out_check_final): a payload shorter than the held packet's mss
//    (the end of a write, a lone segment: len < 1 for a pure ACK) or URG/PSH/RST/SYN/FIN flags
//    complete the packet at once, this frame included when it merged; a frame with nothing held
//    is then delivered alone (GRO_NORMAL).
//  * A new packet is held in its bucket (youngest first); a bucket already holding
//    max_per_bucket packets completes its oldest (gro_flush_oldest).
//  * flush(old_only) is napi_gro_flush: every bucket in index order, oldest packet first;
//    old_only stops a bucket at the first packet held since the current jiffy (the NAPI
//    instance uses gro_flush_timeout, or a budget-exhausted poll with HZ >= 1000).
// Frames that are not TCP (GroHeader::tcp false) are delivered alone.
//
// Deviations (docs/rx-batching.md): IPv4/TCP only (no UDP GRO, no fraglist GRO); the
// gro_normal_batch list (8 packets passed up together) is not modelled: completed packets are
// handed over one by one in completion order; checksum and encapsulation checks are absent.
//
// Units: bytes are IP-packet bytes (headers + payload), as p->len after eth_type_trans. No clock
// is read: `now` only dates held packets in jiffies.

#include <array>
#include <cstdint>
#include <vector>

#include "nicsim/core/packet.h"
#include "nicsim/core/param_error.h"
#include "nicsim/core/time.h"

namespace nicsim::algo {

// TCP header flag bits, as in the header's flag byte (tcp_flag_word).
enum GroTcpFlag : uint8_t {
  kGroFin = 0x01,
  kGroSyn = 0x02,
  kGroRst = 0x04,
  kGroPsh = 0x08,
  kGroAck = 0x10,
  kGroUrg = 0x20,
  kGroEce = 0x40,
  kGroCwr = 0x80,
};

// What inet_gro_receive / tcp4_gro_receive read from one frame's headers. The back-end fills it
// (the simulator from its protocol metadata, the emulator could parse the frame).
struct GroHeader {
  bool tcp = false;                   // IPv4 + TCP; anything else is delivered alone
  uint64_t flow = 0;                  // the flow's addresses and ports, compared exactly
  uint64_t seq = 0;                   // sequence number of the first payload byte
  uint64_t ack = 0;                   // ack_seq
  uint32_t payload = 0;               // TCP payload bytes (skb_gro_len after the TCP header)
  uint32_t headers = 0;               // IP + TCP header bytes
  uint8_t flags = 0;                  // GroTcpFlag bits
  uint8_t tos = 0;                    // IP TOS byte (DSCP and ECN)
  std::array<uint64_t, 2> options{};  // the TCP option bytes, packed by the caller (TSval,
                                      // TSecr, SACK blocks): compared for equality
};

// A packet GRO hands to the stack: one or more frames (in sequence order) merged into one.
struct GroPacket {
  std::vector<Packet> frames;
  uint32_t bytes = 0;  // IP-packet bytes of the merged packet (headers once + all payload)
};

class Gro {
 public:
  struct Params {
    // gro_max_size (ip link ... gro_max_size): the merged IP packet stays below it.
    // GRO_LEGACY_MAX_SIZE = 65536 is the default and the IPv4 limit without BIG TCP.
    uint32_t max_size = 65536;
    // GRO_HASH_BUCKETS and MAX_GRO_SKBS.
    uint32_t buckets = 8;
    uint32_t max_per_bucket = 8;
    // One jiffy (1 / CONFIG_HZ): held packets are dated in jiffies for flush(old_only). 4 ms:
    // Debian's x86 CONFIG_HZ_250.
    Duration jiffy = Duration::ms(4);
    Validation validate() const;
  };
  // Identities (asserted in tests):
  //   frames == merged + held + normal
  //   packets == completed + normal, completed == held - holding()
  struct Stats {
    uint64_t frames = 0;           // receive() calls
    uint64_t merged = 0;           // frames that joined a held packet
    uint64_t held = 0;             // frames that started a held packet
    uint64_t normal = 0;           // frames delivered alone (GRO_NORMAL)
    uint64_t packets = 0;          // packets handed to the stack (completed + normal)
    uint64_t completed = 0;        // held packets completed, by reason:
    uint64_t by_flags = 0;         // PSH/URG/RST/SYN/FIN, or a short segment, ended the packet
    uint64_t by_mismatch = 0;      // a frame of the flow with other flags/ack/options/TOS/size
    uint64_t by_out_of_order = 0;  // a frame of the flow not continuing its sequence
    uint64_t by_max_size = 0;      // the next frame would have reached gro_max_size
    uint64_t by_evict = 0;         // its bucket was full (MAX_GRO_SKBS)
    uint64_t by_poll = 0;          // napi_gro_flush (end of poll, timer)
    uint64_t largest = 0;          // most frames merged into one packet
  };

  Gro() : Gro(Params{}) {}
  explicit Gro(const Params& params);

  // napi_gro_receive for one frame with the headers `h`. Completed packets queue up in order
  // (has_completed / pop_completed).
  void receive(Packet&& frame, const GroHeader& h, Time now);
  // napi_gro_flush: completes every held packet, or with old_only those held before the
  // current jiffy.
  void flush(Time now, bool old_only);

  bool has_completed() const { return done_head_ < done_.size(); }
  size_t completed_count() const { return done_.size() - done_head_; }
  GroPacket pop_completed();
  // Returns a delivered packet's storage for reuse (optional; saves allocations).
  void recycle(GroPacket&& p);

  uint64_t holding() const { return holding_; }  // packets held in the buckets
  const Stats& stats() const { return stats_; }
  const Params& params() const { return params_; }

 private:
  struct Held {
    GroHeader head;         // the first frame's headers, FIN/PSH of later ones or-ed in
    uint64_t next_seq = 0;  // sequence number the next merged frame must start at
    uint32_t mss = 0;       // gso_size: the first frame's payload
    uint32_t len = 0;       // IP bytes so far
    int64_t age = 0;        // jiffy it was held in
    std::vector<Packet> frames;
  };
  enum class Refusal : uint8_t { kNone, kMismatch, kOutOfOrder, kMaxSize };

  Refusal refusal(const Held& p, const GroHeader& h) const;
  void complete(std::vector<Held>& bucket, size_t index, uint64_t& reason);
  void hold(std::vector<Held>& bucket, Packet&& frame, const GroHeader& h, Time now);
  void deliver_alone(Packet&& frame, const GroHeader& h);
  std::vector<Packet> spare_frames();
  int64_t jiffies(Time now) const { return now.ns_since_epoch() / params_.jiffy.count_ns(); }

  Params params_;
  std::vector<std::vector<Held>> buckets_;  // each ordered oldest first
  std::vector<GroPacket> done_;
  size_t done_head_ = 0;
  std::vector<std::vector<Packet>> spare_;
  uint64_t holding_ = 0;
  Stats stats_;
};

}  // namespace nicsim::algo

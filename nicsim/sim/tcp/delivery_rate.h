#pragma once
// DeliveryRate — the sender's delivery-rate estimator (Linux net/ipv4/tcp_rate.c; the
// draft-cheng-iccrg-delivery-rate-estimation algorithm), BBR's bandwidth samples.
//
// Every transmission snapshots the connection's delivery state into the segment (on_sent ->
// RateTx): how much had been delivered (`delivered`, segments), when (`delivered_time`), when
// the current send flight started (`first_tx`) and whether the sender was application-limited.
// On an ACK, each newly delivered (cumulatively ACKed or newly SACKed) segment is offered to
// on_delivered(); the most recently sent one (latest send time, then highest end sequence:
// tcp_skb_sent_after) becomes the sample's reference. generate() then gives
//   delivered   = delivered_now - reference.delivered
//   interval    = max(send interval, ACK interval)
//                 send interval = reference send time - reference.first_tx
//                 ACK interval  = now - reference.delivered_time
// and marks the sample invalid (delivered = interval = -1) when there is no reference, or when
// the interval is shorter than the minimum RTT (an ACK-compression artefact).
// Application-limited periods (check_app_limited) mark samples taken before the bubble is
// delivered as app-limited, so BBR does not let them drag its bandwidth estimate down.
//
// Units: segments and Time; rates are formed by the user (BBR: delivered / interval).
// Deviations: no SACK reneging input (the model never reneges); no CE counts (delivered_ce);
// segments, not skbs (a GSO unit's segments share one snapshot, as its skb does).

#include <cstdint>

#include "nicsim/core/time.h"

namespace nicsim::sim::tcp {

// Per-transmission snapshot (tcp_skb_cb->tx).
struct RateTx {
  Time first_tx;        // start of the send flight this segment belongs to
  Time delivered_time;  // delivered_mstamp when it was sent
  uint64_t delivered = 0;
  bool app_limited = false;
  bool pending = false;  // not yet delivered (Linux: delivered_mstamp != 0)
};

// One ACK's sample (struct rate_sample).
struct RateSample {
  bool has_prior = false;  // a delivered segment gave a reference (prior_mstamp != 0)
  Time prior_time;         // reference's delivered_time
  uint64_t prior_delivered = 0;
  int64_t delivered = -1;                // segments delivered over the interval; -1 = invalid
  Duration interval = Duration::ns(-1);  // -1 = invalid
  Duration snd_interval;
  Duration rcv_interval;
  Duration rtt = Duration::ns(-1);  // RTT of the last (S)ACKed segment; -1 = none
  uint32_t acked_sacked = 0;        // segments newly delivered by this ACK
  uint32_t losses = 0;              // segments newly marked lost on this ACK
  uint32_t prior_in_flight = 0;
  bool app_limited = false;
  bool is_retrans = false;
  bool is_ack_delayed = false;
  uint64_t last_end_seq = 0;
  bool valid() const { return delivered >= 0 && interval > Duration::zero(); }
};

class DeliveryRate {
 public:
  // tcp_rate_skb_sent: snapshot for a segment sent at `now`; `packets_out` before it was sent
  // (an idle connection restarts the flight and delivery clocks).
  RateTx on_sent(Time now, uint32_t packets_out);
  // tcp_rate_skb_delivered: a segment sent at `sent` (ending at `end_seq`) is delivered.
  // `tx.pending` is cleared so a later cumulative ACK does not count it again.
  void on_delivered(RateTx& tx, Time sent, uint64_t end_seq, bool retransmitted, RateSample& rs);
  // tcp_rate_gen: closes the sample for an ACK that delivered `delivered` segments and marked
  // `lost` segments lost; `min_rtt` is the connection's minimum RTT (zero = none yet).
  void generate(uint32_t delivered, uint32_t lost, Time now, Duration min_rtt, RateSample& rs);
  // tcp_rate_check_app_limited: the application has nothing more to send (less than one MSS
  // unsent, nothing below the socket, cwnd not full, no lost segment waiting).
  void check_app_limited(bool nothing_to_send, uint32_t in_flight, uint32_t cwnd,
                         uint32_t lost_out);
  // PROBE_RTT marks its own samples app-limited (tp->app_limited = delivered + in_flight).
  void mark_app_limited(uint32_t in_flight);

  uint64_t delivered() const { return delivered_; }
  Time delivered_time() const { return delivered_time_; }
  uint64_t app_limited() const { return app_limited_; }  // 0 = not app-limited
  // The latest non-app-limited (or better) rate: tp->rate_delivered / tp->rate_interval_us.
  uint64_t rate_delivered() const { return rate_delivered_; }
  Duration rate_interval() const { return rate_interval_; }

 private:
  uint64_t delivered_ = 0;    // tp->delivered
  Time delivered_time_;       // tp->delivered_mstamp
  Time first_tx_;             // tp->first_tx_mstamp
  uint64_t app_limited_ = 0;  // tp->app_limited: delivered mark at the end of the bubble
  uint64_t rate_delivered_ = 0;
  Duration rate_interval_;
  bool rate_app_limited_ = false;
};

}  // namespace nicsim::sim::tcp

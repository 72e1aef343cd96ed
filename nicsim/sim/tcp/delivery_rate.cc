#include "nicsim/sim/tcp/delivery_rate.h"

#include <algorithm>

namespace nicsim::sim::tcp {

RateTx DeliveryRate::on_sent(Time now, uint32_t packets_out) {
  if (packets_out == 0) {
    // Nothing in flight: this send starts a new flight, and the delivery clock restarts so the
    // idle time is not counted in the next sample's ACK interval.
    first_tx_ = now;
    delivered_time_ = now;
  }
  return RateTx{first_tx_, delivered_time_, delivered_, app_limited_ != 0, true};
}

void DeliveryRate::on_delivered(RateTx& tx, Time sent, uint64_t end_seq, bool retransmitted,
                                RateSample& rs) {
  if (!tx.pending) {
    return;  // already counted when it was SACKed
  }
  // tcp_skb_sent_after(sent, first_tx_, end_seq, rs.last_end_seq): the most recently sent
  // delivered segment is the sample's reference.
  const bool newer = rs.prior_delivered == 0 || sent > first_tx_ ||
                     (sent == first_tx_ && end_seq > rs.last_end_seq);
  if (newer) {
    rs.has_prior = true;
    rs.prior_delivered = tx.delivered;
    rs.prior_time = tx.delivered_time;
    rs.app_limited = tx.app_limited;
    rs.is_retrans = retransmitted;
    rs.last_end_seq = end_seq;
    // The flight's send interval: from the reference's flight start to its own send time.
    first_tx_ = sent;
    rs.snd_interval = sent - tx.first_tx;
  }
  tx.pending = false;
}

void DeliveryRate::generate(uint32_t delivered, uint32_t lost, Time now, Duration min_rtt,
                            RateSample& rs) {
  if (app_limited_ != 0 && delivered_ + delivered > app_limited_) {
    app_limited_ = 0;  // the bubble has been delivered
  }
  delivered_ += delivered;
  if (delivered > 0) {
    delivered_time_ = now;
  }
  rs.acked_sacked = delivered;
  rs.losses = lost;
  if (!rs.has_prior) {
    rs.delivered = -1;
    rs.interval = Duration::ns(-1);
    return;
  }
  rs.delivered = static_cast<int64_t>(delivered_ - rs.prior_delivered);
  // The slower of the send and the ACK rate bounds the delivery rate (ACK compression makes the
  // ACK interval short, a stretched send phase the send interval).
  rs.rcv_interval = now - rs.prior_time;
  rs.interval = max(rs.snd_interval, rs.rcv_interval);
  if (rs.interval < min_rtt) {
    rs.interval = Duration::ns(-1);  // shorter than min_rtt: not a real delivery interval
    return;
  }
  // Keep the fastest non-app-limited rate (tp->rate_delivered / rate_interval_us).
  if (!rs.app_limited ||
      static_cast<unsigned __int128>(rs.delivered) * rate_interval_.count_ns() >=
          static_cast<unsigned __int128>(rate_delivered_) * rs.interval.count_ns()) {
    rate_delivered_ = static_cast<uint64_t>(rs.delivered);
    rate_interval_ = rs.interval;
    rate_app_limited_ = rs.app_limited;
  }
}

void DeliveryRate::check_app_limited(bool nothing_to_send, uint32_t in_flight, uint32_t cwnd,
                                     uint32_t lost_out) {
  if (nothing_to_send && in_flight < cwnd && lost_out == 0) {
    app_limited_ = std::max<uint64_t>(delivered_ + in_flight, 1);
  }
}

void DeliveryRate::mark_app_limited(uint32_t in_flight) {
  app_limited_ = std::max<uint64_t>(delivered_ + in_flight, 1);
}

}  // namespace nicsim::sim::tcp

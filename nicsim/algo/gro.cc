#include "nicsim/algo/gro.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {

Validation Gro::Params::validate() const {
  if (max_size < 1) {
    return ParamError{"gro_max_size", "must be >= 1 byte"};
  }
  if (buckets < 1 || (buckets & (buckets - 1)) != 0) {
    return ParamError{"gro_buckets", "must be a power of two, got " + std::to_string(buckets)};
  }
  if (max_per_bucket < 1) {
    return ParamError{"gro_max_per_bucket", "must be >= 1"};
  }
  if (jiffy <= Duration::zero()) {
    return ParamError{"jiffy", "must be > 0"};
  }
  return std::nullopt;
}

Gro::Gro(const Params& params) : params_(require_valid(params)), buckets_(params.buckets) {}

// tcp_gro_receive's `flush` for a frame of the held packet's flow, then skb_gro_receive's size
// check. Flag, ack, option and TOS differences and an oversized payload are one "mismatch".
Gro::Refusal Gro::refusal(const Held& p, const GroHeader& h) const {
  constexpr uint8_t kMayDiffer = kGroCwr | kGroFin | kGroPsh;
  if ((h.flags & kGroCwr) != 0 || ((h.flags ^ p.head.flags) & ~kMayDiffer) != 0 ||
      h.ack != p.head.ack || h.options != p.head.options || h.tos != p.head.tos ||
      h.payload - 1u >= p.mss) {  // unsigned: a pure ACK (payload 0) never merges
    return Refusal::kMismatch;
  }
  if (h.seq != p.next_seq) {
    return Refusal::kOutOfOrder;
  }
  if (static_cast<uint64_t>(p.len) + h.payload >= params_.max_size) {
    return Refusal::kMaxSize;
  }
  return Refusal::kNone;
}

void Gro::receive(Packet&& frame, const GroHeader& h, Time now) {
  ++stats_.frames;
  if (!h.tcp) {
    deliver_alone(std::move(frame), h);
    return;
  }
  std::vector<Held>& bucket = buckets_[frame.flow_hash & (params_.buckets - 1)];
  const auto it = std::find_if(bucket.begin(), bucket.end(),
                               [&h](const Held& p) { return p.head.flow == h.flow; });
  const size_t index = static_cast<size_t>(it - bucket.begin());
  bool merged = false;
  uint32_t mss = 1;  // tcp_gro_receive's mss: the held packet's only after a merge
  if (it != bucket.end()) {
    Held& p = *it;
    const Refusal r = refusal(p, h);
    if (r == Refusal::kNone) {
      p.frames.push_back(std::move(frame));
      p.len += h.payload;
      p.next_seq += h.payload;
      p.head.flags = static_cast<uint8_t>(p.head.flags | (h.flags & (kGroFin | kGroPsh)));
      ++stats_.merged;
      merged = true;
      mss = p.mss;
    } else {
      uint64_t& reason = r == Refusal::kMismatch     ? stats_.by_mismatch
                         : r == Refusal::kOutOfOrder ? stats_.by_out_of_order
                                                     : stats_.by_max_size;
      complete(bucket, index, reason);
    }
  }
  // out_check_final: a short segment or an ending flag completes the (merged) packet.
  constexpr uint8_t kEnding = kGroUrg | kGroPsh | kGroRst | kGroSyn | kGroFin;
  const bool flush = h.payload < mss || (h.flags & kEnding) != 0;
  if (merged) {
    if (flush) {
      complete(bucket, index, stats_.by_flags);
    }
    return;
  }
  if (flush) {
    deliver_alone(std::move(frame), h);
    return;
  }
  hold(bucket, std::move(frame), h, now);
}

void Gro::hold(std::vector<Held>& bucket, Packet&& frame, const GroHeader& h, Time now) {
  if (bucket.size() >= params_.max_per_bucket) {
    complete(bucket, 0, stats_.by_evict);  // gro_flush_oldest
  }
  Held p;
  p.head = h;
  p.next_seq = h.seq + h.payload;
  p.mss = h.payload;  // skb_shinfo(skb)->gso_size = skb_gro_len(skb)
  p.len = h.headers + h.payload;
  p.age = jiffies(now);
  p.frames = spare_frames();
  p.frames.push_back(std::move(frame));
  bucket.push_back(std::move(p));
  ++holding_;
  ++stats_.held;
}

void Gro::complete(std::vector<Held>& bucket, size_t index, uint64_t& reason) {
  Held& p = bucket[index];
  ++reason;
  ++stats_.completed;
  ++stats_.packets;
  stats_.largest = std::max<uint64_t>(stats_.largest, p.frames.size());
  done_.push_back(GroPacket{std::move(p.frames), p.len});
  bucket.erase(bucket.begin() + static_cast<std::ptrdiff_t>(index));
  --holding_;
}

void Gro::deliver_alone(Packet&& frame, const GroHeader& h) {
  ++stats_.normal;
  ++stats_.packets;
  std::vector<Packet> frames = spare_frames();
  frames.push_back(std::move(frame));
  done_.push_back(GroPacket{std::move(frames), h.headers + h.payload});
}

void Gro::flush(Time now, bool old_only) {
  const int64_t current = jiffies(now);
  for (std::vector<Held>& bucket : buckets_) {
    while (!bucket.empty()) {
      if (old_only && bucket.front().age == current) {
        break;  // the rest of the bucket is younger still
      }
      complete(bucket, 0, stats_.by_poll);
    }
  }
}

GroPacket Gro::pop_completed() {
  GroPacket p = std::move(done_[done_head_++]);
  if (done_head_ == done_.size()) {
    done_.clear();
    done_head_ = 0;
  }
  return p;
}

void Gro::recycle(GroPacket&& p) {
  p.frames.clear();
  if (spare_.size() < 64) {
    spare_.push_back(std::move(p.frames));
  }
}

std::vector<Packet> Gro::spare_frames() {
  if (spare_.empty()) {
    return {};
  }
  std::vector<Packet> v = std::move(spare_.back());
  spare_.pop_back();
  return v;
}

}  // namespace nicsim::algo

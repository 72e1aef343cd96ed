#include "nicsim/algo/fq_codel.h"

#include <algorithm>
#include <string>

namespace nicsim::algo {

Validation FqCodel::Params::validate() const {
  if (limit < 1 || limit > int64_t{UINT32_MAX}) {
    return ParamError{"limit", "must be in 1..4294967295 packets, got " + std::to_string(limit)};
  }
  if (flows < 1 || flows > kMaxFlows) {
    return ParamError{"flows", "must be in 1..65536, got " + std::to_string(flows)};
  }
  if (memory_limit < 1) {
    return ParamError{"memory_limit", "must be >= 1 byte, got " + std::to_string(memory_limit)};
  }
  if (drop_batch < 1 || drop_batch > int64_t{UINT32_MAX}) {
    return ParamError{"drop_batch",
                      "must be in 1..4294967295 packets, got " + std::to_string(drop_batch)};
  }
  if (quantum < 1) {
    return ParamError{"quantum", "must be >= 1 byte, got " + std::to_string(quantum)};
  }
  if (quantum > kMaxQuantum) {
    return ParamError{"quantum", "must be <= 1048576 bytes (FQ_CODEL_QUANTUM_MAX), got " +
                                     std::to_string(quantum)};
  }
  if (truesize_overhead < 0 || truesize_overhead > int64_t{UINT32_MAX}) {
    return ParamError{"truesize_overhead",
                      "must be in 0..4294967295 bytes, got " + std::to_string(truesize_overhead)};
  }
  return validate_codel_params(target, interval, mtu, ce_threshold);
}

FqCodel::FqCodel(const Params& params)
    : params_(require_valid(params)),
      config_(make_codel_config(params.target, params.interval, params.mtu, params.ecn,
                                params.ce_threshold, params.ce_threshold_selector,
                                params.ce_threshold_mask)),
      flows_count_(static_cast<uint32_t>(params.flows)),
      quantum_(static_cast<int32_t>(std::max(params.quantum, kMinQuantum))),
      limit_(static_cast<uint64_t>(params.limit)),
      memory_limit_(static_cast<uint64_t>(std::min(params.memory_limit, kMaxMemoryLimit))),
      drop_batch_(static_cast<uint32_t>(params.drop_batch)),
      truesize_overhead_(static_cast<uint64_t>(params.truesize_overhead)),
      flows_(flows_count_),
      backlogs_(flows_count_, 0) {
  // The pool holds at most limit + 1 packets (the arrival that triggers an overload drop);
  // reserve that much up front, within reason, so steady state never allocates.
  pool_.reserve(static_cast<size_t>(std::min<uint64_t>(limit_ + 1, uint64_t{1} << 16)));
}

uint32_t FqCodel::drop_from_fattest(Time now, uint32_t arriving_idx, bool memory_limited) {
  // Find the fat flow with a linear scan of backlogs_: 1024 flows are 8 KB of sequential
  // memory, cheaper than keeping a heap on the fast path (the kernel's reasoning). The kernel
  // keeps the first strictly largest; the same flow is found here in two passes (the maximum
  // over four independent lanes, then its first index), which runs several times faster.
  const uint64_t* b = backlogs_.data();
  const uint32_t n = flows_count_;
  // Four independent maxima (scalars, so they stay in registers) break the dependency chain.
  uint64_t m0 = 0;
  uint64_t m1 = 0;
  uint64_t m2 = 0;
  uint64_t m3 = 0;
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    m0 = std::max(m0, b[i]);
    m1 = std::max(m1, b[i + 1]);
    m2 = std::max(m2, b[i + 2]);
    m3 = std::max(m3, b[i + 3]);
  }
  for (; i < n; ++i) {
    m0 = std::max(m0, b[i]);
  }
  const uint64_t maxbacklog = std::max(std::max(m0, m1), std::max(m2, m3));
  uint32_t idx = 0;
  if (maxbacklog > 0) {
    while (b[idx] != maxbacklog) {
      ++idx;
    }
  }
  if (flows_[idx].queue.empty()) {
    // Only zero-length packets are queued (every backlog is 0): the kernel would dequeue
    // from an empty flow here; drop from the arriving packet's flow instead.
    idx = arriving_idx;
  }
  // Drop half of the fat flow's backlog, at most drop_batch packets, at least one: it
  // amortises the scan over many drops.
  const uint64_t threshold = maxbacklog >> 1;
  const DropReason reason = memory_limited ? DropReason::kOvermemory : DropReason::kOverlimit;
  Flow& flow = flows_[idx];
  uint64_t len = 0;
  uint64_t mem = 0;
  i = 0;
  do {
    Packet p = flow.queue.pop_front(pool_);
    len += p.len;
    mem += truesize(p.len);
    ++stats_.dropped_packets;
    stats_.dropped_bytes += p.len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, reason);
    }
  } while (++i < drop_batch_ && len < threshold && !flow.queue.empty());
  // Tell CoDel to increase its signal strength too (no Newton step, as in the kernel).
  flow.cvars.count += i;
  backlogs_[idx] -= len;
  backlog_bytes_ -= len;
  memory_usage_ -= mem;
  qlen_ -= i;
  stats_.drop_overlimit += i;
  if (memory_limited) {
    stats_.drop_overmemory += i;
  }
  return idx;
}

std::vector<uint32_t> FqCodel::list_members(const FlowQueue& l) const {
  std::vector<uint32_t> out;
  for (uint32_t i = l.head; i != kNil; i = flows_[i].next) {
    out.push_back(i);
  }
  return out;
}

}  // namespace nicsim::algo

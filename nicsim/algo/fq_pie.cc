#include "nicsim/algo/fq_pie.h"

#include <string>

namespace nicsim::algo {

Validation FqPie::Params::validate() const {
  if (limit < 1 || limit > int64_t{UINT32_MAX}) {
    return ParamError{"limit", "must be in 1..4294967295 packets, got " + std::to_string(limit)};
  }
  if (flows < 1 || flows > 65536) {
    return ParamError{"flows", "must be in 1..65536, got " + std::to_string(flows)};
  }
  if (memory_limit < 1 || memory_limit > int64_t{UINT32_MAX}) {
    return ParamError{"memory_limit",
                      "must be in 1..4294967295 bytes, got " + std::to_string(memory_limit)};
  }
  if (quantum < 1 || quantum > (int64_t{1} << 20)) {
    return ParamError{"quantum", "must be in 1..1048576 bytes, got " + std::to_string(quantum)};
  }
  if (ecn_prob < 0 || ecn_prob > 100) {
    return ParamError{"ecn_prob", "must be in 0..100 percent, got " + std::to_string(ecn_prob)};
  }
  if (truesize_overhead < 0 || truesize_overhead > int64_t{UINT32_MAX}) {
    return ParamError{"truesize_overhead",
                      "must be in 0..4294967295 bytes, got " + std::to_string(truesize_overhead)};
  }
  return validate_pie_params(target, tupdate, alpha, beta, mtu);
}

FqPie::FqPie(const Params& params)
    : params_(require_valid(params)),
      config_(make_pie_config(params.target, params.alpha, params.beta, params.ecn, params.bytemode,
                              params.dq_rate_estimator, params.mtu)),
      quantum_(static_cast<int32_t>(params.quantum)),
      limit_(static_cast<uint64_t>(params.limit)),
      memory_limit_(static_cast<uint64_t>(params.memory_limit)),
      ecn_prob_limit_((kPieMaxProb / 100) * static_cast<uint64_t>(params.ecn_prob)),
      truesize_overhead_(static_cast<uint64_t>(params.truesize_overhead)),
      flows_(static_cast<size_t>(params.flows)),
      rng_(params.seed) {
  pool_.reserve(static_cast<size_t>(std::min<uint64_t>(limit_, uint64_t{1} << 16)));
}

void FqPie::push_tail(FlowQueue& l, uint32_t idx, FlowList which) {
  Flow& f = flows_[idx];
  f.next = kNil;
  f.list = which;
  if (l.tail == kNil) {
    l.head = idx;
  } else {
    flows_[l.tail].next = idx;
  }
  l.tail = idx;
}

void FqPie::pop_head(FlowQueue& l) {
  Flow& f = flows_[l.head];
  l.head = f.next;
  if (l.head == kNil) {
    l.tail = kNil;
  }
  f.next = kNil;
  f.list = FlowList::kNone;
}

uint64_t FqPie::list_length(const FlowQueue& l) const {
  uint64_t n = 0;
  for (uint32_t i = l.head; i != kNil; i = flows_[i].next) {
    ++n;
  }
  return n;
}

void FqPie::catch_up_timer(Time now) {
  // fq_pie_init arms the timer HZ / 2 after creation; each firing updates every flow.
  timer_.run(now, kPieFirstUpdate, params_.tupdate, [this](Time) {
    bool changed = false;
    for (Flow& f : flows_) {
      const PieVars before = f.vars;
      pie_calculate_probability(config_, f.vars, f.backlog);
      changed = changed || !(f.vars == before);
    }
    return changed;
  });
}

Verdict FqPie::enqueue(Packet&& p, Time now) {
  run_timer(now);
  const uint32_t len = p.len;
  ++stats_.enqueued_packets;
  stats_.enqueued_bytes += len;
  const uint32_t idx = classify(p.flow_hash);
  Flow& flow = flows_[idx];
  const uint64_t size = truesize(len);
  bool accept = false;
  DropReason reason = DropReason::kAqm;
  if (qlen_ >= limit_) {
    ++stats_.pie.overlimit;
    reason = DropReason::kQueueFull;
  } else {
    if (memory_usage_ > memory_limit_ + size) {
      ++stats_.overmemory;  // counted only: sch_fq_pie does not drop for memory
    }
    if (!pie_drop_early(config_, flow.vars, flow.backlog, len, rng_)) {
      accept = true;
    } else if (config_.ecn && flow.vars.prob <= ecn_prob_limit_ && p.set_ce()) {
      ++stats_.pie.ecn_mark;
      ++stats_.ecn_marked;
      if (observer_ != nullptr) {
        observer_->on_mark(now, p);
      }
      accept = true;
    }
  }
  if (!accept) {
    ++stats_.pie.dropped;
    flow.vars.accu_prob = 0;
    ++stats_.dropped_packets;
    stats_.dropped_bytes += len;
    if (observer_ != nullptr) {
      observer_->on_drop(now, p, reason);
    }
    return Verdict::kDropped;
  }
  p.enqueue_ts = now;
  ++stats_.pie.packets_in;
  memory_usage_ += size;
  backlog_bytes_ += len;
  ++qlen_;
  if (observer_ != nullptr) {
    observer_->on_enqueue(now, p);
  }
  flow.queue.push_back(pool_, std::move(p));
  if (flow.list == FlowList::kNone) {
    push_tail(new_flows_, idx, FlowList::kNew);
    ++stats_.new_flow_count;
    flow.deficit = quantum_;
    flow.backlog = 0;
  }
  flow.backlog += len;
  return Verdict::kQueued;
}

uint32_t FqPie::dequeue_drr(Time now) {
  for (;;) {
    FlowQueue* head = &new_flows_;
    if (head->head == kNil) {
      head = &old_flows_;
      if (head->head == kNil) {
        return kNil;
      }
    }
    const uint32_t idx = head->head;
    Flow& flow = flows_[idx];
    if (flow.deficit <= 0) {
      flow.deficit += quantum_;
      pop_head(*head);
      push_tail(old_flows_, idx, FlowList::kOld);
      continue;
    }
    if (flow.queue.empty()) {
      // Force a pass through old_flows so a flow cannot keep the new-flow priority.
      const bool to_old = head == &new_flows_ && old_flows_.head != kNil;
      pop_head(*head);
      if (to_old) {
        push_tail(old_flows_, idx, FlowList::kOld);
      }
      continue;
    }
    const uint32_t node = flow.queue.head;
    flow.queue.head = pool_.next(node);
    if (flow.queue.head == kNil) {
      flow.queue.tail = kNil;
    }
    --flow.queue.size;
    const Packet& p = pool_.packet(node);
    --qlen_;
    backlog_bytes_ -= p.len;
    flow.deficit -= static_cast<int32_t>(p.len);
    flow.backlog -= p.len;
    memory_usage_ -= truesize(p.len);
    pie_process_dequeue(config_, flow.vars, psched_time(now), psched_time(p.enqueue_ts), p.len,
                        flow.backlog);
    return node;
  }
}

std::optional<Packet> FqPie::dequeue(Time now) {
  run_timer(now);
  uint32_t node = stash_;
  if (node != kNil) {
    stash_ = kNil;
    --qlen_;
    backlog_bytes_ -= pool_.packet(node).len;
  } else {
    node = dequeue_drr(now);
    if (node == kNil) {
      return std::nullopt;
    }
  }
  const Packet& p = pool_.packet(node);
  ++stats_.dequeued_packets;
  stats_.dequeued_bytes += p.len;
  if (observer_ != nullptr) {
    observer_->on_dequeue(now, p);
  }
  return pool_.release_optional(node);
}

const Packet* FqPie::peek(Time now) {
  run_timer(now);
  if (stash_ == kNil) {
    stash_ = dequeue_drr(now);
    if (stash_ == kNil) {
      return nullptr;
    }
    ++qlen_;  // qdisc_peek_dequeued: still part of the qdisc
    backlog_bytes_ += pool_.packet(stash_).len;
  }
  return &pool_.packet(stash_);
}

}  // namespace nicsim::algo

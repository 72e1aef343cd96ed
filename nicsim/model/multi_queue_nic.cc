#include "nicsim/model/multi_queue_nic.h"

#include <stdexcept>
#include <utility>

namespace nicsim::model {

namespace {

algo::TxQueuePick::Params tx_pick_params(size_t queues) {
  algo::TxQueuePick::Params p;
  p.tx_queues = static_cast<uint32_t>(queues);
  return p;
}

}  // namespace

MultiQueueNic::MultiQueueNic(const Params& params, std::vector<std::unique_ptr<PlatformNic>> pairs)
    : pairs_(std::move(pairs)),
      rss_(params.rss),
      tx_pick_(tx_pick_params(pairs_.empty() ? 1 : pairs_.size())) {
  if (pairs_.empty() || params.rss.queues != pairs_.size()) {
    throw InvalidParams(
        ParamError{"queues", "a multi-queue NIC needs one queue pair per RSS queue (" +
                                 std::to_string(pairs_.size()) + " pairs, " +
                                 std::to_string(params.rss.queues) + " RSS queues)"});
  }
}

void MultiQueueNic::attach(Wire* out, Wire* in, Cpu* cpu, NicSink* sink) {
  if (out == nullptr || in == nullptr || cpu == nullptr || sink == nullptr) {
    throw std::invalid_argument("MultiQueueNic::attach: out, in, cpu and sink are required");
  }
  in_ = in;
  sink_ = sink;
  cpus_.assign(1, cpu);
  own_cpus_.clear();
  for (size_t i = 1; i < pairs_.size(); ++i) {
    own_cpus_.push_back(std::make_unique<Cpu>());
    cpus_.push_back(own_cpus_.back().get());
  }
  for (size_t i = 0; i < pairs_.size(); ++i) {
    pairs_[i]->attach(out, nullptr, cpus_[i], sink);
  }
}

void MultiQueueNic::set_observer(Observer* o) {
  for (auto& p : pairs_) {
    p->set_observer(o);
  }
}

Verdict MultiQueueNic::send(Packet&& p, Time now) {
  algo::TxQueuePick::Packet pk;
  pk.hash = p.flow_hash;
  const uint32_t q = tx_pick_.pick(pk).queue;
  return pairs_[q]->send(std::move(p), now);
}

void MultiQueueNic::steer_arrivals(Time now) {
  for (;;) {
    const std::optional<Time> ready = in_->next_ready();
    if (!ready || *ready > now) {
      return;
    }
    std::optional<Packet> f = in_->pop_arrived(now);
    const uint32_t q = rss_.steer(sink_->rss_flow(*f));
    // The frame reaches its queue's ring when it arrived (the steering itself is in the MAC).
    pairs_[q]->receive(std::move(*f), *ready);
  }
}

std::optional<Time> MultiQueueNic::next_event() const {
  std::optional<Time> best = in_ != nullptr ? in_->next_ready() : std::nullopt;
  for (const auto& p : pairs_) {
    const std::optional<Time> t = p->next_event();
    if (t && (!best || *t < *best)) {
      best = t;
    }
  }
  return best;
}

void MultiQueueNic::advance(Time now) {
  // Arrivals first, then every pair until none has work due by `now` (a pair's work can make
  // more of its own work due at the same time, never another pair's).
  steer_arrivals(now);
  for (auto& p : pairs_) {
    for (std::optional<Time> t = p->next_event(); t && *t <= now; t = p->next_event()) {
      p->advance(now);
    }
  }
}

NicCounters MultiQueueNic::counters() const {
  NicCounters sum;
  for (const auto& p : pairs_) {
    sum += p->counters();
  }
  return sum;
}

NicQueueSample MultiQueueNic::queue_sample() const {
  NicQueueSample sum;
  for (const auto& p : pairs_) {
    sum += p->queue_sample();
  }
  return sum;
}

std::string MultiQueueNic::describe() const {
  return std::to_string(pairs_.size()) + " queue pairs (RSS " +
         std::to_string(rss_.table().size()) +
         "-entry table, one core each), each: " + pairs_.front()->describe();
}

}  // namespace nicsim::model

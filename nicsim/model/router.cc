#include "nicsim/model/router.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace nicsim::model {
namespace {

constexpr size_t kEthHeader = 14;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr size_t kIpv4Ttl = kEthHeader + 8;  // TTL, then protocol: one 16-bit word
constexpr size_t kIpv4Checksum = kEthHeader + 10;
constexpr size_t kIpv6HopLimit = kEthHeader + 7;

uint16_t load16(const std::vector<uint8_t>& b, size_t at) {
  return static_cast<uint16_t>((b[at] << 8) | b[at + 1]);
}
void store16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v >> 8);
  b[at + 1] = static_cast<uint8_t>(v & 0xff);
}

// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), in ones' complement arithmetic, for a header
// checksum HC when one 16-bit word changes from m to m'.
uint16_t incremental_checksum(uint16_t hc, uint16_t m, uint16_t m_new) {
  uint32_t sum =
      static_cast<uint16_t>(~hc) + static_cast<uint32_t>(static_cast<uint16_t>(~m)) + m_new;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

bool decrement_ttl(PayloadBuffer& frame) {
  std::vector<uint8_t>& b = frame.bytes;
  if (b.size() < kEthHeader) {
    return true;
  }
  const uint16_t ether_type = load16(b, 12);
  if (ether_type == kEtherTypeIpv4 && b.size() >= kEthHeader + 20) {
    if (b[kIpv4Ttl] <= 1) {
      return false;
    }
    const uint16_t old_word = load16(b, kIpv4Ttl);
    const uint16_t new_word = static_cast<uint16_t>(old_word - 0x0100);  // TTL is the high byte
    store16(b, kIpv4Ttl, new_word);
    store16(b, kIpv4Checksum, incremental_checksum(load16(b, kIpv4Checksum), old_word, new_word));
    return true;
  }
  if (ether_type == kEtherTypeIpv6 && b.size() >= kEthHeader + 40) {
    if (b[kIpv6HopLimit] <= 1) {
      return false;
    }
    --b[kIpv6HopLimit];
  }
  return true;
}

Validation Router::Params::validate() const {
  if (interfaces.empty()) {
    return ParamError{"interfaces", "a router needs at least one interface"};
  }
  for (size_t i = 0; i < interfaces.size(); ++i) {
    if (interfaces[i].qdisc_cost < Duration::zero()) {
      return ParamError{"interfaces[" + std::to_string(i) + "].qdisc_cost", "must be >= 0"};
    }
  }
  for (size_t h = 0; h < routes.size(); ++h) {
    if (routes[h] != kNoRoute &&
        (routes[h] < 0 || static_cast<size_t>(routes[h]) >= interfaces.size())) {
      return ParamError{"routes[" + std::to_string(h) + "]", "no such interface"};
    }
  }
  return cpu.validate();
}

Router::Router(const Params& params, std::vector<std::unique_ptr<Nic>> nics)
    : params_(params),
      nics_(std::move(nics)),
      ports_(nics_.size()),
      wires_(nics_.size()),
      next_(nics_.size()) {
  require_valid(params_);
  if (nics_.size() != params_.interfaces.size()) {
    throw std::invalid_argument("Router: " + std::to_string(nics_.size()) + " NICs for " +
                                std::to_string(params_.interfaces.size()) + " interfaces");
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    ports_[i].router = this;
    ports_[i].index = static_cast<int>(i);
  }
}

void Router::attach(int iface, Wire* out, Wire* in) {
  const auto i = static_cast<size_t>(iface);
  nics_.at(i)->attach(out, in, &cpu_, &ports_[i]);
  wires_[i] = Wires{out, in};
  next_[i].valid = false;
}

Time Router::nic_next(size_t i) const {
  NextCache& c = next_[i];
  const Wires& w = wires_[i];
  const uint64_t in_frames = w.in != nullptr ? w.in->stats().frames : 0;
  const Time out_paused = w.out != nullptr ? w.out->paused_until() : Time::zero();
  if (!c.valid || c.in_frames != in_frames || c.out_paused != out_paused) {
    c.at = nics_[i]->next_event().value_or(kNever);
    c.in_frames = in_frames;
    c.out_paused = out_paused;
    c.valid = true;
  }
  return c.at;
}

void Router::receive(int in, Packet&& frame, Time now) {
  ++ports_[static_cast<size_t>(in)].stats.received;
  const int out = route(frame.dst_host);
  if (out == kNoRoute) {
    cpu_.run(now, params_.cpu.per_forward);  // ip_rcv and the failed FIB lookup ran
    drop(now, frame, in, RouterObserver::Drop::kNoRoute);
    ++stats_.no_route;
    return;
  }
  if (frame.payload && !decrement_ttl(*frame.payload)) {
    cpu_.run(now, params_.cpu.per_forward);  // ip_forward checks the TTL after the lookup
    drop(now, frame, in, RouterObserver::Drop::kTtlExpired);
    ++stats_.ttl_expired;
    return;
  }
  const Duration cost =
      params_.cpu.per_forward + params_.interfaces[static_cast<size_t>(out)].qdisc_cost;
  const Time done = cpu_.run(now, cost);
  frame.tstamp = Time::zero();  // ip_forward clears skb->tstamp: the sender's EDT is not ours
  in_flight_.push_back(InFlight{done, in, out, std::move(frame)});
}

void Router::drop(Time now, const Packet& p, int in, RouterObserver::Drop why) {
  if (observer_ != nullptr) {
    observer_->on_drop(now, p, in, why);
  }
}

std::optional<Time> Router::next_event() const {
  Time t = in_flight_.empty() ? kNever : in_flight_.front().done;
  for (size_t i = 0; i < nics_.size(); ++i) {
    t = min(t, nic_next(i));
  }
  if (t == kNever) {
    return std::nullopt;
  }
  return t;
}

bool Router::step(Time now, bool first) {
  bool ran = false;
  for (size_t i = 0; i < nics_.size(); ++i) {
    // After the first pass only a NIC the router called since can be due at `now`: the other
    // NICs' wires change only from the other end, which does not run meanwhile.
    if (!first && next_[i].valid) {
      continue;
    }
    if (nic_next(i) <= now) {
      nics_[i]->advance(now);
      next_[i].valid = false;
      ran = true;
    }
  }
  while (!in_flight_.empty() && in_flight_.front().done <= now) {
    InFlight job = std::move(in_flight_.front());
    in_flight_.pop_front();
    if (observer_ != nullptr) {
      observer_->on_forward(now, job.frame, job.in, job.out);
    }
    const auto out = static_cast<size_t>(job.out);
    Port& port = ports_[out];
    next_[out].valid = false;
    if (nics_[out]->send(std::move(job.frame), now) == Verdict::kDropped) {
      ++port.stats.egress_refused;
      ++stats_.egress_refused;
    } else {
      ++port.stats.forwarded_out;
      ++stats_.forwarded;
    }
    ran = true;
  }
  return ran;
}

void Router::advance(Time now) {
  for (bool first = true; step(now, first); first = false) {
  }
}

}  // namespace nicsim::model

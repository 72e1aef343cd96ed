#include "nicsim/emu/datapath.h"

namespace nicsim::emu {

Datapath::Datapath(std::array<FramePort*, 2> ports, std::array<std::unique_ptr<model::Nic>, 2> nics,
                   std::array<model::Wire::Params, 2> wires, std::array<model::Cpu*, 2> cpus)
    : ports_(ports), nics_(std::move(nics)), rx_(kRxBudget) {
  for (size_t i = 0; i < 2; ++i) {
    wires_[i] = std::make_unique<model::Wire>(wires[i]);
    sinks_[i] = std::make_unique<Sink>(this, i);
  }
  for (size_t i = 0; i < 2; ++i) {
    nics_[i]->attach(wires_[i].get(), wires_[1 - i].get(), cpus[i], sinks_[i].get());
  }
}

size_t Datapath::receive(size_t host, Time now) {
  const size_t n = ports_[host]->receive(rx_.data(), kRxBudget);
  DirectionStats& d = dir_[host];
  for (size_t i = 0; i < n; ++i) {
    Packet& p = rx_[i];
    ++d.frames_in;
    d.bytes_in += p.len;
    p.stamp(Stage::kCreated, now);
    if (nics_[host]->send(std::move(p), now) == Verdict::kDropped) {
      ++d.nic_drops;
    }
    p = Packet();  // reset the scratch slot (the refused packet's buffer returns to the pool)
  }
  return n;
}

void Datapath::Sink::deliver(Packet&& frame, Time scheduled) {
  Datapath& dp = *dp_;
  DirectionStats& d = dp.dir_[1 - host_];  // frames for host h travelled the other direction
  ++d.frames_out;
  d.bytes_out += frame.len;
  dp.lateness_.add(dp.service_now_ - scheduled);
  dp.ports_[host_]->send(std::move(frame));
}

void Datapath::service(Time now) {
  service_now_ = now;
  // A model processes everything due at or before `now` in one advance(); passes repeat while
  // one NIC's transmission made the other NIC due (zero delay), with a guard against a model
  // that keeps scheduling at the same instant.
  for (int pass = 0; pass < 64; ++pass) {
    bool ran = false;
    for (size_t i = 0; i < 2; ++i) {
      const std::optional<Time> t = nics_[i]->next_event();
      if (t && *t <= now) {
        nics_[i]->advance(now);
        ran = true;
      }
    }
    if (!ran) {
      break;
    }
  }
  for (size_t i = 0; i < 2; ++i) {
    ports_[i]->flush();
    dir_[i].wire_lost = wires_[i]->stats().lost;
  }
}

std::optional<Time> Datapath::next_event() const {
  std::optional<Time> t;
  for (const auto& nic : nics_) {
    if (const auto e = nic->next_event()) {
      t = t ? min(*t, *e) : *e;
    }
  }
  return t;
}

}  // namespace nicsim::emu

#include "nicsim/emu/datapath.h"

#include "nicsim/emu/frame_classifier.h"

namespace nicsim::emu {

Datapath::Datapath(std::array<FramePort*, 2> ports, std::array<std::unique_ptr<model::Nic>, 2> nics,
                   std::array<model::Wire::Params, 2> wires, std::array<model::Cpu*, 2> cpus)
    : ports_(ports), nics_(std::move(nics)) {
  for (size_t i = 0; i < 2; ++i) {
    wires_[i] = std::make_unique<model::Wire>(wires[i]);
    sinks_[i] = std::make_unique<Sink>(this, i);
    rx_[i].resize(kRxBudget);
    rx_rt_[i].resize(kRxBudget);
    rx_at_[i].resize(kRxBudget);
    due_[i].reserve(1024);
  }
  for (size_t i = 0; i < 2; ++i) {
    cpu_ptr_[i] = cpus[i] != nullptr ? cpus[i] : &cpus_[i];
    nics_[i]->attach(wires_[i].get(), wires_[1 - i].get(), cpu_ptr_[i], sinks_[i].get());
  }
}

void Datapath::set_wire_tap(WireTap* tap) {
  for (size_t d = 0; d < 2; ++d) {
    wire_observers_[d] = tap != nullptr ? std::make_unique<WireObserver>(tap, d) : nullptr;
    wires_[d]->set_observer(wire_observers_[d].get());
  }
}

size_t Datapath::receive(std::array<bool, 2> ready, Time now, int64_t realtime_minus_time_ns) {
  std::array<size_t, 2> n{0, 0};
  for (size_t h = 0; h < 2; ++h) {
    if (!ready[h]) {
      continue;
    }
    n[h] = ports_[h]->receive(rx_[h].data(), rx_rt_[h].data(), kRxBudget);
    Time prev = model_time_;
    for (size_t i = 0; i < n[h]; ++i) {
      Time t = now;
      if (rx_rt_[h][i] != 0) {
        t = Time::from_ns(rx_rt_[h][i] - realtime_minus_time_ns);
      }
      t = min(max(t, prev), now);  // never before the models' time or the previous frame
      rx_at_[h][i] = t;
      prev = t;
    }
  }
  // Merge both hosts' frames by input time (host a first on ties).
  size_t i = 0;
  size_t j = 0;
  while (i < n[0] || j < n[1]) {
    const bool take_a = j >= n[1] || (i < n[0] && rx_at_[0][i] <= rx_at_[1][j]);
    const size_t h = take_a ? 0 : 1;
    const size_t k = take_a ? i++ : j++;
    const Time t = rx_at_[h][k];
    advance(t);
    Packet& p = rx_[h][k];
    DirectionStats& d = dir_[h];
    ++d.frames_in;
    d.bytes_in += p.len;
    p.id = ++next_id_;
    classify(p);
    p.stamp(Stage::kCreated, t);
    if (nics_[h]->send(std::move(p), t) == Verdict::kDropped) {
      ++d.nic_drops;
    }
    p = Packet();  // reset the scratch slot (a refused packet's buffer returns to the pool)
  }
  return n[0] + n[1];
}

void Datapath::Sink::deliver(Packet&& frame, Time scheduled) {
  Datapath& dp = *dp_;
  DirectionStats& d = dp.dir_[1 - host_];  // frames for host h travelled the other direction
  ++d.frames_out;
  d.bytes_out += frame.len;
  if (write_ecn(frame)) {
    ++d.ce_marked;
  }
  dp.due_[host_].push_back(scheduled);
  dp.ports_[host_]->send(std::move(frame));
}

void Datapath::advance(Time t) {
  model_time_ = max(model_time_, t);
  // A model processes everything due at or before `t` in one advance(); passes repeat while
  // one NIC's transmission made the other NIC due (zero delay), with a guard against a model
  // that keeps scheduling at the same instant.
  for (int pass = 0; pass < 64; ++pass) {
    bool ran = false;
    for (size_t i = 0; i < 2; ++i) {
      const std::optional<Time> e = nics_[i]->next_event();
      if (e && *e <= model_time_) {
        nics_[i]->advance(model_time_);
        ran = true;
      }
    }
    if (!ran) {
      break;
    }
  }
}

void Datapath::flush(Time now) {
  for (size_t i = 0; i < 2; ++i) {
    ports_[i]->flush();
    for (const Time scheduled : due_[i]) {
      lateness_.add(now - scheduled);
    }
    due_[i].clear();
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

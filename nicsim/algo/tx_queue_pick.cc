#include "nicsim/algo/tx_queue_pick.h"

#include <string>

namespace nicsim::algo {

namespace {

Validation check_map(const std::vector<std::vector<uint32_t>>& map, const char* key,
                     uint32_t queues) {
  for (size_t i = 0; i < map.size(); ++i) {
    for (uint32_t q : map[i]) {
      if (q >= queues) {
        return ParamError{key, "entry " + std::to_string(i) + " names TX queue " +
                                   std::to_string(q) + " but there are " + std::to_string(queues) +
                                   " TX queues"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Validation TxQueuePick::Params::validate() const {
  if (tx_queues == 0) {
    return ParamError{"tx_queues", "must be at least 1"};
  }
  if (auto e = check_map(xps_cpus, "xps_cpus", tx_queues)) {
    return e;
  }
  return check_map(xps_rxqs, "xps_rxqs", tx_queues);
}

TxQueuePick::TxQueuePick(const Params& params) : params_(params) { require_valid(params_); }

std::vector<std::vector<uint32_t>> TxQueuePick::one_queue_per_cpu(uint32_t cpus, uint32_t queues) {
  std::vector<std::vector<uint32_t>> map(cpus);
  for (uint32_t c = 0; c < cpus && c < queues; ++c) {
    map[c] = {c};
  }
  return map;
}

std::optional<uint32_t> TxQueuePick::from_map(const std::vector<std::vector<uint32_t>>& map,
                                              uint32_t index, uint32_t hash, uint32_t queues) {
  if (index >= map.size() || map[index].empty()) {
    return std::nullopt;
  }
  const auto& list = map[index];
  uint32_t q =
      list.size() == 1 ? list[0] : list[reciprocal_scale(hash, static_cast<uint32_t>(list.size()))];
  if (q >= queues) {
    return std::nullopt;
  }
  return q;
}

std::optional<uint32_t> TxQueuePick::xps_queue(const Packet& p) const {
  if (p.from_socket && p.socket_rxq) {
    if (auto q = from_map(params_.xps_rxqs, *p.socket_rxq, p.hash, params_.tx_queues)) {
      return q;
    }
  }
  if (p.sender_cpu) {
    return from_map(params_.xps_cpus, *p.sender_cpu, p.hash, params_.tx_queues);
  }
  return std::nullopt;
}

uint32_t TxQueuePick::tx_hash(const Packet& p) {
  if (p.recorded_rxq) {
    ++stats_.rxq;
    uint32_t q = *p.recorded_rxq;
    while (q >= params_.tx_queues) {
      q -= params_.tx_queues;
    }
    return q;
  }
  ++stats_.hash;
  return reciprocal_scale(p.hash, params_.tx_queues);
}

TxQueuePick::Choice TxQueuePick::pick(const Packet& p) {
  if (params_.tx_queues == 1) {
    return {0, std::nullopt};
  }
  bool cached_valid = p.socket_queue && *p.socket_queue < params_.tx_queues;
  if (cached_valid && !p.ooo_okay) {
    ++stats_.kept;
    return {*p.socket_queue, std::nullopt};
  }
  uint32_t q = 0;
  if (auto x = xps_queue(p)) {
    ++stats_.xps;
    q = *x;
  } else {
    q = tx_hash(p);
  }
  Choice c{q, std::nullopt};
  if (p.from_socket && (!p.socket_queue || *p.socket_queue != q)) {
    c.cache = q;
  }
  return c;
}

}  // namespace nicsim::algo

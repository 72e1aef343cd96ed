#include "nicsim/algo/rss.h"

#include <string>

namespace nicsim::algo {

const Rss::Key Rss::kVerificationKey = {0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
                                        0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
                                        0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
                                        0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

namespace {

constexpr size_t kTupleBytes = 12;  // IPv4 four-tuple: 4 + 4 + 2 + 2

// The 32 key bits starting at bit `bit` (bit 0 = the most significant bit of key[0]).
uint32_t key_window(const Rss::Key& key, size_t bit) {
  uint64_t w = 0;
  size_t byte = bit / 8;
  for (size_t i = 0; i < 5; ++i) {
    w = (w << 8) | (byte + i < key.size() ? key[byte + i] : 0);
  }
  return static_cast<uint32_t>(w >> (8 - bit % 8));
}

void put32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

Validation Rss::Params::validate() const {
  if (queues == 0) {
    return ParamError{"rx_queues", "must be at least 1"};
  }
  if (!power_of_two(table_size) || table_size > 4096) {
    return ParamError{"rss_table_size",
                      "must be a power of two up to 4096 (got " + std::to_string(table_size) + ")"};
  }
  if (!table.empty()) {
    if (table.size() != table_size) {
      return ParamError{"rss_table", "has " + std::to_string(table.size()) +
                                         " entries; rss_table_size is " +
                                         std::to_string(table_size)};
    }
    for (uint32_t q : table) {
      if (q >= queues) {
        return ParamError{"rss_table", "names queue " + std::to_string(q) + " but there are " +
                                           std::to_string(queues) + " RX queues"};
      }
    }
  }
  return std::nullopt;
}

Rss::Rss(const Params& params) : params_(params) {
  require_valid(params_);
  table_ = params_.table.empty() ? default_table(params_.queues, params_.table_size, params_.fill)
                                 : params_.table;
  for (size_t pos = 0; pos < kTupleBytes; ++pos) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t h = 0;
      for (size_t bit = 0; bit < 8; ++bit) {
        if (b & (0x80u >> bit)) {
          h ^= key_window(params_.key, pos * 8 + bit);
        }
      }
      lut_[pos][b] = h;
    }
  }
  stats_.per_queue.assign(params_.queues, 0);
}

uint32_t Rss::toeplitz(const Key& key, std::span<const uint8_t> input) {
  uint32_t result = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    for (size_t bit = 0; bit < 8; ++bit) {
      if (input[i] & (0x80u >> bit)) {
        result ^= key_window(key, i * 8 + bit);
      }
    }
  }
  return result;
}

Rss::Key Rss::key_from_seed(uint64_t seed) {
  Key key{};
  uint64_t x = seed;
  for (size_t i = 0; i < key.size(); i += 8) {
    // SplitMix64 (Steele, Lea, Flood 2014): a well-mixed sequence from any seed.
    x += 0x9e3779b97f4a7c15ULL;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    for (size_t j = 0; j < 8 && i + j < key.size(); ++j) {
      key[i + j] = static_cast<uint8_t>(z >> (56 - 8 * j));
    }
  }
  return key;
}

std::vector<uint32_t> Rss::default_table(uint32_t queues, uint32_t size, Fill fill) {
  std::vector<uint32_t> t(size);
  for (uint32_t i = 0; i < size; ++i) {
    t[i] = fill == Fill::kModulo ? i % queues
                                 : static_cast<uint32_t>(static_cast<uint64_t>(i) * queues / size);
  }
  return t;
}

uint32_t Rss::hash_bytes(std::span<const uint8_t> input) const {
  uint32_t h = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    h ^= lut_[i][input[i]];
  }
  return h;
}

uint32_t Rss::hash(const Flow& flow) const {
  std::array<uint8_t, kTupleBytes> in{};
  put32(&in[0], flow.src_ip);
  put32(&in[4], flow.dst_ip);
  bool ports = flow.proto == Proto::kTcp || (flow.proto == Proto::kUdp && params_.hash_udp_ports);
  if (!ports) {
    return hash_bytes(std::span<const uint8_t>(in.data(), 8));
  }
  put16(&in[8], flow.src_port);
  put16(&in[10], flow.dst_port);
  return hash_bytes(in);
}

uint32_t Rss::steer(const Flow& flow) {
  uint32_t q = queue_of_hash(hash(flow));
  ++stats_.per_queue[q];
  return q;
}

}  // namespace nicsim::algo

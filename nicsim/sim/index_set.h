#pragma once
// IndexSet — a set of small integers [0, size) kept as a bitmap, visited in increasing order.
//
// The simulation marks the endpoints (TCP senders/receivers) of a host that were touched while
// the host ran, so it re-reads only their next times and drains only their outputs — in the
// same order as a full scan over all endpoints would (increasing index), which keeps runs
// byte-identical to that scan. Insert is O(1); visiting costs one word per 64 indices plus
// one step per member (count-trailing-zeros), so an empty set of a handful of endpoints costs
// a single compare.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace nicsim::sim {

class IndexSet {
 public:
  IndexSet() = default;
  explicit IndexSet(size_t size) { resize(size); }
  // Makes room for indices [0, size); members already in range stay.
  void resize(size_t size) { words_.resize((size + 63) / 64, 0); }
  size_t capacity() const { return words_.size() * 64; }

  void insert(size_t i) { words_[i / 64] |= uint64_t{1} << (i % 64); }
  bool contains(size_t i) const { return (words_[i / 64] >> (i % 64)) & 1; }
  bool empty() const {
    for (uint64_t w : words_) {
      if (w != 0) {
        return false;
      }
    }
    return true;
  }
  void clear() {
    for (uint64_t& w : words_) {
      w = 0;
    }
  }

  // Empties the set, calling fn(index) for each member in increasing order. fn should not
  // insert into this set: an index it inserts below the next 64-index boundary is kept for the
  // next drain, one above it is visited by this drain.
  template <class Fn>
  void drain(Fn&& fn) {
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t bits = words_[w];
      words_[w] = 0;
      while (bits != 0) {
        const int bit = std::countr_zero(bits);
        bits &= bits - 1;
        fn(w * 64 + static_cast<size_t>(bit));
      }
    }
  }

 private:
  std::vector<uint64_t> words_;
};

}  // namespace nicsim::sim

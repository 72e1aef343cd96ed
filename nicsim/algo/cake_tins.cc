#include "nicsim/algo/cake_tins.h"

#include <algorithm>

namespace nicsim::algo {
namespace {

// DSCP (0..63) -> tin, one row of 8 per line; codepoints per RFC 4594 as the kernel's comments
// list them (CS1 = 8 -> Bulk, EF = 46 -> Voice, ...).
constexpr std::array<uint8_t, 64> kPrecedence = {
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
    4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7};
constexpr std::array<uint8_t, 64> kDiffserv8 = {
    2, 0, 1, 2, 4, 2, 2, 2, 1, 2, 1, 2, 1, 2, 1, 2, 5, 2, 4, 2, 4, 2, 4, 2, 3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2, 6, 2, 2, 2, 6, 2, 6, 2, 7, 2, 2, 2, 2, 2, 2, 2, 7, 2, 2, 2, 2, 2, 2, 2};
constexpr std::array<uint8_t, 64> kDiffserv4 = {
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0, 3, 0, 0, 0, 3, 0, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
constexpr std::array<uint8_t, 64> kDiffserv3 = {
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0};
constexpr std::array<uint8_t, 64> kBesteffort = {};

constexpr std::array<uint8_t, kCakeMaxTins> kNormalOrder = {0, 1, 2, 3, 4, 5, 6, 7};
constexpr std::array<uint8_t, kCakeMaxTins> kBulkOrder = {1, 0, 2, 3, 4, 5, 6, 7};
constexpr std::array<const char*, kCakeMaxTins> kTinNames = {"Tin 0", "Tin 1", "Tin 2", "Tin 3",
                                                             "Tin 4", "Tin 5", "Tin 6", "Tin 7"};

// precedence and diffserv8: each tin gets 7/8 of the previous one's threshold and weight.
void geometric(CakeTinLayout& l, uint64_t rate) {
  uint32_t quantum = 256;
  for (int i = 0; i < l.tin_count; ++i) {
    l.rate[i] = rate;
    l.quantum[i] = static_cast<uint16_t>(std::max<uint32_t>(1, quantum));
    rate = rate * 7 >> 3;
    quantum = quantum * 7 >> 3;
  }
}

}  // namespace

CakeTinLayout cake_tin_layout(CakeDiffserv mode, uint64_t rate) {
  CakeTinLayout l;
  l.order = kNormalOrder;
  l.name = kTinNames;
  switch (mode) {
    case CakeDiffserv::kBesteffort:
      l.tin_count = 1;
      l.tin_index = &kBesteffort;
      l.rate[0] = rate;
      l.quantum[0] = 65535;
      break;
    case CakeDiffserv::kPrecedence:
      l.tin_count = 8;
      l.tin_index = &kPrecedence;
      geometric(l, rate);
      break;
    case CakeDiffserv::kDiffserv8:
      l.tin_count = 8;
      l.tin_index = &kDiffserv8;
      geometric(l, rate);
      break;
    case CakeDiffserv::kDiffserv4:
      // Best Effort, Bulk (1/16), Video (1/2), Voice (1/4); weights 1024 >> the same shifts.
      l.tin_count = 4;
      l.tin_index = &kDiffserv4;
      l.order = kBulkOrder;
      l.rate = {rate, rate >> 4, rate >> 1, rate >> 2};
      l.quantum = {1024, 1024 >> 4, 1024 >> 1, 1024 >> 2};
      l.name = {"Best Effort", "Bulk", "Video", "Voice"};
      break;
    case CakeDiffserv::kDiffserv3:
      // Best Effort, Bulk (1/16), Voice (1/4).
      l.tin_count = 3;
      l.tin_index = &kDiffserv3;
      l.order = kBulkOrder;
      l.rate = {rate, rate >> 4, rate >> 2};
      l.quantum = {1024, 1024 >> 4, 1024 >> 2};
      l.name = {"Best Effort", "Bulk", "Voice"};
      break;
  }
  return l;
}

}  // namespace nicsim::algo

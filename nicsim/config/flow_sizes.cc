#include "nicsim/config/flow_sizes.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace nicsim::config {
namespace {

struct CdfPoint {
  double bytes;
  double cdf;
};

// DCTCP_CDF (flow_sizes.h): Alizadeh et al. SIGCOMM 2010 Fig. 4 as tabulated for pFabric.
constexpr CdfPoint kWebSearch[] = {{0, 0.0},         {10'000, 0.15},     {20'000, 0.2},
                                   {30'000, 0.3},    {50'000, 0.4},      {80'000, 0.53},
                                   {200'000, 0.6},   {1'000'000, 0.7},   {2'000'000, 0.8},
                                   {5'000'000, 0.9}, {10'000'000, 0.97}, {30'000'000, 1.0}};

double uniform(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
}

int64_t whole_bytes(double b) { return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(b))); }

}  // namespace

bool known_size_distribution(std::string_view name) {
  return name == "fixed" || name == "exponential" || name == "websearch";
}

int64_t websearch_size(double u) {
  for (size_t i = 1; i < std::size(kWebSearch); ++i) {
    const CdfPoint& lo = kWebSearch[i - 1];
    const CdfPoint& hi = kWebSearch[i];
    if (u <= hi.cdf) {
      const double f = hi.cdf > lo.cdf ? (u - lo.cdf) / (hi.cdf - lo.cdf) : 0.0;
      return whole_bytes(lo.bytes + f * (hi.bytes - lo.bytes));
    }
  }
  return whole_bytes(kWebSearch[std::size(kWebSearch) - 1].bytes);
}

double websearch_mean() {
  double mean = 0;
  for (size_t i = 1; i < std::size(kWebSearch); ++i) {
    const CdfPoint& lo = kWebSearch[i - 1];
    const CdfPoint& hi = kWebSearch[i];
    mean += (hi.cdf - lo.cdf) * (lo.bytes + hi.bytes) / 2;  // uniform within each segment
  }
  return mean;
}

std::vector<TransferDraw> draw_transfers(std::string_view distribution, int64_t size,
                                         double rate_per_s, Duration start, Duration stop,
                                         uint64_t seed) {
  if (!known_size_distribution(distribution)) {
    throw std::invalid_argument("unknown size distribution '" + std::string(distribution) + "'");
  }
  std::mt19937_64 rng(seed);
  std::vector<TransferDraw> out;
  double t_s = start.to_seconds();
  while (true) {
    t_s += -std::log1p(-uniform(rng)) / rate_per_s;
    const Duration at = Duration::ns(static_cast<int64_t>(std::llround(t_s * 1e9)));
    if (at >= stop) {
      break;
    }
    int64_t bytes = size;
    if (distribution == "exponential") {
      bytes = whole_bytes(-std::log1p(-uniform(rng)) * static_cast<double>(size));
    } else if (distribution == "websearch") {
      bytes = websearch_size(uniform(rng));
    }
    out.push_back(TransferDraw{at, bytes});
  }
  return out;
}

}  // namespace nicsim::config

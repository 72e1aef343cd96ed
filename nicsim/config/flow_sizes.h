#pragma once
// Transfer sizes and arrival times for [[traffic.transfers]], drawn once when the traffic is
// planned (config::plan) so that every back-end runs the same transfers.
//
// Sizes:
//   - "fixed": every transfer is `size` bytes;
//   - "exponential": mean `size` bytes, rounded up to whole bytes (at least 1);
//   - "websearch": the web-search flow-size distribution of Alizadeh et al., "Data Center TCP
//     (DCTCP)", SIGCOMM 2010, Fig. 4 (the query/background traffic of a production search
//     cluster), as tabulated in the DCTCP_CDF file of the pFabric simulations (Alizadeh et al.,
//     "pFabric", SIGCOMM 2013, Fig. 4(a)), reproduced as CDF_PFABRIC_WEB_SEARCH_BYTE in
//     snkas/networkload networkload/schedule/flowsize/flow_size_cdf_database.py:
//       bytes  0      10 K  20 K  30 K  50 K  80 K  200 K  1 M  2 M  5 M  10 M  30 M
//       CDF    0      0.15  0.2   0.3   0.4   0.53  0.6    0.7  0.8  0.9  0.97  1
//     sampled by inverting the CDF with linear interpolation between points (as networkload's
//     draw_from_cdf does), rounded up to whole bytes, at least 1 (the file's first point is
//     0 bytes; networkload moves it to 4000 B by its own estimate — we keep the file's).
// Arrivals: a Poisson process (open loop: the next arrival does not wait for the last
// transfer) of `rate` per second: exponential gaps -ln(1 - u) / rate.
// Uniform numbers u in [0, 1) are the top 53 bits of a std::mt19937_64 (fully specified by
// the C++ standard, so the same seed gives the same transfers on every platform).

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "nicsim/core/time.h"

namespace nicsim::config {

struct TransferDraw {
  Duration at;       // arrival, since the run's start
  int64_t size = 0;  // bytes
};

// "fixed", "exponential", "websearch".
bool known_size_distribution(std::string_view name);

// Inverse CDF of the web-search distribution at u in [0, 1): bytes (>= 1).
int64_t websearch_size(double u);
// Its mean in bytes (the CDF's piecewise-linear mean), for load arithmetic.
double websearch_mean();

// The arrivals in [start, stop) and their sizes, from `seed`.
std::vector<TransferDraw> draw_transfers(std::string_view distribution, int64_t size,
                                         double rate_per_s, Duration start, Duration stop,
                                         uint64_t seed);

}  // namespace nicsim::config

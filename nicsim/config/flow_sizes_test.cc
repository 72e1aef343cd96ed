// Transfer sizes and Poisson arrivals (flow_sizes.h): the web-search CDF's points, its mean
// computed by hand, and sample statistics against the distributions' own parameters.
#include "nicsim/config/flow_sizes.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace nicsim::config {
namespace {

TEST(FlowSizes, WebSearchInvertsTheTabulatedCdf) {
  EXPECT_EQ(websearch_size(0.15), 10'000);
  EXPECT_EQ(websearch_size(0.53), 80'000);
  EXPECT_EQ(websearch_size(0.7), 1'000'000);
  EXPECT_EQ(websearch_size(0.999999), 29'999'334);  // 10 M + (0.029999 / 0.03) * 20 M, ceil
  EXPECT_NEAR(websearch_size(0.075), 5'000, 1);     // halfway along the first segment
  EXPECT_EQ(websearch_size(0.0), 1);                // at least one byte
  // Mean of the piecewise-linear CDF, segment by segment (probability x midpoint):
  // .15*5K + .05*15K + .1*25K + .1*40K + .13*65K + .07*140K + .1*600K + .1*1.5M + .1*3.5M
  // + .07*7.5M + .03*20M = 750 + 750 + 2500 + 4000 + 8450 + 9800 + 60000 + 150000 + 350000
  // + 525000 + 600000 = 1,711,250 bytes
  EXPECT_DOUBLE_EQ(websearch_mean(), 1'711'250.0);
}

TEST(FlowSizes, PoissonArrivalsAndSizesMatchTheirParameters) {
  const auto d = draw_transfers("exponential", 50'000, 200.0, Duration::s(1), Duration::s(51), 7);
  // 200/s over 50 s: 10,000 expected, sd 100.
  EXPECT_NEAR(static_cast<double>(d.size()), 10'000, 400);
  EXPECT_GE(d.front().at, Duration::s(1));
  EXPECT_LT(d.back().at, Duration::s(51));
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end(), [](auto& a, auto& b) { return a.at < b.at; }));
  double sum = 0;
  for (const auto& t : d) {
    sum += static_cast<double>(t.size);
    EXPECT_GE(t.size, 1);
  }
  EXPECT_NEAR(sum / static_cast<double>(d.size()), 50'000, 2'500);  // sd of the mean ~500
  // Same seed, same draws; another seed, others.
  EXPECT_EQ(
      draw_transfers("exponential", 50'000, 200.0, Duration::s(1), Duration::s(51), 7).back().size,
      d.back().size);
  const auto f = draw_transfers("fixed", 10'000, 10.0, Duration::zero(), Duration::s(100), 1);
  EXPECT_TRUE(std::all_of(f.begin(), f.end(), [](auto& t) { return t.size == 10'000; }));
  const auto w = draw_transfers("websearch", 0, 1000.0, Duration::zero(), Duration::s(20), 3);
  size_t small = std::count_if(w.begin(), w.end(), [](auto& t) { return t.size <= 10'000; });
  EXPECT_NEAR(static_cast<double>(small) / static_cast<double>(w.size()), 0.15, 0.02);
}

}  // namespace
}  // namespace nicsim::config

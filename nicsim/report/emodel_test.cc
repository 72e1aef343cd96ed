// The G.107 E-model pinned with values computed by hand from the formulas (emodel.h).
#include "nicsim/report/emodel.h"

#include <gtest/gtest.h>

namespace nicsim::report {
namespace {

TEST(EModel, MosFromR) {
  // 1 + 0.035 * 93.2 + 93.2 * 33.2 * 6.8 * 7e-6 = 1 + 3.262 + 0.147286 = 4.409286
  EXPECT_NEAR(emodel_mos(93.2), 4.409286, 1e-6);
  // 1 + 1.75 + 50 * (-10) * 50 * 7e-6 = 2.575
  EXPECT_NEAR(emodel_mos(50), 2.575, 1e-9);
  EXPECT_EQ(emodel_mos(-3), 1.0);
  EXPECT_EQ(emodel_mos(0), 1.0);
  // The cubic gives 0.9888 at R = 3.2 (seen in an emulated VoIP call beside a flood): held at 1.
  EXPECT_EQ(emodel_mos(3.2), 1.0);
  EXPECT_GT(emodel_mos(7), 1.0);
  EXPECT_EQ(emodel_mos(100), 1.0 + 3.5);
  EXPECT_EQ(emodel_mos(120), 4.5);
}

TEST(EModel, DelayImpairment) {
  EXPECT_EQ(emodel_idd(20), 0.0);
  EXPECT_EQ(emodel_idd(100), 0.0);
  // Ta = 200 ms: X = 1; 25 * (2^(1/6) - 3 * (1 + 3^-6)^(1/6) + 2)
  //   = 25 * (1.1224620 - 3.0006856 + 2) = 3.04441
  EXPECT_NEAR(emodel_idd(200), 3.04441, 1e-4);
  // Ta = 400 ms: X = 2; (1 + 64)^(1/6) = 2.005175; (1 + (2/3)^6)^(1/6) = 1.014118
  //   25 * (2.005175 - 3.042354 + 2) = 24.0705
  EXPECT_NEAR(emodel_idd(400), 24.0705, 1e-3);
  EXPECT_GT(emodel_idd(300), emodel_idd(200));  // monotonic
}

TEST(EModel, LossImpairment) {
  const EModelCodec g711{0, 25.1};
  const EModelCodec g729a{11, 19};
  EXPECT_EQ(emodel_ie_eff(g711, 0, 1), 0.0);
  // 95 * 1 / (1 + 25.1) = 3.63985
  EXPECT_NEAR(emodel_ie_eff(g711, 1, 1), 3.63985, 1e-5);
  // 11 + 84 * 2 / (2 + 19) = 19
  EXPECT_NEAR(emodel_ie_eff(g729a, 2, 1), 19.0, 1e-12);
  // Bursty loss hurts more: BurstR = 2 -> 95 * 1 / (0.5 + 25.1) = 3.71094
  EXPECT_NEAR(emodel_ie_eff(g711, 1, 2), 3.71094, 1e-5);
  // No delay impairment, no loss: the default R.
  EXPECT_DOUBLE_EQ(emodel_r(g711, 50, 0, 1), 93.2);
  EXPECT_NEAR(emodel_r(g711, 200, 1, 1), 93.2 - 3.04441 - 3.63985, 1e-4);
}

}  // namespace
}  // namespace nicsim::report

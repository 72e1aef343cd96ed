#include "nicsim/report/run_selector.h"

#include <gtest/gtest.h>

namespace nicsim::report {
namespace {

TEST(RunSelector, OneSyntaxForEveryCommand) {
  const std::string label = "bql=true rate=1Gbit";
  for (const char* sel : {"", "bql=true", "rate=1Gbit", "bql=true,rate=1Gbit",
                          "rate=1Gbit, bql=true", "bql=true rate=1Gbit"}) {
    EXPECT_TRUE(RunSelector(sel).matches(label)) << sel;
  }
  for (const char* sel : {"bql=false", "bql=true,rate=100Mbit", "bql", "bql=true rate=1"}) {
    EXPECT_FALSE(RunSelector(sel).matches(label)) << sel;
  }
  EXPECT_TRUE(RunSelector("").matches(""));
  EXPECT_FALSE(RunSelector("bql=true").matches(""));
}

TEST(RunSelector, QuotedLabelsNameTheSingleRun) {
  EXPECT_EQ(quoted_labels({"bql=false", "bql=true"}), "'bql=false', 'bql=true'");
  EXPECT_EQ(quoted_labels({""}), "'(one run)'");
}

}  // namespace
}  // namespace nicsim::report

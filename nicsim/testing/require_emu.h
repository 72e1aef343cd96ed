#pragma once
// One rule for every GoogleTest case that needs root or network namespaces: where it cannot
// run, it is skipped with the reason — unless NICSIM_REQUIRE_EMU=1 (CI, `.ci/run`), where it
// fails with the reason, so CI never goes green by skipping (docs/emu.md, "Tests"). The shell
// tests follow the same rule in tests/emu/common.sh (emu_skip).

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace nicsim::testing {

// True when NICSIM_REQUIRE_EMU=1: a test that cannot run must fail, not skip.
inline bool emu_required() {
  const char* v = std::getenv("NICSIM_REQUIRE_EMU");
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace nicsim::testing

// Skips the current test with `reason`, or fails it under NICSIM_REQUIRE_EMU=1. A macro
// because GTEST_SKIP and FAIL return from the test body.
#define NICSIM_SKIP_UNLESS_EMU_REQUIRED(reason)                                        \
  do {                                                                                 \
    if (::nicsim::testing::emu_required()) {                                           \
      FAIL() << "NICSIM_REQUIRE_EMU=1 but this test cannot run here: " << reason;      \
    }                                                                                  \
    GTEST_SKIP() << "skipped (NICSIM_REQUIRE_EMU=1 makes this a failure): " << reason; \
  } while (0)

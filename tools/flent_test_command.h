#pragma once
// `nicsim flent-test NAME SCENARIO.toml` / `nicsim flent-test --list`: flent's named tests
// (config/flent_tests.h) over a scenario's network, in the simulator.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/config/flent_tests.h"
#include "nicsim/core/rate.h"
#include "tools/cli.h"

namespace nicsim::tools {
cli::Action define_flent_test(CLI::App& app, const cli::Invocation& inv);

// Shared with `nicsim test NAME HOST`.
// flent's test parameters (-t) as options: --streams, --markings, --rate, --size.
struct FlentParams {
  int64_t streams = 4;          // upload_streams / download_streams / bidir_streams
  std::string markings;         // rrul_var's markings, as given
  std::optional<Rate> rate;     // udp_flood's udp_bandwidth; bursts' rate
  std::optional<int64_t> size;  // udp_flood's udp_pktsize
};
void add_flent_params(CLI::App& app, FlentParams& p);
// --list: one line per preset.
int print_flent_tests();
// The preset, or a usage error listing the presets.
const config::FlentTestInfo& flent_test_or_usage(const std::string& name);
// --markings parsed (empty: none), or a usage error naming the bad element.
std::vector<uint8_t> markings_or_usage(const std::string& list);
}  // namespace nicsim::tools

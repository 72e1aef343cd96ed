// The out-of-tree consumer (examples/consumer): one scenario simulated through the installed
// library, and the fq_codel queue used on its own. Usage: consumer SCENARIO.toml
#include <cstdio>

#include "nicsim/algo/fq_codel.h"
#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/sim/simulation.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENARIO.toml\n");
    return 2;
  }
  try {
    const nicsim::config::LoadedScenario loaded = nicsim::config::load_scenario_file(argv[1]);
    for (const nicsim::config::Run& run : loaded.runs) {
      const nicsim::report::Run r = nicsim::sim::Simulation(run).run();
      std::printf("run '%s': goodput a->b %.2f Mbit/s\n", r.label.c_str(),
                  r.goodput_bps[nicsim::report::Direction::kAtoB] / 1e6);
    }
  } catch (const nicsim::config::ConfigError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  nicsim::algo::FqCodel q;
  nicsim::Packet p;
  p.len = 1514;
  q.enqueue(std::move(p), nicsim::Time::zero());
  std::printf("fq_codel holds %llu packet(s)\n",
              static_cast<unsigned long long>(q.backlog_packets()));
  return 0;
}

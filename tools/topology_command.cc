// `nicsim topology`: load a scenario and print its network (config/topology.h): nodes, CPUs,
// interfaces with NIC preset and qdisc, links per direction, route tables; --dot for Graphviz.
// The file as written is shown ([vary] values are not applied).
// Exit status: 0 ok, 2 usage or scenario error (one line naming file:line:col and key).
#include "tools/topology_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/network.h"
#include "nicsim/config/scenario.h"
#include "nicsim/config/topology.h"
#include "tools/load_scenario.h"

namespace nicsim::tools {
namespace {

struct TopologyArgs {
  std::vector<std::string> scenario;  // exactly one
  bool dot = false;
};

}  // namespace

cli::Action define_topology(CLI::App& app, const cli::Invocation&) {
  auto a = std::make_shared<TopologyArgs>();
  app.description(
      "Prints the scenario's network: every node (host or router) with its CPU preset, its\n"
      "interfaces with NIC preset and qdisc, every link with rate, delay, loss and jitter per\n"
      "direction, and each node's route table (destination host -> egress interface).\n"
      "Two-host files show their [wire] as the one link. --dot prints a Graphviz graph\n"
      "instead (render with `dot -Tsvg`).");
  app.footer("Exit status 2 on a bad scenario.");
  app.add_option("SCENARIO", a->scenario, "the scenario file (TOML, docs/scenarios.md)")
      ->type_name("SCENARIO.toml");
  app.add_flag("--dot", a->dot, "print a Graphviz (dot) graph instead of text");
  return [a] {
    const std::string& file = cli::the_one(a->scenario, "the scenario file");
    const std::optional<config::LoadedScenario> loaded = load_scenario_or_report(file);
    if (!loaded) {
      return 2;
    }
    const config::Scenario& s = loaded->scenario;
    const config::Network n = config::network_of(s);
    const std::string out = a->dot ? config::topology_dot(s, n) : config::topology_text(s, n);
    std::fputs(out.c_str(), stdout);
    return 0;
  };
}

}  // namespace nicsim::tools

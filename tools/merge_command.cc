// `nicsim merge`: the parts of a sharded campaign into one results file. Exit status: 0 ok,
// 2 usage error or parts that do not make one campaign, 1 when the output cannot be written.
#include "tools/merge_command.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "nicsim/campaign/merge.h"
#include "nicsim/report/json.h"
#include "nicsim/report/results_file.h"
#include "tools/results_output.h"

namespace nicsim::tools {
namespace {

struct MergeArgs {
  std::vector<std::string> parts;
  std::string output;
};

int merge(const MergeArgs& a, const cli::Invocation& inv) {
  std::vector<report::Results> parts;
  for (const std::string& p : a.parts) {
    try {
      parts.push_back(report::load_results_file(p));
    } catch (const report::ResultsFileError& e) {
      std::fprintf(stderr, "nicsim: %s\n", e.what());
      return 2;
    }
  }
  report::Results merged;
  try {
    merged = campaign::merge_parts(std::move(parts), a.parts);
  } catch (const campaign::MergeError& e) {
    std::fprintf(stderr, "nicsim merge: %s\n", e.what());
    return 2;
  }
  report::Results fresh = new_results(inv.argc, inv.argv);
  fresh.meta.runs = std::move(merged.meta.runs);
  fresh.meta.events = merged.meta.events;
  merged.meta = std::move(fresh.meta);
  if (std::string why = write_file(a.output, report::to_json(merged)); !why.empty()) {
    std::fprintf(stderr, "nicsim merge: cannot write %s: %s\n", a.output.c_str(), why.c_str());
    return 1;
  }
  std::fprintf(stderr, "nicsim merge: %zu parts, %zu runs -> %s\n", a.parts.size(),
               merged.runs.size(), a.output.c_str());
  return 0;
}

}  // namespace

cli::Action define_merge(CLI::App& app, const cli::Invocation& inv) {
  auto a = std::make_shared<MergeArgs>();
  app.description(
      "Joins the part files of `nicsim run --shard K/N` (every K from 1 to N, in any order)\n"
      "into the results file the whole campaign gives in one run: runs in the campaign's\n"
      "order, repetition statistics recomputed (docs/campaigns.md).");
  app.footer("Exit status 2 when the parts do not make one campaign, 1 when writing fails.");
  app.add_option("PARTS", a->parts, "the part files (results JSON with meta.shard)")
      ->type_name("PART.json");
  app.add_option("-o,--output", a->output, "the merged results file")->type_name("OUT.json");
  return [a, inv] {
    if (a->parts.empty()) {
      throw cli::UsageError("missing the part files");
    }
    if (a->output.empty()) {
      throw cli::UsageError("missing -o OUT.json");
    }
    return merge(*a, inv);
  };
}

}  // namespace nicsim::tools

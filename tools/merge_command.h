#pragma once
// `nicsim merge PARTS... -o FILE`: joins the parts of `nicsim run --shard K/N` into one results
// file (nicsim/campaign/merge.h).

#include "tools/cli.h"

namespace nicsim::tools {

cli::Action define_merge(CLI::App& app, const cli::Invocation& inv);

}  // namespace nicsim::tools

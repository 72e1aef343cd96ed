#pragma once
// nicsim merge: the parts written by `nicsim run --shard K/N` (one per K) joined into the
// results file the whole campaign writes in one go: runs in the campaign's order, statistics
// recomputed from the repetitions, meta from the merge (docs/campaigns.md).

#include <stdexcept>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::campaign {

class MergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `parts` in any order; each must carry meta.shard, all of the same campaign (same N and
// number of runs), every K exactly once, every run index exactly once. Throws MergeError
// naming the part (by position in `names`) and the problem. The result's meta has the parts'
// runs' wall-clock facts (in order) and events; the caller fills the rest.
report::Results merge_parts(std::vector<report::Results> parts,
                            const std::vector<std::string>& names);

}  // namespace nicsim::campaign

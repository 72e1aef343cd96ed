#include "nicsim/campaign/merge.h"

#include <optional>
#include <string>
#include <utility>

#include "nicsim/report/run_statistics.h"

namespace nicsim::campaign {

report::Results merge_parts(std::vector<report::Results> parts,
                            const std::vector<std::string>& names) {
  if (parts.empty()) {
    throw MergeError("no parts to merge");
  }
  const auto fail = [&](size_t i, const std::string& why) {
    throw MergeError(names.at(i) + ": " + why);
  };
  std::optional<report::Meta::Shard> first;
  std::vector<bool> have_part;
  size_t total = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::optional<report::Meta::Shard>& s = parts[i].meta.shard;
    if (!s) {
      fail(i, "not a part (no meta.shard: written without nicsim run --shard K/N)");
    }
    if (!first) {
      first = s;
      have_part.assign(s->count, false);
      total = s->total_runs;
    }
    if (s->count != first->count || s->total_runs != first->total_runs) {
      fail(i, "part " + std::to_string(s->index) + "/" + std::to_string(s->count) + " of " +
                  std::to_string(s->total_runs) + " runs does not belong with part " +
                  std::to_string(first->index) + "/" + std::to_string(first->count) + " of " +
                  std::to_string(first->total_runs) + " runs");
    }
    if (s->index < 1 || s->index > s->count || have_part[s->index - 1]) {
      fail(i, "part " + std::to_string(s->index) + "/" + std::to_string(s->count) +
                  " given twice or out of range");
    }
    have_part[s->index - 1] = true;
    if (s->run_indexes.size() != parts[i].runs.size()) {
      fail(i, "meta.shard.run_indexes has " + std::to_string(s->run_indexes.size()) +
                  " entries for " + std::to_string(parts[i].runs.size()) + " runs");
    }
  }
  for (size_t k = 0; k < have_part.size(); ++k) {
    if (!have_part[k]) {
      throw MergeError("part " + std::to_string(k + 1) + "/" + std::to_string(have_part.size()) +
                       " is missing");
    }
  }
  std::vector<std::optional<report::Run>> runs(total);
  std::vector<report::RunMeta> run_meta(total);
  report::Results out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const report::Meta::Shard& s = *parts[i].meta.shard;
    for (size_t j = 0; j < parts[i].runs.size(); ++j) {
      const uint64_t at = s.run_indexes[j];
      if (at >= total || runs[at]) {
        fail(i, "run index " + std::to_string(at) + " out of range or in two parts");
      }
      runs[at] = std::move(parts[i].runs[j]);
      if (j < parts[i].meta.runs.size()) {
        run_meta[at] = parts[i].meta.runs[j];
      }
    }
    out.meta.events += parts[i].meta.events;
  }
  for (size_t at = 0; at < total; ++at) {
    if (!runs[at]) {
      throw MergeError("run " + std::to_string(at) + " of " + std::to_string(total) +
                       " is in no part (a part was interrupted?)");
    }
    out.runs.push_back(std::move(*runs[at]));
  }
  out.meta.runs = std::move(run_meta);
  out.statistics = report::run_statistics(out.runs);
  return out;
}

}  // namespace nicsim::campaign

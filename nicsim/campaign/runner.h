#pragma once
// Runs a whole campaign into a ResultsSpool: all jobs on threads (--jobs), one part of them
// (--shard K/N), or repetitions until a metric's confidence interval is narrow enough
// (--until-ci), each run handed to the spool and to `on_run` in the serial order.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/campaign/campaign.h"
#include "nicsim/campaign/results_spool.h"

namespace nicsim::campaign {

struct Shard {
  size_t index = 1;  // K, 1-based
  size_t count = 1;  // N
};
// "K/N" -> Shard, or nullopt when it is not 1 <= K <= N.
std::optional<Shard> parse_shard(const std::string& text);
// Whether job `index` belongs to `shard` (round robin, so that every part gets a share of
// each combination).
bool in_shard(size_t index, const Shard& shard);

struct CampaignParams {
  unsigned jobs = 1;  // threads
  Plan plan;
  // --until-ci: repeat each combination until the relative half-width of `ci_metric`'s 95 %
  // interval is at most this (0.05 = 5 %), from plan.repeat repetitions up to max_repeat.
  std::optional<double> until_ci;
  uint32_t max_repeat = 50;
  std::string ci_metric;  // "" = induced_latency_ms, else the first probe's mean RTT, else goodput
  std::optional<Shard> shard;
};

struct CampaignCallbacks {
  std::function<void(const report::Run&)> on_run;  // in order, after the spool has it
  JobProgress progress;                            // worker threads
  std::function<void(size_t index)> on_finished;   // worker threads, any order
};

struct CampaignOutcome {
  size_t planned = 0;    // jobs planned (a shard's share; --until-ci: the most it may run)
  size_t delivered = 0;  // runs in the spool
  bool interrupted = false;
  std::string error;              // a run failed (its message): the campaign stopped
  std::vector<uint64_t> indexes;  // each delivered run's index in the whole campaign
  size_t total = 0;               // jobs in the whole campaign
};

// The metric --until-ci watches in `run` (the requested name, or the default); "" with the
// available names in `available` when the run has no such metric.
std::string choose_ci_metric(const report::Run& run, const std::string& requested,
                             std::string* available);

// The usual sink: a failed run stops the campaign (its message in out.error); a finished run
// goes into the spool, then to cb.on_run; out.indexes records jobs[o.index].index.
Sink spooling_sink(const std::vector<Job>& jobs, ResultsSpool& spool, const CampaignCallbacks& cb,
                   CampaignOutcome& out);

CampaignOutcome run_campaign(const config::LoadedScenario& scenario, const CampaignParams& params,
                             ResultsSpool& spool, const CampaignCallbacks& callbacks,
                             const std::atomic<bool>& stop);

}  // namespace nicsim::campaign

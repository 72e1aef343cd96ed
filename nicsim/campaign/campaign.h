#pragma once
// A campaign: every run of a scenario ([vary] combinations) times its repetitions, as jobs in
// one fixed order (combination by combination, repetitions in order), run on threads, MPI
// ranks or shards, and handed back in that order so that every way of running it writes the
// same results file (docs/campaigns.md).
//
// Threads are safe here: a simulation owns all of its state (sim::Simulation's Impl: engine,
// nodes, models, random generators seeded from the run's seed); nothing in core, algo, model,
// sim, config or report keeps mutable state at namespace or function scope (audited for issue
// 14: the only statics are constant tables, initialised thread-safely by C++11 magic statics),
// and preset files are read while loading the scenario, before any thread starts.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/config/scenario.h"
#include "nicsim/report/results.h"
#include "nicsim/sim/simulation.h"

namespace nicsim::campaign {

// The seed of repetition `r`: the scenario's own seed for r = 0 (a campaign of one repetition
// is the plain run), else SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014) of seed + r, kept below 2^63 so that it is a TOML integer.
uint64_t repetition_seed(uint64_t seed, uint32_t r);

struct Job {
  size_t index = 0;        // position in the campaign's serial order
  size_t combination = 0;  // the [vary] combination (LoadedScenario::runs index)
  uint32_t repetition = 0;
  bool repeated = false;  // the campaign has repetitions: label " rep=N", Run::repetition set
  config::Run run;        // seed and label set
};

struct Plan {
  uint32_t repeat = 1;           // repetitions per combination
  bool repeated = false;         // label and record repetitions (repeat > 1, or asked for)
  std::optional<uint64_t> seed;  // --seed: replaces the scenario's
};

// The job of `combination` and `repetition`.
Job make_job(const config::LoadedScenario& s, const Plan& plan, size_t combination,
             uint32_t repetition, size_t index);
// Every job in serial order.
std::vector<Job> plan_jobs(const config::LoadedScenario& s, const Plan& plan);

// What one job produced.
struct Outcome {
  size_t index = 0;
  enum class Status { kDone, kCancelled, kFailed } status = Status::kDone;
  report::Run run;
  report::RunMeta meta;
  std::string error;  // kFailed: "run 'label': why"
};

// Raised inside a simulation's progress callback to abandon it (Ctrl-C, --until-ci reached).
struct Cancelled {};

// Called from worker threads while a job runs (simulated progress of that job).
using JobProgress = std::function<void(const Job&, const sim::Progress&)>;

// Simulates one job. Returns kCancelled when `stop` becomes true while it runs.
Outcome run_job(const Job& job, const std::atomic<bool>& stop, const JobProgress& progress = {});

// Runs work(0..count-1) on `threads` threads and hands each outcome to `sink` on the calling
// thread in index order. At most 2 x threads outcomes wait for delivery (bounded memory).
// sink returns false to stop: nothing new starts and the jobs still running are cancelled (their
// outcomes are not delivered). When `stop` becomes true (Ctrl-C) the same happens, after the
// outcomes already finished have been delivered in order. Returns how many were delivered.
using Work = std::function<Outcome(size_t index, const std::atomic<bool>& cancel)>;
using Sink = std::function<bool(Outcome&&)>;
size_t run_ordered(size_t count, unsigned threads, const Work& work, const Sink& sink,
                   const std::atomic<bool>& stop);

}  // namespace nicsim::campaign

// Campaigns: seeds per repetition, ordered delivery on threads with bounded look-ahead, stops,
// and a threaded campaign's results document equal to the serial one.
#include "nicsim/campaign/campaign.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "nicsim/campaign/results_spool.h"
#include "nicsim/report/json.h"

namespace nicsim::campaign {
namespace {

config::LoadedScenario load(const std::string& text) {
  config::LoadOptions opts;
  opts.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
  opts.standard_presets = false;
  return config::load_scenario_text(text, "test.toml", opts);
}

const char* kScenario = R"(
[scenario]
name = "campaign"
duration = "1s"
seed = 3
repeat = 3
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "1ms"
[[traffic.tcp]]
from = "a"
to = "b"
[[traffic.ping]]
from = "a"
to = "b"
interval = "50ms"
[vary]
"wire.delay" = ["1ms", "3ms"]
)";

TEST(RepetitionSeed, FirstIsTheScenarioSeedOthersDifferAndFitToml) {
  EXPECT_EQ(repetition_seed(7, 0), 7u);
  std::set<uint64_t> seen;
  for (uint32_t r = 0; r < 1000; ++r) {
    const uint64_t s = repetition_seed(7, r);
    EXPECT_LT(s, uint64_t{1} << 63);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(repetition_seed(7, 5), repetition_seed(7, 5));
}

TEST(PlanJobs, CombinationsThenRepetitionsWithLabelsAndSeeds) {
  const config::LoadedScenario s = load(kScenario);
  EXPECT_EQ(s.scenario.repeat, 3u);
  const std::vector<Job> jobs = plan_jobs(s, {3, true, std::nullopt});
  ASSERT_EQ(jobs.size(), 6u);
  EXPECT_EQ(jobs[4].combination, 1u);
  EXPECT_EQ(jobs[4].repetition, 1u);
  EXPECT_EQ(jobs[4].run.label, "delay=3ms rep=1");
  EXPECT_EQ(jobs[4].run.scenario.seed, repetition_seed(3, 1));
  EXPECT_EQ(jobs[3].run.scenario.seed, 3u);
  EXPECT_EQ(jobs[3].run.scenario.repeat, 1u);
}

Outcome fake(size_t i) {
  Outcome o;
  o.index = i;
  o.run.label = std::to_string(i);
  return o;
}

TEST(RunOrdered, DeliversInOrderWithBoundedLookAhead) {
  std::atomic<size_t> max_ahead{0};
  std::atomic<size_t> delivered{0};
  std::vector<std::string> order;
  const std::atomic<bool> stop{false};
  const size_t n = run_ordered(
      40, 3,
      [&](size_t i, const std::atomic<bool>&) {
        const size_t ahead = i - std::min(i, delivered.load());
        size_t m = max_ahead.load();
        while (ahead > m && !max_ahead.compare_exchange_weak(m, ahead)) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 300));
        return fake(i);
      },
      [&](Outcome&& o) {
        order.push_back(o.run.label);
        ++delivered;
        return true;
      },
      stop);
  EXPECT_EQ(n, 40u);
  for (size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(order[i], std::to_string(i));
  }
  EXPECT_LE(max_ahead.load(), 6u);  // 2 x threads
}

TEST(RunOrdered, SinkStopsTheCampaign) {
  const std::atomic<bool> stop{false};
  std::vector<size_t> got;
  run_ordered(
      100, 2, [](size_t i, const std::atomic<bool>&) { return fake(i); },
      [&](Outcome&& o) {
        got.push_back(o.index);
        return got.size() < 5;
      },
      stop);
  EXPECT_EQ(got, (std::vector<size_t>{0, 1, 2, 3, 4}));
}

TEST(RunOrdered, StopDeliversWhatFinishedAndDropsCancelled) {
  std::atomic<bool> stop{false};
  std::vector<size_t> got;
  run_ordered(
      50, 2,
      [&](size_t i, const std::atomic<bool>& cancel) {
        if (i == 3) {
          stop = true;
        }
        if (i >= 3) {  // a long job: runs until cancelled
          while (!cancel.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
          Outcome o = fake(i);
          o.status = Outcome::Status::kCancelled;
          return o;
        }
        return fake(i);
      },
      [&](Outcome&& o) {
        got.push_back(o.index);
        return true;
      },
      stop);
  EXPECT_EQ(got, (std::vector<size_t>{0, 1, 2}));
}

std::string document(const config::LoadedScenario& s, unsigned threads) {
  const std::vector<Job> jobs = plan_jobs(s, {3, true, std::nullopt});
  ResultsSpool spool;
  const std::atomic<bool> stop{false};
  run_ordered(
      jobs.size(), threads,
      [&](size_t i, const std::atomic<bool>& cancel) { return run_job(jobs[i], cancel); },
      [&](Outcome&& o) {
        EXPECT_EQ(o.status, Outcome::Status::kDone) << o.error;
        spool.add(std::move(o.run), o.meta);
        return true;
      },
      stop);
  spool.finish();
  std::FILE* f = std::tmpfile();
  EXPECT_EQ(spool.write(f, report::Meta{}), "");
  std::rewind(f);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
    text.append(buf, n);
  }
  std::fclose(f);
  return text;
}

TEST(Campaign, ThreadedDocumentEqualsSerialAndCarriesStatistics) {
  const config::LoadedScenario s = load(kScenario);
  const std::string serial = document(s, 1);
  EXPECT_EQ(document(s, 3), serial);
  const report::Results r = report::results_from_json(serial);
  ASSERT_EQ(r.runs.size(), 6u);
  EXPECT_EQ(r.runs[2].repetition, 2u);
  ASSERT_EQ(r.statistics.size(), 2u);
  EXPECT_EQ(r.statistics[1].label, "delay=3ms");
  EXPECT_EQ(r.statistics[1].repetitions, 3u);
  const report::MetricStatistics& rtt = r.statistics[1].metrics.at("ping.rtt_mean_ms");
  ASSERT_TRUE(rtt.ci);
  EXPECT_GT(rtt.mean, 6.0);  // 2 x 3 ms of propagation, plus the queue
}

}  // namespace
}  // namespace nicsim::campaign

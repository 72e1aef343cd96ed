#include "nicsim/campaign/campaign.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "nicsim/campaign/wall_clock.h"
#include "nicsim/core/param_error.h"

namespace nicsim::campaign {

uint64_t repetition_seed(uint64_t seed, uint32_t r) {
  if (r == 0) {
    return seed;
  }
  uint64_t z = seed + uint64_t{r} * 0x9e3779b97f4a7c15ULL;  // SplitMix64's increment
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return (z ^ (z >> 31)) >> 1;
}

Job make_job(const config::LoadedScenario& s, const Plan& plan, size_t combination,
             uint32_t repetition, size_t index) {
  Job j;
  j.index = index;
  j.combination = combination;
  j.repetition = repetition;
  j.repeated = plan.repeated;
  j.run = s.runs.at(combination);
  j.run.scenario.repeat = 1;  // each job is one run; its configuration reproduces it alone
  j.run.scenario.seed = repetition_seed(plan.seed.value_or(j.run.scenario.seed), repetition);
  if (plan.repeated) {
    const std::string rep = "rep=" + std::to_string(repetition);
    j.run.label = j.run.label.empty() ? rep : j.run.label + " " + rep;
  }
  return j;
}

std::vector<Job> plan_jobs(const config::LoadedScenario& s, const Plan& plan) {
  std::vector<Job> jobs;
  for (size_t c = 0; c < s.runs.size(); ++c) {
    for (uint32_t r = 0; r < plan.repeat; ++r) {
      jobs.push_back(make_job(s, plan, c, r, jobs.size()));
    }
  }
  return jobs;
}

Outcome run_job(const Job& job, const std::atomic<bool>& stop, const JobProgress& progress) {
  Outcome o;
  o.index = job.index;
  const double start = wall_seconds();
  try {
    sim::Simulation simulation(job.run);
    o.run = simulation.run([&](const sim::Progress& p) {
      if (stop.load(std::memory_order_relaxed)) {
        throw Cancelled{};
      }
      if (progress) {
        progress(job, p);
      }
    });
    o.meta.events = simulation.events();
  } catch (const Cancelled&) {
    o.status = Outcome::Status::kCancelled;
    return o;
  } catch (const InvalidParams& e) {
    o.status = Outcome::Status::kFailed;
    o.error = "run '" + job.run.label + "': " + e.what();
    return o;
  } catch (const std::invalid_argument& e) {
    o.status = Outcome::Status::kFailed;
    o.error = "run '" + job.run.label + "': " + e.what();
    return o;
  }
  if (job.repeated) {
    o.run.repetition = job.repetition;
  }
  const double wall = wall_seconds() - start;
  o.meta.label = o.run.label;
  o.meta.wall_s = wall;
  o.meta.events_per_s = wall > 0 ? static_cast<double>(o.meta.events) / wall : 0;
  return o;
}

size_t run_ordered(size_t count, unsigned threads, const Work& work, const Sink& sink,
                   const std::atomic<bool>& stop) {
  threads = std::max(1u, threads);
  const size_t window = 2 * size_t{threads};
  std::mutex mu;
  std::condition_variable cv;
  std::map<size_t, Outcome> ready;  // finished, not yet delivered
  size_t next_start = 0;
  size_t next_deliver = 0;
  size_t running = 0;
  // Set on Ctrl-C (`stop`, seen by the delivering loop) or when the sink wants no more; the
  // running jobs watch it.
  std::atomic<bool> abort{false};
  bool sink_stopped = false;

  auto worker = [&] {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] {
        return abort.load() || next_start >= count || next_start < next_deliver + window;
      });
      if (abort.load() || next_start >= count) {
        return;
      }
      const size_t i = next_start++;
      ++running;
      lock.unlock();
      Outcome o = work(i, abort);
      o.index = i;
      lock.lock();
      --running;
      ready.emplace(i, std::move(o));
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<size_t>(threads, count); ++t) {
    pool.emplace_back(worker);
  }
  size_t delivered = 0;
  // A sink that throws (a results write failed) stops the campaign like one that wants no more;
  // the exception is rethrown once the workers are joined (a joinable thread must not be
  // destroyed by the unwinding).
  std::exception_ptr sink_error;
  // Hands `o` to the sink without the lock; false when the sink wants no more.
  const auto deliver = [&](std::unique_lock<std::mutex>& lock, Outcome&& o) {
    if (o.status == Outcome::Status::kCancelled) {
      return true;  // stopped while running: nothing to write
    }
    lock.unlock();
    bool more = false;
    try {
      more = sink(std::move(o));
      ++delivered;
    } catch (...) {
      sink_error = std::current_exception();
    }
    lock.lock();
    if (!more) {
      sink_stopped = true;
      abort = true;
      cv.notify_all();
    }
    return more;
  };
  {
    std::unique_lock lock(mu);
    while (next_deliver < count && !sink_stopped) {
      cv.wait_for(lock, std::chrono::milliseconds(50), [&] {
        return ready.contains(next_deliver) || (stop.load() && !abort.load()) ||
               (abort.load() && running == 0);
      });
      if (stop.load() && !abort.load()) {
        abort = true;
        cv.notify_all();
      }
      if (auto it = ready.find(next_deliver); it != ready.end()) {
        Outcome o = std::move(it->second);
        ready.erase(it);
        ++next_deliver;
        deliver(lock, std::move(o));
        cv.notify_all();
        continue;
      }
      if (abort.load() && running == 0) {
        // Ctrl-C: what finished after a gap is still written, in order.
        while (!ready.empty() && !sink_stopped) {
          Outcome o = std::move(ready.begin()->second);
          ready.erase(ready.begin());
          deliver(lock, std::move(o));
        }
        break;
      }
    }
  }
  abort = true;
  cv.notify_all();
  for (std::thread& t : pool) {
    t.join();
  }
  if (sink_error) {
    std::rethrow_exception(sink_error);
  }
  return delivered;
}

}  // namespace nicsim::campaign

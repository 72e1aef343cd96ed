#include "nicsim/campaign/runner.h"

#include <charconv>

#include "nicsim/report/run_statistics.h"

namespace nicsim::campaign {
namespace {

Work job_work(const std::vector<Job>& jobs, const CampaignCallbacks& cb) {
  return [&jobs, &cb](size_t i, const std::atomic<bool>& cancel) {
    Outcome o = run_job(jobs[i], cancel, cb.progress);
    if (cb.on_finished) {
      cb.on_finished(jobs[i].index);
    }
    return o;
  };
}

// Fixed job lists: everything, or one shard's share.
CampaignOutcome run_fixed(const config::LoadedScenario& s, const CampaignParams& p,
                          ResultsSpool& spool, const CampaignCallbacks& cb,
                          const std::atomic<bool>& stop) {
  std::vector<Job> jobs = plan_jobs(s, p.plan);
  CampaignOutcome out;
  out.total = jobs.size();
  if (p.shard) {
    std::erase_if(jobs, [&](const Job& j) { return !in_shard(j.index, *p.shard); });
  }
  out.planned = jobs.size();
  run_ordered(jobs.size(), p.jobs, job_work(jobs, cb), spooling_sink(jobs, spool, cb, out), stop);
  out.delivered = out.indexes.size();
  return out;
}

// --until-ci: combination by combination, repetitions in parallel; stops at the first count
// (in repetition order) whose interval is narrow enough, so the result does not depend on the
// number of threads.
CampaignOutcome run_until_ci(const config::LoadedScenario& s, const CampaignParams& p,
                             ResultsSpool& spool, const CampaignCallbacks& cb,
                             const std::atomic<bool>& stop) {
  CampaignOutcome out;
  out.planned = s.runs.size() * p.max_repeat;
  out.total = out.planned;
  const uint32_t min_repeat = std::max<uint32_t>(2, p.plan.repeat);
  for (size_t c = 0; c < s.runs.size() && out.error.empty() && !stop.load(); ++c) {
    std::vector<Job> jobs;
    for (uint32_t r = 0; r < p.max_repeat; ++r) {
      jobs.push_back(make_job(s, p.plan, c, r, out.indexes.size() + r));
    }
    std::string metric;
    std::vector<double> values;
    run_ordered(
        jobs.size(), p.jobs, job_work(jobs, cb),
        [&](Outcome&& o) {
          if (o.status == Outcome::Status::kFailed) {
            out.error = o.error;
            return false;
          }
          if (metric.empty()) {
            std::string available;
            metric = choose_ci_metric(o.run, p.ci_metric, &available);
            if (metric.empty()) {
              out.error = "--ci-metric " + p.ci_metric + ": run '" + o.run.label +
                          "' has no such metric (it has: " + available + ")";
              return false;
            }
          }
          for (const report::MetricValue& m : report::run_metrics(o.run)) {
            if (m.name == metric) {
              values.push_back(m.value);
            }
          }
          const bool percentile = metric.ends_with("_p50_ms") || metric.ends_with("_p99_ms");
          out.indexes.push_back(jobs[o.index].index);
          spool.add(std::move(o.run), o.meta);
          if (cb.on_run) {
            cb.on_run(spool.last());
          }
          if (values.size() < min_repeat) {
            return true;
          }
          const double rel = report::relative_half_width(report::describe(values, "", percentile));
          return !(rel >= 0 && rel <= *p.until_ci);
        },
        stop);
  }
  out.delivered = out.indexes.size();
  return out;
}

}  // namespace

std::optional<Shard> parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    return std::nullopt;
  }
  Shard s;
  const auto k = std::from_chars(text.data(), text.data() + slash, s.index);
  const auto n = std::from_chars(text.data() + slash + 1, text.data() + text.size(), s.count);
  if (k.ec != std::errc{} || k.ptr != text.data() + slash || n.ec != std::errc{} ||
      n.ptr != text.data() + text.size() || s.index < 1 || s.index > s.count) {
    return std::nullopt;
  }
  return s;
}

Sink spooling_sink(const std::vector<Job>& jobs, ResultsSpool& spool, const CampaignCallbacks& cb,
                   CampaignOutcome& out) {
  return [&jobs, &spool, &cb, &out](Outcome&& o) {
    if (o.status == Outcome::Status::kFailed) {
      out.error = o.error;
      return false;
    }
    out.indexes.push_back(jobs[o.index].index);
    spool.add(std::move(o.run), o.meta);
    if (cb.on_run) {
      cb.on_run(spool.last());
    }
    return true;
  };
}

bool in_shard(size_t index, const Shard& shard) { return index % shard.count == shard.index - 1; }

std::string choose_ci_metric(const report::Run& run, const std::string& requested,
                             std::string* available) {
  const std::vector<report::MetricValue> metrics = report::run_metrics(run);
  std::string fallback;
  for (const report::MetricValue& m : metrics) {
    if (!requested.empty() && m.name == requested) {
      return m.name;
    }
    if (requested.empty() && m.name == "induced_latency_ms") {
      return m.name;
    }
    if (fallback.empty() && m.name.ends_with(".rtt_mean_ms")) {
      fallback = m.name;
    }
  }
  if (requested.empty()) {
    if (!fallback.empty()) {
      return fallback;
    }
    if (!metrics.empty()) {
      return metrics.front().name;
    }
  }
  if (available != nullptr) {
    for (const report::MetricValue& m : metrics) {
      *available += (available->empty() ? "" : ", ") + m.name;
    }
  }
  return "";
}

CampaignOutcome run_campaign(const config::LoadedScenario& scenario, const CampaignParams& params,
                             ResultsSpool& spool, const CampaignCallbacks& callbacks,
                             const std::atomic<bool>& stop) {
  CampaignOutcome out = params.until_ci ? run_until_ci(scenario, params, spool, callbacks, stop)
                                        : run_fixed(scenario, params, spool, callbacks, stop);
  out.interrupted = stop.load() && out.error.empty();
  return out;
}

}  // namespace nicsim::campaign

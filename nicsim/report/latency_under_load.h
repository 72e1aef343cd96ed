#pragma once
// Latency under load: the metrics of flent's rrul test, the bufferbloat grade and the
// responsiveness (RPM), computed from a finished report::Run — its probe series
// (ProbeLatency::series), its phases (Run::phases) and its per-flow intervals (Run::intervals,
// FlowInterval::srtt_ms) — identically for the simulator, the emulator and live measurements.
//
// Definitions (docs/rrul.md has the full text, sources and every deviation):
// - idle / loaded: a probe sample belongs to the phase in which it was SENT; phases named
//   "idle..." are idle, phases named "load" are loaded. Lost probes count in `lost`.
// - induced latency = mean loaded RTT - mean idle RTT (DSLReports/Waveform "latency increase":
//   average loaded minus average unloaded latency).
// - grade: A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, F >= 400 ms of induced latency
//   (docs/mechanisms/latency-under-load.md; https://www.dslreports.com/faq/17930, Waveform uses the
//   same bands).
// - RPM after draft-ietf-ippm-responsiveness (-08/-09, "Final Calculations"):
//   Foreign = 60000 / TM(foreign RTTs), Loaded = 60000 / TM(self RTTs),
//   RPM = (Foreign + Loaded) / 2, TM = single-sided trimmed mean keeping the lowest TMP = 95 %,
//   over the last MAD x ID = 4 x 1 s of the load phase. Foreign probes: the run's separate
//   latency probes (UDP and ICMP, one round trip each, standing in for tcp_f and http_f);
//   self probes: the load flows' smoothed RTT per interval (FlowInterval::srtt_ms, the draft's
//   permitted TCP-stack RTT substitute for http_l). Without self samples RPM = Foreign.
// - Jain's fairness index (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984):
//   (sum x)^2 / (n * sum x^2) over the flows' bytes delivered during the load phase.
//
// Layering: report depends on core only; pure functions of their arguments.

#include <optional>
#include <string>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

struct LatencyUnderLoadParams {
  // draft-ietf-ippm-responsiveness: MAD (moving average distance, 4 intervals) x ID (interval
  // duration, 1 s): RPM aggregates the probes of the last 4 s of the load phase (all of it when
  // the load phase is shorter).
  double rpm_window_s = 4.0;
  // draft-ietf-ippm-responsiveness TMP: the trimmed mean keeps the lowest 95 % of the samples.
  double trimmed_mean_percent = 95.0;
};

// The metrics of `run`, or nullopt when they are undefined: no "load" phase, or no RTT sample
// received in the idle phases or in the load phase (then induced latency has no meaning).
std::optional<LatencyUnderLoad> compute_latency_under_load(
    const Run& run, const LatencyUnderLoadParams& params = {});

// "A+", "A", "B", "C", "D" or "F" for an induced latency in ms (thresholds above).
std::string bufferbloat_grade(double induced_latency_ms);

// Jain's fairness index of x (non-negative): (sum x)^2 / (n sum x^2); 1 for equal shares, 1/n
// when one value takes everything. 0 for an empty x or when every value is 0 (undefined).
double jain_fairness(const std::vector<double>& x);

// Single-sided trimmed mean keeping the lowest keep_percent of the samples: the mean of the
// ceil(n * keep_percent / 100) smallest samples (at least one). nullopt for no sample.
std::optional<double> trimmed_mean(std::vector<double> samples, double keep_percent);

// (60000 / foreign_ms + 60000 / self_ms) / 2, or 60000 / foreign_ms without self samples.
// 0 when foreign_ms <= 0 (no foreign sample).
double responsiveness_rpm(double foreign_ms, std::optional<double> self_ms);

}  // namespace nicsim::report

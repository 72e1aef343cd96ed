#pragma once
// The knee of receive batching (issue 17 item 5; docs/rx-batching.md "The knee"): one point per
// run, the receiving host's CPU per received frame (x) against the latency its receive path
// added (y), one series per batching mode — GRO on/off × fixed coalescing or adaptive (DIM) ×
// the other varied keys (the load) — the points of a series joined in order of x, so that a
// fixed-coalescing sweep (rx_coalesce.usecs) draws the trade-off curve and a DIM run lands as
// a point beside it. As a gnuplot job like plot_gnuplot.h; the points come from the runs'
// `rx_batching` (results.h RxBatching), which a run writes when it varies gro, adaptive_rx or
// rx_coalesce (or has GRO / adaptive_rx on).

#include <string>
#include <vector>

#include "nicsim/report/plot_gnuplot.h"
#include "nicsim/report/results.h"

namespace nicsim::report {

struct KneeSpec {
  // The receiving host; "" = per run, the rx_batching host that received the most frames.
  std::string host;
  // The y axis: "mean" (default) or "p99" of the host's rx latency (µs), or a run metric
  // (run_statistics.h, e.g. "ping.rtt_p99_ms").
  std::string y = "mean";
};

// One run's point (exposed for the HTML report and tests).
struct KneePoint {
  std::string series;  // "GRO on, fixed, rate=10Gbit"
  std::string label;   // the run's label without the series' keys, e.g. "usecs=50us"
  double cpu_ns_per_frame = 0;
  double y = 0;             // in y_unit
  double goodput_mbit = 0;  // TCP goodput of both directions + UDP floods delivered
  double irqs_per_s = 0;
  double frames_per_packet = 0;
};

// The runs' points, in run order. Throws ExportError naming the run when a run has no
// rx_batching for the host (or none with the knee's fields), or lacks the y metric.
std::vector<KneePoint> knee_points(const std::vector<PlotRun>& runs, const KneeSpec& spec);
// The y axis title of `spec` ("rx latency added, mean (us)").
std::string knee_y_title(const KneeSpec& spec);

GnuplotJob knee_job(const std::vector<PlotRun>& runs, const KneeSpec& spec, const PlotStyle& style,
                    const std::string& output, const std::string& data_dir);

}  // namespace nicsim::report

#pragma once
// Sample Results for tests and the schema check (not part of the nicsim_report library).

#include <string>

#include "nicsim/report/results.h"

namespace nicsim::report::samples {

// Every field set, including optional ones (one-way delays, per-flow data, all queue columns,
// comparison rows with and without a simulated value), awkward doubles (0.1, 1/3, 1e-9), a
// probe without samples, two runs with varied params of every ParamValue alternative.
Results full_sample_results();

// The least a valid document has: meta with only a version and a start time, one run with
// default fields (label "" as for a scenario without [vary]), no probes, intervals or queues.
Results minimal_sample_results();

// full_sample_results() as a network's results (issue 10): every flow and probe names its hosts
// (a->b flows from s1 to d1, b->a flows from d2 to s2; probes s1 -> d2), per-pair totals, Jain's
// index over the run's flows.
Results network_sample_results();

// The full sample as a document written before issue 6 (rrul) would be: without probe
// "dscp"/"series", flow "name"/"dscp", interval-flow "srtt_ms", run "phases" and
// "latency_under_load". Such documents must still validate and read.
std::string legacy_sample_json();

// full_sample_results() with the issue-6 fields reset to their defaults: what reading
// legacy_sample_json() must give.
Results legacy_sample_results();

}  // namespace nicsim::report::samples

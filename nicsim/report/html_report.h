#pragma once
// `nicsim report`: a results document as one self-contained HTML page (docs/report.md) to
// browse a run or a sweep the way flent-gui browses flent's data files:
//   * the run table (label, backend, goodput per direction, main probe p50/p99, induced latency,
//     grade, RPM: run_summary.h, the numbers of `nicsim compare`), written as HTML;
//   * for campaigns with repetitions, their statistics (the table `nicsim run --repeat` prints);
//   * for results with several runs, the trade-off plot: goodput per direction against induced
//     latency (rrul runs) or the main probe's mean RTT, one point per run or [vary] combination
//     (plot_campaign.h's tradeoff, the same statistics), the run's parameters shown on hover;
//   * per run (a selector picks it; URL fragment #run=N opens run N): goodput over time and
//     latency over time (zoom: drag, reset: double-click; both follow each other's x range),
//     latency CDFs, the mean waiting per stage of the path, the queue series.
// The charts are drawn by dygraphs (Debian libjs-dygraphs, MIT licence), embedded into nicsim
// at build time and inlined into the page with the page's own script and style; the data are
// one JSON document in a <script type="application/json"> block. A Content-Security-Policy
// forbids every load from elsewhere, so the page opens without network and cannot call out.
//
// Results files are untrusted input: every string from them is HTML-escaped in the page's
// markup, and in the JSON block '<', '>' and '&' are written as \u escapes (so "</script>" in
// a label cannot end the block); the page script puts them into the DOM as text only.
//
// Chart data are chosen and counted here (the page script only draws them): each chart carries
// the number of values it should draw ("points"); the page script writes the number dygraphs
// actually laid out into the chart's data-drawn attribute, which the browser test compares.

#include <string>
#include <string_view>

#include "nicsim/report/results.h"

namespace nicsim::report {

struct HtmlReportOptions {
  std::string source;  // the results file's name, shown in the title
  // Most values one chart draws; series with more (long probe series, CDFs) are thinned
  // evenly, keeping first and last, so a 60 s run with 1 ms probes stays light to draw.
  size_t max_points_per_series = 4000;
};

// The page. Throws ExportError (export_flent.h) when the document has no run.
std::string html_report(const Results& results, const HtmlReportOptions& options);

// Text as HTML character data or attribute value: & < > " ' escaped.
std::string html_escape(std::string_view text);

// JSON text made safe inside a <script> element: '<', '>' and '&' (which JSON allows only
// inside strings) become \u003c, \u003e, \u0026, so no "</script" or "<!--" can appear.
std::string script_safe_json(std::string_view json);

}  // namespace nicsim::report

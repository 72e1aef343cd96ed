#pragma once
// CSV export of a results document: one tidy table per kind of observation (one row per
// observation, one column per variable, RFC 4180 quoting, a header row, numbers in the
// shortest text that reads back to the same double, an empty field where a value is absent).
// docs/exports.md documents every table and column. Tables:
//   runs.csv              one row per run: label, backend, seed, params, goodput, main probe,
//                         latency under load (induced latency, grade, RPM, ...)
//   intervals.csv         per run, interval and direction: bytes, bit/s, retransmits, cwnd
//   flows.csv             per run and flow: direction, id, name, DSCP, hosts (networks), totals
//   flow_intervals.csv    the same per flow
//   interval_latency.csv  per run, interval and probe: mean RTT of the interval
//   probes.csv            per run, probe and measure (rtt, one-way a->b / b->a): statistics,
//                         hosts (networks)
//   probe_samples.csv     per run, probe and sample: send time, RTT, one-way delays
//   phases.csv            per run and phase (rrul: idle_before, load, idle_after)
//   queues.csv            per run, host and sample time: queue / BQL / FIFO occupancy
// Every table starts with `run` (the index in the JSON's runs[], from 0) and `label`.

#include <string>
#include <vector>

#include "nicsim/report/results.h"

namespace nicsim::report {

struct CsvTable {
  std::string file_name;  // "runs.csv", ...
  std::string text;       // header + rows, "\n" line ends
};

std::vector<CsvTable> csv_tables(const Results& results);

// RFC 4180 field: quoted when it contains a comma, quote, CR or LF.
std::string csv_field(const std::string& s);
// Shortest round-trip text of a double ("0.1", "1e-09", "2").
std::string csv_number(double v);

}  // namespace nicsim::report

#pragma once
// A campaign's results as they arrive: each run is serialised to its JSON element at once and
// kept in an unnamed temporary file, so memory stays bounded by one run however long the
// campaign; statistics keep only the metric values. At the end the document is written as
// head (with meta, known only then) + the spooled elements + tail, byte-identical to
// report::to_json of the same runs (json.h).

#include <cstdio>
#include <string>
#include <vector>

#include "nicsim/report/results.h"
#include "nicsim/report/run_statistics.h"

namespace nicsim::campaign {

class ResultsSpool {
 public:
  // keep_runs: also keep every run in memory (for exports that need them all: CSV, flent).
  explicit ResultsSpool(bool keep_runs = false);
  ~ResultsSpool();
  ResultsSpool(const ResultsSpool&) = delete;
  ResultsSpool& operator=(const ResultsSpool&) = delete;

  void add(report::Run run, const report::RunMeta& meta);
  size_t size() const { return count_; }
  // The run just added (all of it: added runs are kept until the next add).
  const report::Run& last() const { return last_; }
  // Wall-clock facts of the runs so far, in order (for Meta::runs).
  const std::vector<report::RunMeta>& run_meta() const { return run_meta_; }
  // Label and latency-under-load summary of every run (the text summary), series dropped.
  const std::vector<report::Run>& summaries() const { return summaries_; }
  const std::vector<report::Run>& kept() const { return kept_; }

  // Statistics of the repetitions (empty without repetitions); call once, after the last add.
  const std::vector<report::RunStatistics>& finish();
  // Writes the whole document; "" or why not (errno text).
  std::string write(std::FILE* out, const report::Meta& meta) const;

 private:
  std::FILE* spool_;
  size_t count_ = 0;
  bool keep_runs_;
  std::vector<report::RunMeta> run_meta_;
  std::vector<report::Run> summaries_;
  std::vector<report::Run> kept_;
  report::Run last_;
  report::StatisticsBuilder builder_;
  std::vector<report::RunStatistics> statistics_;
  bool finished_ = false;
};

}  // namespace nicsim::campaign

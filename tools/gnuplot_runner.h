#pragma once
// Runs a report::GnuplotJob: writes its data files and script into a scratch directory,
// runs gnuplot (found on PATH) on the script with a time bound, removes the scratch
// directory — also when SIGTERM, SIGINT or SIGHUP arrives while gnuplot runs (gnuplot is
// killed, the directory removed, then the signal takes its course). Process spawning lives
// here, not in nicsim/report.

#include <string>

#include "nicsim/report/plot_gnuplot.h"

namespace nicsim::tools {

struct GnuplotResult {
  int status = 0;       // 0 ok; 2 gnuplot missing; 1 gnuplot failed or timed out
  std::string message;  // one line when status != 0
  int signal = 0;       // SIGTERM, SIGINT or SIGHUP that interrupted gnuplot (0: none)
};

// Restores `sig`'s default action and raises it: the process ends as the signal meant.
void reraise(int sig);

// `make_job(data_dir)` builds the job for the scratch directory it is given; what it throws
// propagates (after the scratch directory is removed) and gnuplot does not run.
template <typename F>
GnuplotResult run_gnuplot(F&& make_job);

GnuplotResult run_gnuplot_in(const std::string& scratch, const report::GnuplotJob& job);
// A fresh scratch directory under $TMPDIR (or /tmp); "" on failure.
std::string make_scratch_dir();
void remove_scratch_dir(const std::string& dir);
// Absolute path of `gnuplot` on PATH, "" when missing.
std::string find_gnuplot();

template <typename F>
GnuplotResult run_gnuplot(F&& make_job) {
  const std::string dir = make_scratch_dir();
  if (dir.empty()) {
    return {1, "cannot create a scratch directory"};
  }
  report::GnuplotJob job;
  try {
    job = make_job(dir);
  } catch (...) {
    remove_scratch_dir(dir);
    throw;
  }
  GnuplotResult r = run_gnuplot_in(dir, job);
  remove_scratch_dir(dir);
  if (r.signal != 0) {
    reraise(r.signal);
  }
  return r;
}

}  // namespace nicsim::tools

#pragma once
// The campaign's progress line on a terminal (stderr): runs done / total, the running runs'
// simulated time, and an ETA from the wall time per simulated second so far. A small
// renderer of one line redrawn in place ("\r...\033[K"), at most 5 times a second; the
// command decides whether to show it (a terminal, no --quiet). Thread-safe: workers report.

#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace nicsim::campaign {

class ProgressMeter {
 public:
  // `total` runs of `run_duration_s` simulated seconds each (the ETA's unit of work).
  ProgressMeter(std::FILE* out, size_t total, double run_duration_s);

  void update(size_t index, const std::string& label, double simulated_s);
  void finished(size_t index);
  // Erases the line (before other output) and redraws it on the next update.
  void clear();

  // The line itself (tests): "runs 3/20 done | rep=4 12.0/20 s | ETA 1m05s".
  static std::string render(size_t done, size_t total, const std::string& current, double current_s,
                            double duration_s, double eta_s);

 private:
  void draw_locked(double now_s);
  std::FILE* out_;
  size_t total_;
  double duration_s_;
  std::mutex mu_;
  double start_s_;               // wall_seconds() at construction
  double last_draw_s_ = -1e300;  // when the line was last drawn
  size_t done_ = 0;
  struct Running {
    std::string label;
    double simulated_s = 0;
  };
  std::map<size_t, Running> running_;
  bool shown_ = false;
};

}  // namespace nicsim::campaign

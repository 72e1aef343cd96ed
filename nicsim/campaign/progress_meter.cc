#include "nicsim/campaign/progress_meter.h"

#include <cmath>

#include "nicsim/campaign/wall_clock.h"

namespace nicsim::campaign {
namespace {

std::string duration_text(double s) {
  char buf[32];
  const long t = std::lround(s);
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, (t / 60) % 60);
  } else if (t >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", t);
  }
  return buf;
}

}  // namespace

ProgressMeter::ProgressMeter(std::FILE* out, size_t total, double run_duration_s)
    : out_(out), total_(total), duration_s_(run_duration_s), start_s_(wall_seconds()) {}

std::string ProgressMeter::render(size_t done, size_t total, const std::string& current,
                                  double current_s, double duration_s, double eta_s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "runs %zu/%zu done", done, total);
  std::string out = buf;
  if (current_s >= 0) {
    std::snprintf(buf, sizeof buf, " | %s%s%.1f/%g s", current.c_str(), current.empty() ? "" : " ",
                  current_s, duration_s);
    out += buf;
  }
  out += eta_s >= 0 ? " | ETA " + duration_text(eta_s) : " | ETA ?";
  return out;
}

void ProgressMeter::update(size_t index, const std::string& label, double simulated_s) {
  std::lock_guard lock(mu_);
  running_[index] = {label, simulated_s};
  const double now = wall_seconds();
  if (now - last_draw_s_ >= 0.2) {
    draw_locked(now);
  }
}

void ProgressMeter::finished(size_t index) {
  std::lock_guard lock(mu_);
  running_.erase(index);
  ++done_;
  draw_locked(wall_seconds());
}

void ProgressMeter::clear() {
  std::lock_guard lock(mu_);
  if (shown_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
    shown_ = false;
  }
}

void ProgressMeter::draw_locked(double now_s) {
  last_draw_s_ = now_s;
  // Work done in simulated seconds: finished runs plus the running runs' progress.
  double work = static_cast<double>(done_) * duration_s_;
  for (const auto& [i, r] : running_) {
    work += r.simulated_s;
  }
  const double wall = now_s - start_s_;
  const double all = static_cast<double>(total_) * duration_s_;
  const double eta = work > 0 ? wall / work * (all - work) : -1;
  const Running* current = running_.empty() ? nullptr : &running_.begin()->second;
  const std::string line = render(done_, total_, current ? current->label : "",
                                  current ? current->simulated_s : -1, duration_s_, eta);
  std::fprintf(out_, "\r%s\033[K", line.c_str());
  std::fflush(out_);
  shown_ = true;
}

}  // namespace nicsim::campaign

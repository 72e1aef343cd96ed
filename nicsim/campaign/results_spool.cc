#include "nicsim/campaign/results_spool.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "nicsim/report/json.h"

namespace nicsim::campaign {

ResultsSpool::ResultsSpool(bool keep_runs) : spool_(std::tmpfile()), keep_runs_(keep_runs) {
  if (spool_ == nullptr) {
    throw std::runtime_error(std::string("cannot create a temporary file: ") +
                             std::strerror(errno));
  }
}

ResultsSpool::~ResultsSpool() { std::fclose(spool_); }

void ResultsSpool::add(report::Run run, const report::RunMeta& meta) {
  const std::string element = report::json_run_element(run, count_);
  if (std::fwrite(element.data(), 1, element.size(), spool_) != element.size()) {
    throw std::runtime_error(std::string("cannot write the temporary results file: ") +
                             std::strerror(errno));
  }
  ++count_;
  run_meta_.push_back(meta);
  builder_.add(run);
  report::Run summary;
  summary.label = run.label;
  summary.latency_under_load = run.latency_under_load;
  summaries_.push_back(std::move(summary));
  if (keep_runs_) {
    kept_.push_back(run);
  }
  last_ = std::move(run);
}

const std::vector<report::RunStatistics>& ResultsSpool::finish() {
  if (!finished_) {
    statistics_ = builder_.finish();
    finished_ = true;
  }
  return statistics_;
}

std::string ResultsSpool::write(std::FILE* out, const report::Meta& meta) const {
  const std::string head = report::json_head(&meta);
  const std::string tail = report::json_tail(count_, statistics_);
  if (std::fwrite(head.data(), 1, head.size(), out) != head.size()) {
    return std::strerror(errno);
  }
  std::fflush(spool_);
  std::rewind(spool_);
  char buf[1 << 16];
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof buf, spool_);
    if (n == 0) {
      break;
    }
    if (std::fwrite(buf, 1, n, out) != n) {
      return std::strerror(errno);
    }
  }
  if (std::ferror(spool_)) {
    return "reading the temporary results file failed";
  }
  std::fseek(spool_, 0, SEEK_END);
  if (std::fwrite(tail.data(), 1, tail.size(), out) != tail.size() || std::fflush(out) != 0) {
    return std::strerror(errno);
  }
  return "";
}

}  // namespace nicsim::campaign

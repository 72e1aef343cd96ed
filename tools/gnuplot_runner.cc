#include "tools/gnuplot_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace nicsim::tools {

namespace {

// gnuplot renders our plots in well under a second; a minute means something is wrong.
constexpr int kTimeoutSeconds = 60;

bool write_file(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << data;
  f.close();
  return static_cast<bool>(f);
}

// gnuplot reports an error as the offending command, a caret line and then
// `"plot.gp" line N: message`; keep that line, else the last non-empty one.
std::string error_line(const std::string& path) {
  std::ifstream f(path);
  std::string last;
  for (std::string line; std::getline(f, line);) {
    if (line.find("\" line ") != std::string::npos) {
      return line;
    }
    if (line.find_first_not_of(" \t") != std::string::npos) {
      last = line;
    }
  }
  return last;
}

// While gnuplot runs, SIGTERM, SIGINT and SIGHUP are noted instead of killing nicsim at once:
// the wait loop then kills gnuplot and returns, the scratch directory is removed, and
// run_gnuplot re-raises the signal (so nothing is orphaned and the exit status still says
// "killed by SIGTERM").
volatile std::sig_atomic_t g_caught_signal = 0;

extern "C" void note_signal(int sig) { g_caught_signal = sig; }

class TerminationGuard {
 public:
  TerminationGuard() {
    g_caught_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = note_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) {
      ::sigaction(kSignals[i], &sa, &old_[i]);
    }
  }
  ~TerminationGuard() {
    for (size_t i = 0; i < kSignals.size(); ++i) {
      ::sigaction(kSignals[i], &old_[i], nullptr);
    }
  }
  TerminationGuard(const TerminationGuard&) = delete;
  TerminationGuard& operator=(const TerminationGuard&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGTERM, SIGINT, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

}  // namespace

void reraise(int sig) {
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) {
      continue;
    }
    const std::string candidate = dir + "/gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

std::string make_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/nicsim-plot-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    return "";
  }
  return templ;
}

void remove_scratch_dir(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") {
        ::unlink((dir + "/" + name).c_str());
      }
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

GnuplotResult run_gnuplot_in(const std::string& scratch, const report::GnuplotJob& job) {
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    return {2, "gnuplot not found on PATH (Debian: apt-get install gnuplot-nox)"};
  }
  for (const auto& [name, data] : job.data_files) {
    if (!write_file(scratch + "/" + name, data)) {
      return {1, "cannot write " + scratch + "/" + name};
    }
  }
  const std::string script = scratch + "/plot.gp";
  const std::string errors = scratch + "/gnuplot.err";
  if (!write_file(script, job.script)) {
    return {1, "cannot write " + script};
  }
  const TerminationGuard guard;
  const pid_t pid = ::fork();
  if (pid < 0) {
    return {1, std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    const int err = ::open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int null = ::open("/dev/null", O_RDWR);
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
    }
    ::execl(gnuplot.c_str(), "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutSeconds);
  int status = 0;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      break;
    }
    if (r < 0 && errno != EINTR) {
      return {1, std::string("waitpid: ") + std::strerror(errno)};
    }
    if (const int sig = g_caught_signal; sig != 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return {1, std::string("interrupted by ") + ::strsignal(sig), sig};
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return {1, "gnuplot did not finish within " + std::to_string(kTimeoutSeconds) + " s"};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string why = error_line(errors);
    return {1, "gnuplot failed" + (why.empty() ? std::string() : ": " + why)};
  }
  return {0, ""};
}

}  // namespace nicsim::tools

#include "nicsim/emu/crash_cleanup.h"

#include <signal.h>

#include <atomic>
#include <cstring>

#include "nicsim/emu/netns.h"

namespace nicsim::emu {
namespace {

constexpr int kMaxPaths = 4;
constexpr size_t kPathBytes = 256;
char g_paths[kMaxPaths][kPathBytes];
std::atomic<int> g_count{0};
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

void on_crash(int sig) {
  const int n = g_count.exchange(0);
  for (int i = 0; i < n; ++i) {
    remove_named_netns_signal_safe(g_paths[i]);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_crash_cleanup(const std::vector<std::string>& netns_names) {
  g_count.store(0);
  int n = 0;
  for (const std::string& name : netns_names) {
    if (n == kMaxPaths) {
      break;
    }
    const std::string path = std::string(kNetnsDir) + "/" + name;
    if (path.size() >= kPathBytes) {
      continue;
    }
    std::memcpy(g_paths[n], path.c_str(), path.size() + 1);
    ++n;
  }
  g_count.store(n);
  struct sigaction sa {};
  sa.sa_handler = on_crash;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (int sig : kSignals) {
    ::sigaction(sig, &sa, nullptr);
  }
}

void clear_crash_cleanup() {
  g_count.store(0);
  for (int sig : kSignals) {
    ::signal(sig, SIG_DFL);
  }
}

}  // namespace nicsim::emu

#include "nicsim/emu/process.h"

#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "nicsim/emu/sys.h"

namespace nicsim::emu {

pid_t spawn_in_netns(const ChildSpec& spec) {
  // Everything the child needs is prepared before fork (no allocation after it).
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  std::vector<std::string> env_store;
  for (const auto& [k, v] : spec.env) {
    env_store.push_back(k + "=" + v);
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw_errno("fork");
  }
  if (pid > 0) {
    return pid;
  }
  // Child.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) {
    ::_exit(127);  // the emulator died before the prctl took effect
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) {
    ::signal(sig, SIG_DFL);
  }
  if (::setns(spec.netns_fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "nicsim: setns for '%s': %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  // A private /sys showing this namespace's links (best effort, as iproute2's netns exec).
  if (::unshare(CLONE_NEWNS) == 0 && ::mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) == 0) {
    ::umount2("/sys", MNT_DETACH);
    ::mount("sysfs", "/sys", "sysfs", 0, nullptr);
  }
  for (std::string& e : env_store) {
    ::putenv(e.data());
  }
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "nicsim: cannot run '%s': %s\n", argv[0], std::strerror(errno));
  ::_exit(127);
}

bool netns_has_listener(pid_t pid, uint64_t netns_inode) {
  const std::string base = "/proc/" + std::to_string(pid) + "/net/";
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), &st) != 0 ||
      static_cast<uint64_t>(st.st_ino) != netns_inode) {
    return false;
  }
  for (const char* table : {"tcp", "tcp6", "udp", "udp6"}) {
    std::string text;
    if (!read_file(base + table, text)) {
      continue;
    }
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);  // header
    const bool tcp = table[0] == 't';
    while (std::getline(in, line)) {
      // "  sl  local_address rem_address   st ..." : the 4th field is the state.
      std::istringstream f(line);
      std::string sl, local, remote, state;
      f >> sl >> local >> remote >> state;
      if (state.empty()) {
        continue;
      }
      if (!tcp || state == "0A") {  // TCP_LISTEN = 10
        return true;
      }
    }
  }
  return false;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return WEXITSTATUS(wait_status);
  }
  if (WIFSIGNALED(wait_status)) {
    return 128 + WTERMSIG(wait_status);
  }
  return 1;
}

}  // namespace nicsim::emu

#include "nicsim/emu/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "nicsim/emu/sys.h"

namespace nicsim::emu {

namespace {

// The signals the session's init passes on to the command. SIGKILL cannot be caught: it kills
// the init, and with it (the kernel's rule for a PID namespace's init) every process inside.
constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// Everything the init needs, prepared before clone: after clone the init allocates nothing
// (the emulator's other threads may have held the allocator's lock at that instant).
struct InitArgs {
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int netns_fd = -1;
  int emulator_pidfd = -1;  // readable once the emulator has exited
};

// The layout getdents64(2) fills (glibc declares no type for it).
struct linux_dirent64_view {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

volatile sig_atomic_t g_command_pid = 0;

// A terminal's signal (si_code SI_KERNEL: ^C, ^\, a hang-up) already reached the command,
// which is in the terminal's process group; only what was sent to the init itself (the
// emulator's kill(2), SI_USER) is passed on, so the command sees each signal once.
void forward_signal(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL) {
    return;
  }
  if (g_command_pid > 0) {
    ::kill(g_command_pid, sig);
  }
}

[[noreturn]] void fail_child(const char* what, const char* name) {
  std::fprintf(stderr, "nicsim: %s for '%s': %s\n", what, name, std::strerror(errno));
  ::_exit(127);
}

// Joins the host's namespaces: its network, a private mount namespace with a fresh /sys (so
// /sys/class/net shows the host's links, as `ip netns exec` does) and a /proc of the session's
// PID namespace (so `ps` inside shows the session's processes). The mounts are best effort.
void enter_host(const InitArgs& a) {
  if (::setns(a.netns_fd, CLONE_NEWNET) != 0) {
    fail_child("setns", a.argv[0]);
  }
  if (::unshare(CLONE_NEWNS) == 0 && ::mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) == 0) {
    ::umount2("/sys", MNT_DETACH);
    ::mount("sysfs", "/sys", "sysfs", 0, nullptr);
    ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  }
}

// Closes the descriptors the emulator marked close-on-exec (its packet sockets, TAP queues,
// namespace handles): the command would not get them anyway, and the init, which never execs,
// must not keep them open for the whole session. Inherited descriptors without the flag (a
// caller's `3>file`) stay for the command. Reads /proc/self/fd with getdents64 into a stack
// buffer: no allocation.
void close_cloexec_fds() {
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    return;
  }
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const linux_dirent64_view*>(buf + off);
      off += d->d_reclen;
      const int fd = std::atoi(d->d_name);
      if (d->d_name[0] < '0' || d->d_name[0] > '9' || fd < 3 || fd == dir) {
        continue;
      }
      const int flags = ::fcntl(fd, F_GETFD);
      if (flags >= 0 && (flags & FD_CLOEXEC) != 0) {
        ::close(fd);
      }
    }
  }
  ::close(dir);
}

[[noreturn]] void exec_command(const InitArgs& a) {
  sigset_t none;
  sigemptyset(&none);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2}) {
    ::signal(sig, SIG_DFL);
  }
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvpe(a.argv[0], a.argv, a.envp);
  std::fprintf(stderr, "nicsim: cannot run '%s': %s\n", a.argv[0], std::strerror(errno));
  ::_exit(127);
}

// PID 1 of the session's PID namespace: dies with the emulator (PR_SET_PDEATHSIG SIGKILL), runs
// the command as its only child, passes signals on, reaps orphans, and exits with the
// command's status in shell convention. When it exits — or is killed with the emulator — the
// kernel kills every process left in the namespace: the command's background children too.
int session_init(void* arg) {
  const InitArgs& a = *static_cast<const InitArgs*>(arg);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The emulator is not visible from this PID namespace (getppid() is 0): its pidfd says
  // whether it died before the prctl took effect.
  pollfd pfd{a.emulator_pidfd, POLLIN, 0};
  if (::poll(&pfd, 1, 0) != 0) {
    ::_exit(127);
  }
  ::close(a.emulator_pidfd);
  enter_host(a);
  close_cloexec_fds();
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) {
    sigaddset(&forwarded, sig);
  }
  ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);  // until the command's pid is known
  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  for (int sig : kForwarded) {
    ::sigaction(sig, &sa, nullptr);
  }
  const pid_t command = ::fork();
  if (command < 0) {
    fail_child("fork", a.argv[0]);
  }
  if (command == 0) {
    exec_command(a);
  }
  g_command_pid = command;
  ::sigprocmask(SIG_UNBLOCK, &forwarded, nullptr);
  for (;;) {
    int st = 0;
    const pid_t p = ::waitpid(-1, &st, 0);
    if (p == command) {
      ::_exit(shell_status(st));
    }
    if (p < 0 && errno != EINTR) {
      ::_exit(127);
    }
  }
}

std::vector<char*> c_strings(std::vector<std::string>& store) {
  std::vector<char*> out;
  for (std::string& s : store) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

}  // namespace

pid_t spawn_in_netns(const ChildSpec& spec) {
  std::vector<std::string> argv_store = spec.argv;
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string key = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(spec.env.begin(), spec.env.end(),
                                      [&](const auto& kv) { return kv.first == key; });
    if (!replaced) {
      env_store.push_back(entry);
    }
  }
  for (const auto& [k, v] : spec.env) {
    env_store.push_back(k + "=" + v);
  }
  const std::vector<char*> argv = c_strings(argv_store);
  const std::vector<char*> envp = c_strings(env_store);
  const UniqueFd emulator(static_cast<int>(::syscall(SYS_pidfd_open, ::getpid(), 0)));
  if (!emulator.valid()) {
    throw_errno("pidfd_open");
  }
  InitArgs args{argv.data(), envp.data(), spec.netns_fd, emulator.get()};
  // The init's stack: its own copy of this buffer (no CLONE_VM), used only by session_init.
  std::vector<uint8_t> stack(256 * 1024);
  const pid_t pid =
      ::clone(session_init, stack.data() + stack.size(), CLONE_NEWPID | SIGCHLD, &args);
  if (pid < 0) {
    throw_errno("clone(CLONE_NEWPID)");
  }
  return pid;
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

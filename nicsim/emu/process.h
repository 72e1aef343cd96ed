#pragma once
// Child commands inside an emulated host: `nicsim emulate FILE -- CMD` runs CMD in host a's
// network namespace, `--server CMD` runs CMD in host b's.
//
// Each child is a session of its own: PID 1 of a new PID namespace is a small init (a clone of
// the emulator that never execs) which dies with the emulator (PR_SET_PDEATHSIG SIGKILL), runs
// the command as its only child and passes SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGUSR1/2 on
// (a terminal's own signals reach the command directly, so they are not passed twice). When
// the command exits, or the emulator dies even by SIGKILL, the init exits and the kernel kills
// every process left in its namespace — background children and daemons that ignore SIGTERM
// included (pid_namespaces(7)). The command joins the host's network namespace (setns), gets a
// private mount namespace with a fresh /sys (so /sys/class/net shows the host's links, as
// `ip netns exec` does) and a /proc of its PID namespace, the environment variables below,
// default signal dispositions and an empty signal mask. Environment:
//   NICSIM_PEER   the other host's IPv4 address (198.18.0.2 for CMD, 198.18.0.1 for the server)
//   NICSIM_LOCAL  this host's address
//   NICSIM_HOST   this host's name in the scenario ("a" / "b")
//   NICSIM_NETNS  this host's namespace name

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nicsim::emu {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  int netns_fd = -1;
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
};

// Starts the init and the command; returns the init's pid, whose exit status is the command's
// in shell convention (a command killed by signal S: the init exits 128 + S). Throws SysError
// if clone fails. A command that
// cannot be executed exits 127 after one line on stderr ("nicsim: cannot run 'x': ...").
pid_t spawn_in_netns(const ChildSpec& spec);

// Whether process `pid` is inside the network namespace `netns_inode` and that namespace has a
// listening TCP socket or any UDP socket (reads /proc/<pid>/net/{tcp,tcp6,udp,udp6}, which show
// the process's own namespace). Checking the namespace matters: right after fork the child
// is still in the emulator's namespace, whose sockets say nothing about the server.
bool netns_has_listener(pid_t pid, uint64_t netns_inode);

// Exit status in shell convention: the exit code, or 128 + signal number.
int shell_status(int wait_status);

}  // namespace nicsim::emu

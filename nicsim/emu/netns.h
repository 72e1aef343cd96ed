#pragma once
// Named network namespaces and the registry of what the emulator created.
//
// Namespaces are bind-mounted at /run/netns/<name>, iproute2's convention, so
// `ip netns list` shows them and `ip netns exec <name> ...` works while an emulation runs.
// Every name the emulator creates is "<prefix>-<pid>-<role>" (prefix "nicsim", pid = the
// creating process). That name IS the registry: a later start finds entries whose creator is
// gone and removes them (remove_stale_namespaces), which is how leftovers of a crashed or
// SIGKILLed emulator disappear. "Gone" is decided without trusting PIDs alone: the creator is
// alive only if process <pid> still holds a file descriptor on that very namespace (or has a
// thread inside it) — the emulator keeps its namespace fds open for its whole life, so a
// recycled PID never protects a stale namespace.
//
// Removing a namespace kills the processes still inside it (SIGKILL), detaches the mount and
// unlinks the file; the kernel then destroys the namespace and every link in it (veth pairs
// vanish with either end). Links live only inside the emulator's namespaces, never in the
// caller's, so removing the namespaces is the whole cleanup.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/emu/sys.h"

namespace nicsim::emu {

inline constexpr const char* kNetnsDir = "/run/netns";
inline constexpr const char* kDefaultPrefix = "nicsim";

// "<prefix>-<pid>-<role>".
std::string netns_name(std::string_view prefix, pid_t pid, std::string_view role);
// Parses a name made by netns_name with this prefix; nullopt for anything else.
struct ParsedNetnsName {
  pid_t pid = 0;
  std::string role;
};
std::optional<ParsedNetnsName> parse_netns_name(std::string_view prefix, std::string_view name);

// Creates a network namespace and bind-mounts it at /run/netns/<name> (making /run/netns a
// shared mount point first, as iproute2 does). Returns an fd on the namespace. IPv6 is
// disabled inside (no router solicitations, DAD or MLD reports on the emulated link), and the
// loopback device is left down. Throws SysError; on failure nothing is left behind.
UniqueFd create_named_netns(const std::string& name);
// Kills the processes inside, detaches the mount and unlinks /run/netns/<name>. Best effort,
// never throws; returns false if the file could not be removed.
bool remove_named_netns(const std::string& name);
// Async-signal-safe part of the removal (umount2 + unlink only), for a crash handler.
void remove_named_netns_signal_safe(const char* path);

// Opens /run/netns/<name> (or any nsfs path). Throws SysError.
UniqueFd open_netns(const std::string& path);

// Moves the calling thread into a network namespace and back on destruction. Sockets created
// meanwhile stay in that namespace for their whole life.
class NetnsGuard {
 public:
  explicit NetnsGuard(int netns_fd);
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;
  ~NetnsGuard();

 private:
  UniqueFd saved_;
};

// The nsfs inode of a namespace file (/run/netns/x, /proc/<pid>/ns/net); nullopt if it is not
// a namespace (e.g. an empty placeholder left by a crash between create and mount).
std::optional<uint64_t> netns_inode(const std::string& path);
// Whether process `pid` holds an fd on, or has a thread in, the network namespace `inode`.
bool process_uses_netns(pid_t pid, uint64_t inode);
// PIDs of the processes whose network namespace is `inode`.
std::vector<pid_t> processes_in_netns(uint64_t inode);

// Removes every /run/netns/<prefix>-<pid>-<role> whose creator no longer uses it. Returns the
// names removed.
std::vector<std::string> remove_stale_namespaces(std::string_view prefix = kDefaultPrefix);
// Names under /run/netns starting with "<prefix>-" (for tests and --cleanup).
std::vector<std::string> list_namespaces(std::string_view prefix = kDefaultPrefix);

// Privileges the emulator needs: CAP_SYS_ADMIN (unshare + mount), CAP_NET_ADMIN (links,
// addresses), CAP_NET_RAW (AF_PACKET). Given an effective capability mask (CapEff in
// /proc/self/status), the names of those missing, "" when none.
std::string missing_capabilities(uint64_t cap_eff);
// The current process's CapEff; nullopt when it cannot be read.
std::optional<uint64_t> effective_capabilities();
// One line explaining why the emulator cannot run here, or "" when it can.
std::string privilege_problem();

}  // namespace nicsim::emu

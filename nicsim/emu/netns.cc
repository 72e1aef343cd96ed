#include "nicsim/emu/netns.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

namespace nicsim::emu {
namespace {

constexpr int kCapNetAdmin = 12;
constexpr int kCapNetRaw = 13;
constexpr int kCapSysAdmin = 21;

struct NsId {
  dev_t dev = 0;
  ino_t ino = 0;
};

std::optional<NsId> ns_id(const std::string& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0 || fs.f_type != NSFS_MAGIC) {
    return std::nullopt;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  return NsId{st.st_dev, st.st_ino};
}

bool same_ns(const std::string& path, const NsId& id) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_dev == id.dev && st.st_ino == id.ino;
}

template <class F>
void for_each_numeric_entry(const std::string& dir, F&& f) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return;
  }
  while (const dirent* e = ::readdir(d)) {
    pid_t v = 0;
    const char* end = e->d_name + std::strlen(e->d_name);
    auto [p, ec] = std::from_chars(e->d_name, end, v);
    if (ec == std::errc() && p == end && e->d_name[0] != '\0') {
      f(v, std::string(e->d_name));
    }
  }
  ::closedir(d);
}

bool pid_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// iproute2's netns_setup: /run/netns must be a shared mount so the bind mounts below
// propagate into other mount namespaces (and their removal too).
void ensure_netns_dir() {
  if (::mkdir(kNetnsDir, 0755) != 0 && errno != EEXIST) {
    throw_errno(std::string("mkdir ") + kNetnsDir);
  }
  bool bound = false;
  for (;;) {
    if (::mount("", kNetnsDir, "none", MS_SHARED | MS_REC, nullptr) == 0) {
      return;
    }
    if (errno != EINVAL || bound) {
      throw_errno(std::string("mount --make-shared ") + kNetnsDir);
    }
    if (::mount(kNetnsDir, kNetnsDir, "none", MS_BIND | MS_REC, nullptr) != 0) {
      throw_errno(std::string("mount --bind ") + kNetnsDir);
    }
    bound = true;
  }
}

void write_sysctl_quiet(const char* path, const char* value) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    [[maybe_unused]] ssize_t n = ::write(fd, value, std::strlen(value));
    ::close(fd);
  }
}

}  // namespace

std::string netns_name(std::string_view prefix, pid_t pid, std::string_view role) {
  return std::string(prefix) + "-" + std::to_string(pid) + "-" + std::string(role);
}

std::optional<ParsedNetnsName> parse_netns_name(std::string_view prefix, std::string_view name) {
  if (name.size() <= prefix.size() + 1 || name.substr(0, prefix.size()) != prefix ||
      name[prefix.size()] != '-') {
    return std::nullopt;
  }
  std::string_view rest = name.substr(prefix.size() + 1);
  const size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 >= rest.size()) {
    return std::nullopt;
  }
  pid_t pid = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + dash, pid);
  if (ec != std::errc() || p != rest.data() + dash || pid <= 0) {
    return std::nullopt;
  }
  ParsedNetnsName out;
  out.pid = pid;
  out.role = std::string(rest.substr(dash + 1));
  for (char c : out.role) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
      return std::nullopt;
    }
  }
  return out;
}

UniqueFd open_netns(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    throw_errno("open " + path);
  }
  return fd;
}

UniqueFd create_named_netns(const std::string& name) {
  ensure_netns_dir();
  const std::string path = std::string(kNetnsDir) + "/" + name;
  {
    UniqueFd placeholder(::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
    if (!placeholder.valid()) {
      throw_errno("create " + path);
    }
  }
  UniqueFd saved(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!saved.valid()) {
    const int err = errno;
    ::unlink(path.c_str());
    throw SysError("open /proc/thread-self/ns/net", err);
  }
  if (::unshare(CLONE_NEWNET) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    throw SysError("unshare(CLONE_NEWNET)", err);
  }
  UniqueFd ns(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  int err = ns.valid() ? 0 : errno;
  if (err == 0 &&
      ::mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) != 0) {
    err = errno;
  }
  if (err == 0) {
    // Inside the new namespace: no IPv6 at all on the emulated link (router solicitations,
    // DAD and MLD reports would be extra frames on the wire).
    write_sysctl_quiet("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
    write_sysctl_quiet("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
  }
  if (::setns(saved.get(), CLONE_NEWNET) != 0) {
    // Cannot return to the caller's namespace: continuing would configure the wrong one.
    err = err != 0 ? err : errno;
    ::umount2(path.c_str(), MNT_DETACH);
    ::unlink(path.c_str());
    throw SysError("setns back to the original network namespace", err);
  }
  if (err != 0) {
    ::unlink(path.c_str());
    throw SysError("mount --bind netns " + path, err);
  }
  return ns;
}

void remove_named_netns_signal_safe(const char* path) {
  ::umount2(path, MNT_DETACH);
  ::unlink(path);
}

bool remove_named_netns(const std::string& name) {
  const std::string path = std::string(kNetnsDir) + "/" + name;
  if (const auto id = ns_id(path)) {
    for (int round = 0; round < 3; ++round) {
      const auto pids = processes_in_netns(id->ino);
      if (pids.empty()) {
        break;
      }
      for (pid_t p : pids) {
        if (p != ::getpid()) {
          ::kill(p, SIGKILL);
        }
      }
    }
    ::umount2(path.c_str(), MNT_DETACH);
  }
  return ::unlink(path.c_str()) == 0 || errno == ENOENT;
}

NetnsGuard::NetnsGuard(int netns_fd) {
  saved_.reset(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!saved_.valid()) {
    throw_errno("open /proc/thread-self/ns/net");
  }
  if (::setns(netns_fd, CLONE_NEWNET) != 0) {
    throw_errno("setns(CLONE_NEWNET)");
  }
}

NetnsGuard::~NetnsGuard() {
  if (::setns(saved_.get(), CLONE_NEWNET) != 0) {
    // Staying in the wrong namespace would silently misconfigure everything that follows.
    std::abort();
  }
}

std::optional<uint64_t> netns_inode(const std::string& path) {
  const auto id = ns_id(path);
  if (!id) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(id->ino);
}

bool process_uses_netns(pid_t pid, uint64_t inode) {
  const std::string base = "/proc/" + std::to_string(pid);
  // The nsfs device: any process's ns link has it.
  struct stat own {};
  if (::stat("/proc/self/ns/net", &own) != 0) {
    return false;
  }
  const NsId id{own.st_dev, static_cast<ino_t>(inode)};
  bool found = false;
  for_each_numeric_entry(base + "/fd", [&](pid_t, const std::string& fd) {
    if (!found && same_ns(base + "/fd/" + fd, id)) {
      found = true;
    }
  });
  if (!found) {
    for_each_numeric_entry(base + "/task", [&](pid_t, const std::string& tid) {
      if (!found && same_ns(base + "/task/" + tid + "/ns/net", id)) {
        found = true;
      }
    });
  }
  return found;
}

std::vector<pid_t> processes_in_netns(uint64_t inode) {
  std::vector<pid_t> out;
  for_each_numeric_entry("/proc", [&](pid_t pid, const std::string& dir) {
    struct stat st {};
    if (::stat(("/proc/" + dir + "/ns/net").c_str(), &st) == 0 &&
        static_cast<uint64_t>(st.st_ino) == inode) {
      out.push_back(pid);
    }
  });
  return out;
}

std::vector<std::string> list_namespaces(std::string_view prefix) {
  std::vector<std::string> out;
  DIR* d = ::opendir(kNetnsDir);
  if (d == nullptr) {
    return out;
  }
  const std::string start = std::string(prefix) + "-";
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.compare(0, start.size(), start) == 0) {
      out.push_back(n);
    }
  }
  ::closedir(d);
  return out;
}

std::vector<std::string> remove_stale_namespaces(std::string_view prefix) {
  std::vector<std::string> removed;
  for (const std::string& name : list_namespaces(prefix)) {
    const auto parsed = parse_netns_name(prefix, name);
    if (!parsed) {
      continue;  // not ours
    }
    const std::string path = std::string(kNetnsDir) + "/" + name;
    const auto inode = netns_inode(path);
    bool stale = false;
    if (inode) {
      stale = !process_uses_netns(parsed->pid, *inode);
    } else {
      // A placeholder without a namespace: a creator that died between create and mount.
      stale = !pid_alive(parsed->pid);
    }
    if (stale && remove_named_netns(name)) {
      removed.push_back(name);
    }
  }
  return removed;
}

std::string missing_capabilities(uint64_t cap_eff) {
  std::string out;
  auto need = [&](int bit, const char* cap) {
    if ((cap_eff & (uint64_t{1} << bit)) == 0) {
      out += out.empty() ? "" : ", ";
      out += cap;
    }
  };
  need(kCapSysAdmin, "CAP_SYS_ADMIN");
  need(kCapNetAdmin, "CAP_NET_ADMIN");
  need(kCapNetRaw, "CAP_NET_RAW");
  return out;
}

std::optional<uint64_t> effective_capabilities() {
  std::string status;
  if (!read_file("/proc/self/status", status)) {
    return std::nullopt;
  }
  const size_t at = status.find("\nCapEff:");
  if (at == std::string::npos) {
    return std::nullopt;
  }
  size_t p = at + 8;
  while (p < status.size() && (status[p] == ' ' || status[p] == '\t')) {
    ++p;
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(status.data() + p, status.data() + status.size(), v, 16);
  if (ec != std::errc() || end == status.data() + p) {
    return std::nullopt;
  }
  return v;
}

std::string privilege_problem() {
  const auto caps = effective_capabilities();
  const std::string missing = caps ? missing_capabilities(*caps) : std::string("capabilities");
  if (missing.empty()) {
    return "";
  }
  return "needs root to create network namespaces and links (missing " + missing +
         "); run it as root, e.g. sudo nicsim emulate ...";
}

}  // namespace nicsim::emu

#include "nicsim/emu/session.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "nicsim/emu/crash_cleanup.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/config/host_nic.h"
#include "nicsim/emu/packet_port.h"
#include "nicsim/emu/pcap_writer.h"
#include "nicsim/emu/process.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/tap_port.h"
#include "nicsim/emu/wire_only_nic.h"

namespace nicsim::emu {
namespace {

constexpr uint32_t kSignalToken = 2;
constexpr uint32_t kDoneToken = 3;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr Duration kControlTick = Duration::ms(5);

// Blocks the session's signals for its lifetime and restores the previous mask after.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    for (int s : kStopSignals) {
      sigaddset(&set_, s);
    }
    sigaddset(&set_, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &set_, &old_);
    old_pipe_ = ::signal(SIGPIPE, SIG_IGN);
  }
  ~BlockedSignals() {
    ::signal(SIGPIPE, old_pipe_);
    ::sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  const sigset_t& set() const { return set_; }

 private:
  sigset_t set_{};
  sigset_t old_{};
  sighandler_t old_pipe_ = SIG_DFL;
};

class CrashGuard {
 public:
  explicit CrashGuard(const std::vector<std::string>& names) { install_crash_cleanup(names); }
  ~CrashGuard() { clear_crash_cleanup(); }
};

struct Child {
  pid_t pid = -1;
  bool running = false;
  int status = 0;  // shell convention, valid once !running
};

report::LatencyStats stats_of(const report::LatencyRecorder& r) { return r.stats(); }

double seconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

}  // namespace

std::vector<std::string> unsupported_settings(const config::Scenario& s) {
  std::vector<std::string> out;
  auto note = [&](const std::string& key, const std::string& what) {
    out.push_back(s.where(key).to_string() + ": " + key + ": " + what);
  };
  for (const config::HostConfig& h : s.hosts) {
    const std::string k = "hosts." + h.name;
    if (!(h.tcp == config::TcpConfig{})) {
      note(k + ".tcp", "TCP settings are not applied to the hosts' kernels yet");
    }
  }
  return out;
}

SessionResult run_session(const config::Run& run, const SessionOptions& opt) {
  const config::Scenario& sc = run.scenario;
  auto notice = [&](const std::string& line) {
    if (opt.notice) {
      opt.notice(line);
    }
  };
  SessionResult result;
  BlockedSignals blocked;

  // Models and the pcap file first: a bad parameter or path fails before anything exists.
  // The NICs are the scenario hosts' (preset + overrides, qdisc, CPU costs).
  std::array<std::unique_ptr<model::Nic>, 2> nics;
  for (size_t i = 0; i < 2; ++i) {
    if (opt.nic_models) {
      nics[i] = config::make_host_nic(sc.hosts.at(i));
    } else {
      nics[i] = std::make_unique<WireOnlyNic>(WireOnlyNic::Params{opt.txqueuelen});
    }
    result.nics[i] = nics[i]->describe();
  }
  RealClock clock;
  std::unique_ptr<PcapWriter> pcap;
  if (!opt.pcap.empty()) {
    pcap = std::make_unique<PcapWriter>(opt.pcap);
    pcap->set_realtime_offset_ns(clock.realtime_minus_time_ns());
  }

  result.removed_leftovers = remove_stale_namespaces(opt.prefix);
  for (const std::string& name : result.removed_leftovers) {
    notice("removed leftover namespace " + name + " of an emulator that is gone");
  }

  const pid_t self = ::getpid();
  std::vector<std::string> names = {netns_name(opt.prefix, self, "a"),
                                    netns_name(opt.prefix, self, "b")};
  if (opt.io == FrameIo::kPacket) {
    names.push_back(netns_name(opt.prefix, self, "sw"));
  }
  CrashGuard crash_guard(names);
  TopologyOptions topo_opt;
  topo_opt.io = opt.io;
  topo_opt.prefix = opt.prefix;
  std::unique_ptr<Topology> topo = Topology::create(topo_opt);
  result.namespaces = topo->namespaces();

  UniqueFd sigfd(::signalfd(-1, &blocked.set(), SFD_NONBLOCK | SFD_CLOEXEC));
  if (!sigfd.valid()) {
    throw_errno("signalfd");
  }

  // Pool first: it must outlive every frame held by the ports and models below.
  FramePool pool;
  std::array<std::unique_ptr<FramePort>, 2> ports;
  for (size_t i = 0; i < 2; ++i) {
    HostEnd& h = topo->host(i);
    if (opt.io == FrameIo::kPacket) {
      ports[i] = std::make_unique<PacketPort>(topo->switch_netns_fd(), h.port_ifname, pool);
    } else {
      ports[i] = std::make_unique<TapPort>(std::move(h.tap_fd), h.ifname, pool);
    }
  }
  result.io = ports[0]->describe();
  // Same seeds as the simulator: direction d's wire uses seed * 2 + d.
  std::array<model::Wire::Params, 2> wires = {sc.wire.params(sc.seed * 2),
                                              sc.wire.params(sc.seed * 2 + 1)};
  auto datapath = std::make_unique<Datapath>(
      std::array<FramePort*, 2>{ports[0].get(), ports[1].get()}, std::move(nics), wires);

  if (pcap) {
    datapath->set_wire_tap(pcap.get());
  }

  if (opt.on_ready) {
    opt.on_ready(*topo);
  }

  EventLoop loop(clock, opt.loop);
  if (!loop.rt_error().empty()) {
    notice("real-time scheduling unavailable (" + loop.rt_error() +
           "); timer error will be larger on a busy machine");
  }
  loop.add(ports[0]->fd(), 0);
  loop.add(ports[1]->fd(), 1);
  loop.add(sigfd.get(), kSignalToken);
  if (opt.done_fd >= 0) {
    loop.add(opt.done_fd, kDoneToken);
  }
  bool work_done = false;

  const std::string host_names[2] = {sc.hosts.size() > 0 ? sc.hosts[0].name : "a",
                                     sc.hosts.size() > 1 ? sc.hosts[1].name : "b"};
  auto spec_for = [&](size_t i, const std::vector<std::string>& argv) {
    const HostEnd& h = topo->host(i);
    const HostEnd& peer = topo->host(1 - i);
    ChildSpec spec;
    spec.argv = argv;
    spec.netns_fd = h.netns_fd.get();
    spec.env = {{"NICSIM_PEER", peer.addr_string()},
                {"NICSIM_LOCAL", h.addr_string()},
                {"NICSIM_HOST", host_names[i]},
                {"NICSIM_NETNS", h.netns}};
    return spec;
  };

  const uint64_t server_netns_inode =
      netns_inode(std::string(kNetnsDir) + "/" + topo->host(1).netns).value_or(0);
  Child command;
  Child server;
  enum class Phase { kWaitServer, kRunning, kStopping, kDone };
  Phase phase = Phase::kRunning;
  rusage usage_start{};
  ::getrusage(RUSAGE_SELF, &usage_start);
  Time start = clock.now();
  std::optional<Time> end_at;  // without a command: start + duration
  std::optional<Time> server_deadline;
  std::optional<Time> kill_at;
  Time next_control = start;
  report::LatencyRecorder work;

  auto start_command = [&] {
    if (!opt.command.empty()) {
      command.pid = spawn_in_netns(spec_for(0, opt.command));
      command.running = true;
    } else {
      end_at = clock.now() + opt.duration.value_or(sc.duration);
    }
    phase = Phase::kRunning;
  };
  auto signal_children = [&](int sig) {
    for (Child* c : {&command, &server}) {
      if (c->running) {
        ::kill(c->pid, sig);
      }
    }
  };
  auto begin_stop = [&](int forward_sig, Time now) {
    if (phase == Phase::kStopping || phase == Phase::kDone) {
      return;
    }
    phase = Phase::kStopping;
    if (forward_sig != 0) {
      signal_children(forward_sig);
    }
    kill_at = now + opt.kill_grace;
  };
  auto reap = [&] {
    for (;;) {
      int st = 0;
      const pid_t p = ::waitpid(-1, &st, WNOHANG);
      if (p <= 0) {
        return;
      }
      for (Child* c : {&command, &server}) {
        if (c->running && c->pid == p) {
          c->running = false;
          c->status = shell_status(st);
        }
      }
    }
  };

  if (!opt.server.empty()) {
    server.pid = spawn_in_netns(spec_for(1, opt.server));
    server.running = true;
    server_deadline = start + opt.server_wait;
    phase = Phase::kWaitServer;
  } else {
    start_command();
  }

  while (phase != Phase::kDone) {
    std::optional<Time> deadline = datapath->next_event();
    auto earliest = [&](std::optional<Time> t) {
      if (t && (!deadline || *t < *deadline)) {
        deadline = t;
      }
    };
    if (phase == Phase::kWaitServer || phase == Phase::kStopping) {
      earliest(next_control);
    }
    earliest(end_at);
    earliest(kill_at);

    const std::span<const uint32_t> ready = loop.wait(deadline);
    Time now = clock.now();
    const Time woke = now;
    std::array<bool, 2> readable{false, false};
    for (uint32_t token : ready) {
      if (token < 2) {
        readable[token] = true;
        continue;
      }
      if (token == kDoneToken) {
        work_done = true;
        continue;
      }
      signalfd_siginfo si{};
      while (::read(sigfd.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        const int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGCHLD) {
          reap();
        } else if (result.signal == 0) {
          result.signal = sig;
          begin_stop(sig, now);
        }
      }
    }
    if (readable[0] || readable[1]) {
      datapath->receive(readable, now, clock.realtime_minus_time_ns());
    }
    now = clock.now();
    datapath->service(now);
    if (!ready.empty()) {
      work.add(clock.now() - woke);
    }

    // Control: server readiness, command exit, duration, kill grace.
    if (phase == Phase::kWaitServer && now >= next_control) {
      next_control = now + kControlTick;
      if (!server.running) {
        notice("the server exited (status " + std::to_string(server.status) +
               ") before it listened; not starting the command");
        result.exit_status = 1;
        begin_stop(0, now);
      } else if (netns_has_listener(server.pid, server_netns_inode)) {
        start_command();
      } else if (now >= *server_deadline) {
        notice("the server is not listening after " +
               std::to_string(opt.server_wait.count_ns() / 1'000'000) +
               " ms; starting the command anyway");
        start_command();
      }
    }
    if (phase == Phase::kRunning) {
      if (command.pid > 0 && !command.running) {
        result.exit_status = command.status;
        begin_stop(server.running ? SIGTERM : 0, now);
      } else if ((end_at && now >= *end_at) || work_done) {
        begin_stop(server.running ? SIGTERM : 0, now);
      }
    }
    if (phase == Phase::kStopping) {
      if (!command.running && !server.running) {
        phase = Phase::kDone;
      } else if (kill_at && now >= *kill_at) {
        signal_children(SIGKILL);
        phase = Phase::kDone;
      } else {
        next_control = now + kControlTick;
      }
    }
  }
  const Time stop = clock.now();
  result.elapsed_s = (stop - start).to_seconds();
  rusage usage_stop{};
  ::getrusage(RUSAGE_SELF, &usage_stop);
  result.cpu_user_s = seconds(usage_stop.ru_utime) - seconds(usage_start.ru_utime);
  result.cpu_sys_s = seconds(usage_stop.ru_stime) - seconds(usage_start.ru_stime);

  // Reap what is left (SIGKILLed children exit at once).
  for (Child* c : {&command, &server}) {
    if (c->running) {
      int st = 0;
      if (::waitpid(c->pid, &st, 0) == c->pid) {
        c->running = false;
        c->status = shell_status(st);
      }
    }
  }
  if (result.signal != 0) {
    // Interrupted: the command's own status if it finished, else 128 + the signal.
    const bool command_exited_cleanly =
        command.pid > 0 && command.status >= 0 && command.status < 128;
    result.exit_status = command_exited_cleanly ? command.status : 128 + result.signal;
  } else if (command.pid > 0) {
    result.exit_status = command.status;
  }

  for (size_t d = 0; d < 2; ++d) {
    result.directions[d] = datapath->stats(d);
    result.wires[d] = datapath->wire(d).stats();
    result.ports[d] = ports[d]->stats();
    result.nic_counters[d] = datapath->nic(d).counters();
    result.nic_queues[d] = datapath->nic(d).queue_sample();
    result.cpus[d] = datapath->cpu(d).stats();
  }
  result.timer_error = stats_of(loop.timer_error());
  result.release_lateness = stats_of(datapath->release_lateness());
  result.loop = loop.stats();
  result.work_time = stats_of(work);

  datapath.reset();
  if (pcap) {
    result.pcap_frames = pcap->frames();
    result.pcap_error = pcap->close();
  }
  for (auto& p : ports) {
    p.reset();
  }
  topo->remove();
  return result;
}

}  // namespace nicsim::emu

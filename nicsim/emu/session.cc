#include "nicsim/emu/session.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>

#include "nicsim/config/host_nic.h"
#include "nicsim/emu/crash_cleanup.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/packet_port.h"
#include "nicsim/emu/pcap_writer.h"
#include "nicsim/emu/process.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/session_control.h"
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

namespace {

// Step 1: the NIC models and their descriptions. First, so a bad parameter fails before
// anything exists. The NICs are the scenario hosts' (preset + overrides, qdisc, CPU costs),
// or WireOnlyNic FIFOs (--nic fifo).
std::array<std::unique_ptr<model::Nic>, 2> build_nics(const config::Scenario& sc,
                                                      const SessionOptions& opt,
                                                      SessionResult& result) {
  std::array<std::unique_ptr<model::Nic>, 2> nics;
  for (size_t i = 0; i < 2; ++i) {
    if (opt.nic_models) {
      nics[i] = config::make_host_nic(sc.hosts.at(i));
    } else {
      nics[i] = std::make_unique<WireOnlyNic>(WireOnlyNic::Params{opt.txqueuelen});
    }
    result.nics[i] = nics[i]->describe();
  }
  return nics;
}

// Step 2: the namespaces of this emulator, after removing those of dead ones; the crash
// handler must know them before they exist.
std::vector<std::string> namespace_names(const SessionOptions& opt) {
  const pid_t self = ::getpid();
  std::vector<std::string> names = {netns_name(opt.prefix, self, "a"),
                                    netns_name(opt.prefix, self, "b")};
  if (opt.io == FrameIo::kPacket) {
    names.push_back(netns_name(opt.prefix, self, "sw"));
  }
  return names;
}

// Step 3: one frame port per host on the topology's links.
std::array<std::unique_ptr<FramePort>, 2> open_ports(Topology& topo, const SessionOptions& opt,
                                                     FramePool& pool) {
  std::array<std::unique_ptr<FramePort>, 2> ports;
  for (size_t i = 0; i < 2; ++i) {
    HostEnd& h = topo.host(i);
    if (opt.io == FrameIo::kPacket) {
      ports[i] = std::make_unique<PacketPort>(topo.switch_netns_fd(), h.port_ifname, pool);
    } else {
      ports[i] = std::make_unique<TapPort>(std::move(h.tap_fd), h.ifname, pool);
    }
  }
  return ports;
}

// The session's processes: spawned into the hosts' namespaces with the NICSIM_* environment.
class NetnsProcesses : public SessionProcesses {
 public:
  NetnsProcesses(const Topology& topo, const config::Scenario& sc, const SessionOptions& opt)
      : topo_(topo), opt_(opt) {
    host_names_[0] = sc.hosts.size() > 0 ? sc.hosts[0].name : "a";
    host_names_[1] = sc.hosts.size() > 1 ? sc.hosts[1].name : "b";
    server_netns_inode_ =
        netns_inode(std::string(kNetnsDir) + "/" + topo.host(1).netns).value_or(0);
  }
  pid_t start_command() override { return spawn_in_netns(spec_for(0, opt_.command)); }
  pid_t start_server() override { return spawn_in_netns(spec_for(1, opt_.server)); }
  void signal(pid_t pid, int sig) override { ::kill(pid, sig); }
  bool server_listening(pid_t server) override {
    return netns_has_listener(server, server_netns_inode_);
  }

 private:
  ChildSpec spec_for(size_t i, const std::vector<std::string>& argv) const {
    const HostEnd& h = topo_.host(i);
    const HostEnd& peer = topo_.host(1 - i);
    ChildSpec spec;
    spec.argv = argv;
    spec.netns_fd = h.netns_fd.get();
    spec.env = {{"NICSIM_PEER", peer.addr_string()},
                {"NICSIM_LOCAL", h.addr_string()},
                {"NICSIM_HOST", host_names_[i]},
                {"NICSIM_NETNS", h.netns}};
    return spec;
  }

  const Topology& topo_;
  const SessionOptions& opt_;
  std::string host_names_[2];
  uint64_t server_netns_inode_ = 0;
};

// Reaps every child that exited, telling the control.
void reap_exited(SessionControl& control) {
  for (;;) {
    int st = 0;
    const pid_t p = ::waitpid(-1, &st, WNOHANG);
    if (p <= 0) {
      return;
    }
    control.child_exited(p, shell_status(st));
  }
}

// After the loop: waits for the children left (SIGKILLed ones exit at once).
void reap_remaining(SessionControl& control) {
  for (const pid_t pid : {control.command_pid(), control.server_pid()}) {
    const bool running =
        pid == control.command_pid() ? control.command_running() : control.server_running();
    int st = 0;
    if (running && ::waitpid(pid, &st, 0) == pid) {
      control.child_exited(pid, shell_status(st));
    }
  }
}

// Step 4: the real-time loop. Each iteration waits for a frame, a signal, the done fd or the
// next deadline (data path or control), moves frames through the models, and runs the control
// step. Returns the duration of each busy iteration's work.
report::LatencyRecorder run_loop(EventLoop& loop, const RealClock& clock, Datapath& datapath,
                                 SessionControl& control, int sigfd) {
  report::LatencyRecorder work;
  while (!control.done()) {
    std::optional<Time> deadline = datapath.next_event();
    if (const std::optional<Time> c = control.next_deadline(); c && (!deadline || *c < *deadline)) {
      deadline = c;
    }
    const std::span<const uint32_t> ready = loop.wait(deadline);
    Time now = clock.now();
    const Time woke = now;
    std::array<bool, 2> readable{false, false};
    for (uint32_t token : ready) {
      if (token < 2) {
        readable[token] = true;
      } else if (token == kDoneToken) {
        control.work_done();
      } else {
        signalfd_siginfo si{};
        while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
          const int sig = static_cast<int>(si.ssi_signo);
          if (sig == SIGCHLD) {
            reap_exited(control);
          } else {
            control.interrupted(sig, now);
          }
        }
      }
    }
    if (readable[0] || readable[1]) {
      datapath.receive(readable, now, clock.realtime_minus_time_ns());
    }
    now = clock.now();
    datapath.service(now);
    if (!ready.empty()) {
      work.add(clock.now() - woke);
    }
    control.tick(now);
  }
  return work;
}

// Step 5: the counters of everything that ran.
void collect_stats(const Datapath& datapath, const std::array<std::unique_ptr<FramePort>, 2>& ports,
                   const EventLoop& loop, const report::LatencyRecorder& work,
                   SessionResult& result) {
  for (size_t d = 0; d < 2; ++d) {
    result.directions[d] = datapath.stats(d);
    result.wires[d] = datapath.wire(d).stats();
    result.ports[d] = ports[d]->stats();
    result.nic_counters[d] = datapath.nic(d).counters();
    result.nic_queues[d] = datapath.nic(d).queue_sample();
    result.cpus[d] = datapath.cpu(d).stats();
  }
  result.timer_error = loop.timer_error().stats();
  result.release_lateness = datapath.release_lateness().stats();
  result.loop = loop.stats();
  result.work_time = work.stats();
}

}  // namespace

SessionResult run_session(const config::Run& run, const SessionOptions& opt) {
  const config::Scenario& sc = run.scenario;
  auto notice = [&](const std::string& line) {
    if (opt.notice) {
      opt.notice(line);
    }
  };
  SessionResult result;
  BlockedSignals blocked;

  std::array<std::unique_ptr<model::Nic>, 2> nics = build_nics(sc, opt, result);
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
  CrashGuard crash_guard(namespace_names(opt));
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
  std::array<std::unique_ptr<FramePort>, 2> ports = open_ports(*topo, opt, pool);
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

  SessionControlParams control_params;
  control_params.command = !opt.command.empty();
  control_params.server = !opt.server.empty();
  control_params.run_for = opt.duration.value_or(sc.duration);
  control_params.server_wait = opt.server_wait;
  control_params.kill_grace = opt.kill_grace;
  control_params.tick = kControlTick;
  NetnsProcesses processes(*topo, sc, opt);
  SessionControl control(control_params, processes, notice);

  rusage usage_start{};
  ::getrusage(RUSAGE_SELF, &usage_start);
  const Time start = clock.now();
  control.start(start);
  const report::LatencyRecorder work = run_loop(loop, clock, *datapath, control, sigfd.get());
  result.elapsed_s = (clock.now() - start).to_seconds();
  rusage usage_stop{};
  ::getrusage(RUSAGE_SELF, &usage_stop);
  result.cpu_user_s = seconds(usage_stop.ru_utime) - seconds(usage_start.ru_utime);
  result.cpu_sys_s = seconds(usage_stop.ru_stime) - seconds(usage_start.ru_stime);

  reap_remaining(control);
  result.signal = control.signal();
  result.exit_status = control.exit_status();
  collect_stats(*datapath, ports, loop, work, result);

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

#include "nicsim/emu/session.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <memory>

#include "nicsim/config/host_nic.h"
#include "nicsim/config/network.h"
#include "nicsim/emu/address_plan.h"
#include "nicsim/emu/busy_poll_port.h"
#include "nicsim/emu/crash_cleanup.h"
#include "nicsim/emu/frame_pool.h"
#include "nicsim/emu/frame_recorder.h"
#include "nicsim/emu/packet_port.h"
#include "nicsim/emu/pcap_writer.h"
#include "nicsim/emu/process.h"
#include "nicsim/emu/real_clock.h"
#include "nicsim/emu/session_control.h"
#include "nicsim/emu/tap_port.h"
#include "nicsim/emu/wire_only_nic.h"
#include "nicsim/model/platform_nic.h"

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
  for (size_t i = 0; i < s.traffic.replay.size(); ++i) {
    note("traffic.replay[" + std::to_string(i) + "]",
         "a recording is replayed by nicsim run only (the emulator's hosts make their own frames)");
  }
  return out;
}

namespace {

// Port tokens follow the signal and done tokens: host h's port is kFirstPortToken + h.
constexpr uint32_t kFirstPortToken = 4;
// How often the loop looks for a host's frames while its emulated NIC has room (back
// pressure): the wake-ups cost CPU (docs/emu.md, "Back pressure"); on this VM a wake-up comes
// 30-100 us late anyway.
constexpr Duration kPullInterval = Duration::us(25);

// Environment variable suffix for a host name: [A-Za-z0-9_] kept, anything else '_'.
std::string env_name(const std::string& host) {
  std::string out = host;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!ok) {
      c = '_';
    }
  }
  return out;
}

// The scenario's network as the emulator builds it: addresses, layout, the models (NICs,
// routers, wires). Built first, so a bad parameter fails before anything exists.
struct EmulatedNetwork {
  config::Network net;
  AddressPlan addresses;
  DatapathLayout layout;
  std::vector<std::unique_ptr<model::Nic>> host_nics;
  std::vector<std::unique_ptr<model::Router>> routers;
  std::vector<std::array<model::Wire::Params, 2>> wires;
};

// Step 1: the network's models and their descriptions. The hosts' NICs are the scenario's
// (preset + overrides, qdisc, CPU costs) or WireOnlyNic FIFOs (--nic fifo); routers always use
// their models (config::make_router, as the simulator). Wire seeds as the simulator's: direction d
// = link * 2 + side uses seed * 2 * links + d (the two-host form: seed * 2 + d).
EmulatedNetwork build_models(const config::Scenario& sc, const SessionOptions& opt,
                             SessionResult& result) {
  EmulatedNetwork e{config::network_of(sc), {}, {}, {}, {}, {}};
  const bool two_host = sc.links.empty();
  e.addresses = address_plan(e.net, two_host);
  e.layout = DatapathLayout::of(e.net, e.addresses);
  for (size_t h = 0; h < e.net.host_count(); ++h) {
    if (opt.nic_models) {
      e.host_nics.push_back(config::make_host_nic(sc.hosts.at(h)));
    } else {
      e.host_nics.push_back(std::make_unique<WireOnlyNic>(WireOnlyNic::Params{opt.txqueuelen}));
    }
  }
  for (size_t n = e.net.host_count(); n < e.net.nodes().size(); ++n) {
    e.routers.push_back(config::make_router(e.net, static_cast<int>(n)));
  }
  const uint64_t links = e.net.links().size();
  for (size_t l = 0; l < links; ++l) {
    const config::Network::Link& link = e.net.links()[l];
    e.wires.push_back({link.wire[0]->params(sc.seed * 2 * links + l * 2),
                       link.wire[1]->params(sc.seed * 2 * links + l * 2 + 1)});
  }
  auto label = [&](size_t iface) {
    const size_t node = static_cast<size_t>(e.net.interfaces()[iface].node);
    return two_host ? e.addresses.hosts[node].role : e.net.interface_label(static_cast<int>(iface));
  };
  for (size_t i = 0; i < e.net.interfaces().size(); ++i) {
    result.interfaces.push_back(label(i));
  }
  for (size_t l = 0; l < links; ++l) {
    for (int side = 0; side < 2; ++side) {
      const config::Network::Link& link = e.net.links()[l];
      result.direction_labels.push_back(label(static_cast<size_t>(link.iface[side])) + "->" +
                                        label(static_cast<size_t>(link.iface[1 - side])));
    }
  }
  for (size_t h = 0; h < e.net.host_count(); ++h) {
    result.hosts.push_back(label(e.layout.host_interface[h]));
  }
  return e;
}

// Step 2: the namespaces of this emulator, after removing those of dead ones; the crash
// handler must know them before they exist.
std::vector<std::string> namespace_names(const SessionOptions& opt, const AddressPlan& plan) {
  const pid_t self = ::getpid();
  std::vector<std::string> names;
  for (const HostAddress& h : plan.hosts) {
    names.push_back(netns_name(opt.prefix, self, h.role));
  }
  if (opt.io == FrameIo::kPacket) {
    names.push_back(netns_name(opt.prefix, self, "sw"));
  }
  return names;
}

// Whether to pull frames with back pressure (BusyPollPort): veth + AF_PACKET only.
bool wants_backpressure(const SessionOptions& opt) {
  return opt.io == FrameIo::kPacket && opt.backpressure;
}

// A BusyPollPort on host h's veth, or nullptr (with a notice) when this kernel cannot.
std::unique_ptr<FramePort> open_pull_port(Topology& topo, HostEnd& h, FramePool& pool,
                                          const std::function<void(const std::string&)>& notice) {
  try {
    return std::make_unique<BusyPollPort>(topo.switch_netns_fd(), h.port_ifname, h.netns_fd.get(),
                                          h.ifname, pool);
  } catch (const SysError& e) {
    notice(std::string("back pressure unavailable, reading every frame at once: ") + e.what());
    return nullptr;
  }
}

// Step 3: one frame port per host on the topology's links.
std::vector<std::unique_ptr<FramePort>> open_ports(
    Topology& topo, const SessionOptions& opt, FramePool& pool,
    const std::function<void(const std::string&)>& notice) {
  std::vector<std::unique_ptr<FramePort>> ports;
  const bool pull = wants_backpressure(opt);
  for (size_t i = 0; i < topo.host_count(); ++i) {
    HostEnd& h = topo.host(i);
    std::unique_ptr<FramePort> pulled = pull ? open_pull_port(topo, h, pool, notice) : nullptr;
    if (pulled) {
      ports.push_back(std::move(pulled));
    } else if (opt.io == FrameIo::kPacket) {
      ports.push_back(std::make_unique<PacketPort>(topo.switch_netns_fd(), h.port_ifname, pool));
    } else {
      const TapPort::Params params{
          .vnet = opt.io == FrameIo::kTapGso, .gro = true, .netns_fd = h.netns_fd.get()};
      ports.push_back(std::make_unique<TapPort>(std::move(h.tap_fd), h.ifname, pool, params));
    }
  }
  return ports;
}

// The session's processes: spawned into the hosts' namespaces with the NICSIM_* environment.
// The command runs in the first host, the server in the second.
class NetnsProcesses : public SessionProcesses {
 public:
  NetnsProcesses(const Topology& topo, const config::Scenario& sc, const SessionOptions& opt)
      : topo_(topo), opt_(opt) {
    for (size_t i = 0; i < topo.host_count(); ++i) {
      host_names_.push_back(i < sc.hosts.size() ? sc.hosts[i].name : topo.host(i).role);
    }
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
    for (size_t k = 0; k < topo_.host_count(); ++k) {
      spec.env.emplace_back("NICSIM_HOST_" + env_name(host_names_[k]), topo_.host(k).addr_string());
    }
    return spec;
  }

  const Topology& topo_;
  const SessionOptions& opt_;
  std::vector<std::string> host_names_;
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
  std::vector<bool> readable(datapath.host_count(), false);
  while (!control.done()) {
    std::optional<Time> deadline = datapath.next_event();
    if (datapath.wants_pull()) {  // a host's NIC has room: look for its frames soon
      const Time pull_at = clock.now() + kPullInterval;
      deadline = deadline ? min(*deadline, pull_at) : pull_at;
    }
    if (const std::optional<Time> c = control.next_deadline(); c && (!deadline || *c < *deadline)) {
      deadline = c;
    }
    const std::span<const uint32_t> ready = loop.wait(deadline);
    Time now = clock.now();
    const Time woke = now;
    bool any_readable = false;
    for (uint32_t token : ready) {
      if (token >= kFirstPortToken) {
        readable[token - kFirstPortToken] = true;
        any_readable = true;
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
    if (any_readable) {
      datapath.receive(readable, now, clock.realtime_minus_time_ns());
      readable.assign(readable.size(), false);
    }
    now = clock.now();
    datapath.pull(now);
    datapath.service(now);
    if (!ready.empty()) {
      work.add(clock.now() - woke);
    }
    control.tick(now);
  }
  return work;
}

// Step 5: the counters of everything that ran.
void collect_stats(const Datapath& datapath, const std::vector<std::unique_ptr<FramePort>>& ports,
                   const EventLoop& loop, const report::LatencyRecorder& work,
                   SessionResult& result) {
  for (size_t d = 0; d < datapath.direction_count(); ++d) {
    result.directions.push_back(datapath.stats(d));
    result.wires.push_back(datapath.wire(d).stats());
  }
  for (size_t i = 0; i < datapath.layout().interfaces.size(); ++i) {
    result.nics.push_back(datapath.nic(i).describe());
    result.nic_counters.push_back(datapath.nic(i).counters());
    result.nic_queues.push_back(datapath.nic(i).queue_sample());
    result.cpus.push_back(datapath.cpu(i).stats());
    const auto* platform = dynamic_cast<const model::PlatformNic*>(&datapath.nic(i));
    result.nic_gro.push_back(platform != nullptr && platform->params().gro
                                 ? std::optional<algo::Gro::Stats>(platform->gro().stats())
                                 : std::nullopt);
  }
  for (const auto& p : ports) {
    p->update_kernel_counters();
    result.ports.push_back(p->stats());
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

  EmulatedNetwork network = build_models(sc, opt, result);
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
  CrashGuard crash_guard(namespace_names(opt, network.addresses));
  TopologyOptions topo_opt;
  topo_opt.io = opt.io;
  topo_opt.prefix = opt.prefix;
  topo_opt.host_qdisc = wants_backpressure(opt);
  topo_opt.hosts = network.addresses.hosts;
  std::unique_ptr<Topology> topo = Topology::create(topo_opt);
  result.namespaces = topo->namespaces();

  UniqueFd sigfd(::signalfd(-1, &blocked.set(), SFD_NONBLOCK | SFD_CLOEXEC));
  if (!sigfd.valid()) {
    throw_errno("signalfd");
  }

  // Pool first: it must outlive every frame held by the ports and models below.
  // tap-gso: every buffer holds a 64 KB super-frame (fewer preallocated: 64 x 64 KB).
  FramePool pool =
      opt.io == FrameIo::kTapGso ? FramePool(TapPort::kSuperFrameBytes, 64) : FramePool();
  std::vector<std::unique_ptr<FramePort>> ports = open_ports(*topo, opt, pool, notice);
  result.io = ports[0]->describe();
  std::vector<FramePort*> port_ptrs;
  for (const auto& p : ports) {
    port_ptrs.push_back(p.get());
  }
  auto datapath = std::make_unique<Datapath>(std::move(network.layout), std::move(port_ptrs),
                                             std::move(network.host_nics),
                                             std::move(network.routers), std::move(network.wires));
  if (pcap) {
    datapath->set_wire_tap(pcap.get());
  }
  std::unique_ptr<FrameRecorder> recorder;
  if (!opt.record.empty()) {
    std::vector<std::string> host_names;
    for (const config::HostConfig& h : sc.hosts) {
      host_names.push_back(h.name);
    }
    recorder =
        std::make_unique<FrameRecorder>(opt.record, host_names, clock.realtime_minus_time_ns());
    datapath->set_input_tap(recorder.get());
  }
  datapath->set_queue_sampler(opt.queue_sample, [&result, &datapath](Time t) {
    for (size_t i = 0; i < datapath->layout().interfaces.size(); ++i) {
      config::append_queue_sample(result.queues[result.interfaces[i]], t,
                                  datapath->nic(i).queue_sample());
    }
  });
  if (opt.on_ready) {
    opt.on_ready(*topo);
  }

  EventLoop loop(clock, opt.loop);
  if (!loop.rt_error().empty()) {
    notice("real-time scheduling unavailable (" + loop.rt_error() +
           "); timer error will be larger on a busy machine");
  }
  for (size_t h = 0; h < ports.size(); ++h) {
    if (!ports[h]->pulls()) {  // a pull port is polled (run_loop), never waited for
      loop.add(ports[h]->fd(), kFirstPortToken + static_cast<uint32_t>(h));
    }
  }
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
  for (size_t r = 0; r < datapath->router_count(); ++r) {
    result.routers.push_back(SessionResult::RouterResult{
        network.net.nodes()[network.net.host_count() + r].name, datapath->router(r).stats(),
        datapath->router(r).cpu().stats()});
  }

  datapath.reset();
  if (recorder) {
    result.record_frames = recorder->frames();
    result.record_error = recorder->close();
  }
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

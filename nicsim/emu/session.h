#pragma once
// Session — one `nicsim emulate` run: builds the topology, the frame ports and the data path
// for a scenario run, starts the commands inside the hosts, drives the real-time loop until
// the command exits (or the duration passes, or a signal arrives), and removes everything.
//
// Lifecycle and cleanup (docs/emu.md):
//   1. SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGCHLD are blocked and read through a signalfd in
//      the loop, so a signal at any moment becomes an orderly stop, never a leak.
//   2. Leftovers of dead emulators (any prefix-pid-role namespace whose creator is gone) are
//      removed first.
//   3. The crash handler is armed with this run's namespace names, then the topology is built.
//   4. The loop runs. On SIGINT/SIGTERM/SIGHUP/SIGQUIT the signal is forwarded to the commands;
//      after `kill_grace` survivors get SIGKILL.
//   5. Ports and models are destroyed, the namespaces removed (processes left inside are
//      killed), the crash handler disarmed, the signal mask restored.
//
// Exit status: the command's (shell convention: 128 + signal if it was killed); without a
// command 0; when the emulator itself was interrupted and the command did not exit on its
// own, 128 + the signal.

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nicsim/algo/gro.h"
#include "nicsim/config/scenario.h"
#include "nicsim/core/time.h"
#include "nicsim/emu/datapath.h"
#include "nicsim/emu/event_loop.h"
#include "nicsim/emu/frame_port.h"
#include "nicsim/emu/netns.h"
#include "nicsim/emu/topology.h"
#include "nicsim/model/router.h"
#include "nicsim/model/wire.h"
#include "nicsim/report/results.h"

namespace nicsim::emu {

struct SessionOptions {
  FrameIo io = FrameIo::kPacket;
  // With io kPacket: pull frames from the hosts only when their emulated NIC accepts them
  // (BusyPollPort: the hosts' kernels keep the rest in their own qdisc, TSQ sees it); falls
  // back to PacketPort, with a notice, where the kernel cannot. `nicsim emulate --io pull`.
  bool backpressure = false;
  LoopOptions loop;
  // Runs in the first host (host a of the two-host form; the first [hosts.*] of a network);
  // empty: none. Environment: NICSIM_PEER (the second host's address), NICSIM_LOCAL,
  // NICSIM_HOST, NICSIM_NETNS, and NICSIM_HOST_<name> (every host's address; the name with
  // characters other than [A-Za-z0-9_] as '_').
  std::vector<std::string> command;
  std::vector<std::string>
      server;  // runs in the second host, NICSIM_PEER = the first's; empty: none
  // Without a command: how long to run (default: the scenario's duration).
  std::optional<Duration> duration;
  Duration server_wait = Duration::s(5);  // how long to wait for the server to listen
  Duration kill_grace = Duration::s(2);   // SIGTERM -> SIGKILL
  std::string prefix = kDefaultPrefix;
  // true: each host's NIC model from the scenario (preset + overrides, qdisc, CPU costs);
  // false: WireOnlyNic, a txqueuelen-frame drop-tail FIFO ahead of the wire (diagnostics:
  // isolates what the models cost and change).
  bool nic_models = true;
  int64_t txqueuelen = 1000;  // WireOnlyNic FIFO (frames)
  // Non-empty: write every frame entering the emulated wire (both directions) to this pcap.
  std::string pcap;
  // Non-empty: record every frame the hosts hand to their emulated NICs (input time, host,
  // length, headers, classification) to this pcapng file, for [[traffic.replay]] in nicsim run.
  std::string record;
  // The NICs' queue series (SessionResult::queues) are sampled this often in model time, as
  // the simulator's SimOptions::queue_sample.
  Duration queue_sample = Duration::ms(10);
  // One-line notices (removed leftovers, settings not honoured yet, ...). May be empty.
  std::function<void(const std::string&)> notice;
  // Called once the topology is up, before any command starts (tests, verbose output, the
  // scenario's own traffic: nicsim/live/netns_traffic.h).
  std::function<void(const Topology&)> on_ready;
  // Optional fd (an eventfd) that becomes readable when the run's work is done, e.g. the
  // scenario's traffic finished: the run then stops like when a command exits.
  int done_fd = -1;
};

struct SessionResult {
  struct RouterResult {
    std::string name;
    model::Router::Stats stats;
    model::Cpu::Stats cpu;
  };
  int exit_status = 0;
  int signal = 0;        // the signal that stopped the emulator, 0 if none
  double elapsed_s = 0;  // from the first loop iteration to the stop
  std::string io;        // frame I/O description
  // Per interface (two-host form: host a, host b): its label ("a", "b"; "r.lan" in a
  // network), NIC model description, counters, queues at the end of the run, and the emulated
  // CPU its NIC runs on (its host's or router's).
  std::vector<std::string> interfaces;
  std::vector<std::string> nics;
  std::vector<model::NicCounters> nic_counters;
  std::vector<model::NicQueueSample> nic_queues;
  std::vector<model::Cpu::Stats> cpus;
  // Per interface: its NIC model's GRO counters when it has `gro` on (a platform NIC), else
  // nullopt.
  std::vector<std::optional<algo::Gro::Stats>> nic_gro;
  // Per wire direction (link * 2 + side; two-host form: a->b, b->a): "a->b", counters.
  std::vector<std::string> direction_labels;
  std::vector<DirectionStats> directions;
  std::vector<model::Wire::Stats> wires;
  std::vector<RouterResult> routers;
  uint64_t pcap_frames = 0;
  std::string pcap_error;      // "" or why the pcap file is incomplete
  uint64_t record_frames = 0;  // --record: frames written
  std::string record_error;    // "" or why the recording is incomplete
  // Queue series per interface label (docs/results.md "queues"), sampled every
  // SessionOptions::queue_sample of model time from time 0 to the end of the run.
  std::map<std::string, report::QueueSeries> queues;
  std::vector<std::string> hosts;         // per host: its label (as its interface's)
  std::vector<PortStats> ports;           // per host
  report::LatencyStats timer_error;       // wake-up minus deadline (ms units, as LatencyStats)
  report::LatencyStats release_lateness;  // write time minus scheduled release (ms units)
  // Duration of each loop iteration's work (reads, models, writes — including the kernel
  // work of the hosts' stacks that runs inside the writes), for iterations that did any.
  report::LatencyStats work_time;
  LoopStats loop;
  double cpu_user_s = 0;  // the emulator's own CPU time during the run (not its commands')
  double cpu_sys_s = 0;   // includes the kernel work done in its system calls
  std::vector<std::string> namespaces;  // created (and removed)
  std::vector<std::string> removed_leftovers;
};

// The scenario settings this back-end does not honour yet, one line each with the location
// where they were written (e.g. "scenario.toml:9:1: hosts.a.nic: NIC model not emulated yet").
std::vector<std::string> unsupported_settings(const config::Scenario& s);

// Runs one scenario run. Throws SysError / InvalidParams when the topology or the models cannot
// be set up (after removing whatever was created). Needs the privileges privilege_problem()
// checks.
SessionResult run_session(const config::Run& run, const SessionOptions& options);

}  // namespace nicsim::emu

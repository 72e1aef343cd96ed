#pragma once
// SessionControl — the process side of one emulation (session.h), as a state machine a test
// can drive with fake processes and a fake clock: start the server in host b and wait until
// it listens (or --server-wait passes), start the command in host a (or, without one, run for
// the duration or until the work is done), stop on the command's exit or a signal (forwarded
// to the children), SIGKILL what survives the grace period, and derive the exit status.
//
// Exit status (shell convention): the command's; without a command 0; when the emulator was
// interrupted and the command did not exit on its own, 128 + the signal; 1 when the server
// exited before it listened (the command never started).

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "nicsim/core/time.h"

namespace nicsim::emu {

// What the control does to processes: the session spawns into the namespaces; tests fake it.
class SessionProcesses {
 public:
  virtual ~SessionProcesses() = default;
  virtual pid_t start_command() = 0;
  virtual pid_t start_server() = 0;
  virtual void signal(pid_t pid, int sig) = 0;
  virtual bool server_listening(pid_t server) = 0;
};

struct SessionControlParams {
  bool command = false;  // a command runs in host a
  bool server = false;   // a server runs in host b first
  Duration run_for;      // without a command: how long the emulation runs
  Duration server_wait = Duration::s(5);
  Duration kill_grace = Duration::s(2);
  Duration tick = Duration::ms(5);  // how often server readiness and stopping are checked
};

class SessionControl {
 public:
  using Notice = std::function<void(const std::string&)>;
  SessionControl(const SessionControlParams& params, SessionProcesses& processes, Notice notice);

  // Starts the server (then waits for it) or the command.
  void start(Time now);
  // A child was reaped with this shell status (0..255, 128 + signal when killed).
  void child_exited(pid_t pid, int status);
  // SIGINT/SIGTERM/SIGHUP/SIGQUIT reached the emulator: forwarded to the children, then stop.
  void interrupted(int sig, Time now);
  // The run's work finished (e.g. the scenario's traffic): the next tick() stops like when a
  // command exits.
  void work_done() { work_done_ = true; }
  // The control step: server readiness, command exit, duration, kill grace.
  void tick(Time now);

  // When tick() must run next at the latest (none: only events move it on).
  std::optional<Time> next_deadline() const;
  bool done() const { return phase_ == Phase::kDone; }
  // The children still running (the session reaps them after done()).
  bool command_running() const { return command_.running; }
  bool server_running() const { return server_.running; }
  pid_t command_pid() const { return command_.pid; }
  pid_t server_pid() const { return server_.pid; }
  int signal() const { return signal_; }
  // Valid once done() and every child is reaped.
  int exit_status() const;

 private:
  enum class Phase { kWaitServer, kRunning, kStopping, kDone };
  struct Child {
    pid_t pid = -1;
    bool running = false;
    int status = 0;
  };
  void start_command(Time now);
  void begin_stop(int forward_sig, Time now);
  void signal_children(int sig);

  SessionControlParams params_;
  SessionProcesses& processes_;
  Notice notice_;
  Phase phase_ = Phase::kRunning;
  Child command_;
  Child server_;
  bool work_done_ = false;
  bool server_failed_ = false;
  int signal_ = 0;
  std::optional<Time> end_at_;
  std::optional<Time> server_deadline_;
  std::optional<Time> kill_at_;
  std::optional<Time> next_tick_;
};

}  // namespace nicsim::emu

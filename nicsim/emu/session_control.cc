#include "nicsim/emu/session_control.h"

#include <signal.h>

namespace nicsim::emu {

SessionControl::SessionControl(const SessionControlParams& params, SessionProcesses& processes,
                               Notice notice)
    : params_(params), processes_(processes), notice_(std::move(notice)) {}

void SessionControl::start(Time now) {
  if (params_.server) {
    server_.pid = processes_.start_server();
    server_.running = true;
    server_deadline_ = now + params_.server_wait;
    next_tick_ = now;
    phase_ = Phase::kWaitServer;
  } else {
    start_command(now);
  }
}

void SessionControl::start_command(Time now) {
  if (params_.command) {
    command_.pid = processes_.start_command();
    command_.running = true;
  } else {
    end_at_ = now + params_.run_for;
  }
  phase_ = Phase::kRunning;
}

void SessionControl::child_exited(pid_t pid, int status) {
  for (Child* c : {&command_, &server_}) {
    if (c->running && c->pid == pid) {
      c->running = false;
      c->status = status;
    }
  }
}

void SessionControl::interrupted(int sig, Time now) {
  if (signal_ == 0) {
    signal_ = sig;
    begin_stop(sig, now);
  }
}

void SessionControl::signal_children(int sig) {
  for (Child* c : {&command_, &server_}) {
    if (c->running) {
      processes_.signal(c->pid, sig);
    }
  }
}

void SessionControl::begin_stop(int forward_sig, Time now) {
  if (phase_ == Phase::kStopping || phase_ == Phase::kDone) {
    return;
  }
  phase_ = Phase::kStopping;
  if (forward_sig != 0) {
    signal_children(forward_sig);
  }
  kill_at_ = now + params_.kill_grace;
  next_tick_ = now;
}

void SessionControl::tick(Time now) {
  if (phase_ == Phase::kWaitServer && next_tick_ && now >= *next_tick_) {
    next_tick_ = now + params_.tick;
    if (!server_.running) {
      notice_("the server exited (status " + std::to_string(server_.status) +
              ") before it listened; not starting the command");
      server_failed_ = true;
      begin_stop(0, now);
    } else if (processes_.server_listening(server_.pid)) {
      start_command(now);
    } else if (now >= *server_deadline_) {
      notice_("the server is not listening after " +
              std::to_string(params_.server_wait.count_ns() / 1'000'000) +
              " ms; starting the command anyway");
      start_command(now);
    }
  }
  if (phase_ == Phase::kRunning) {
    const bool command_exited = command_.pid > 0 && !command_.running;
    if (command_exited || (end_at_ && now >= *end_at_) || work_done_) {
      begin_stop(server_.running ? SIGTERM : 0, now);
    }
  }
  if (phase_ == Phase::kStopping) {
    if (!command_.running && !server_.running) {
      phase_ = Phase::kDone;
    } else if (kill_at_ && now >= *kill_at_) {
      signal_children(SIGKILL);
      phase_ = Phase::kDone;
    } else {
      next_tick_ = now + params_.tick;
    }
  }
}

std::optional<Time> SessionControl::next_deadline() const {
  std::optional<Time> t;
  auto earliest = [&](std::optional<Time> c) {
    if (c && (!t || *c < *t)) {
      t = c;
    }
  };
  if (phase_ == Phase::kWaitServer || phase_ == Phase::kStopping) {
    earliest(next_tick_);
  }
  if (phase_ == Phase::kRunning) {
    earliest(end_at_);
  }
  earliest(kill_at_);
  return t;
}

int SessionControl::exit_status() const {
  if (signal_ != 0) {
    // Interrupted: the command's own status if it finished, else 128 + the signal.
    const bool command_exited_cleanly =
        command_.pid > 0 && !command_.running && command_.status >= 0 && command_.status < 128;
    return command_exited_cleanly ? command_.status : 128 + signal_;
  }
  if (command_.pid > 0) {
    return command_.status;
  }
  return server_failed_ ? 1 : 0;
}

}  // namespace nicsim::emu

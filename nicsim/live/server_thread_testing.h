#pragma once
// Test helpers (live_test only): a short traffic plan, and a nicsim server in a thread, on an
// ephemeral port of `listen` (default 127.0.0.1), collecting its log lines; stops (and joins) on
// destruction.

#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nicsim/live/server.h"
#include "nicsim/live/socket_util.h"
#include "nicsim/live/traffic.h"

namespace nicsim::live {

// 127.0.0.1:port.
inline sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// An upload (a -> b) and a download (b -> a), both from 0 to `flows_stop` with no DSCP and the
// default congestion control, and a 64-byte UDP probe "udp" every `probe_interval` until
// `probe_stop`; intervals of `interval` over `duration`.
inline TrafficPlan up_down_probe_plan(Duration duration, Duration interval, Duration flows_stop,
                                      Duration probe_interval, Duration probe_stop) {
  TrafficPlan plan;
  plan.duration = duration;
  plan.interval = interval;
  plan.flows.push_back(FlowPlan{0, 1, 0, "", Duration::zero(), flows_stop, "up"});
  plan.flows.push_back(FlowPlan{1, 0, 0, "", Duration::zero(), flows_stop, "down"});
  ProbePlan udp;
  udp.name = "udp";
  udp.interval = probe_interval;
  udp.size = 64;
  udp.stop = probe_stop;
  plan.probes.push_back(udp);
  return plan;
}

class ServerThread {
 public:
  // `listen_ip`: "127.0.0.1", or "0.0.0.0" to be reached from 127.0.0.2 too.
  explicit ServerThread(ServerParams p, const char* listen_ip = "127.0.0.1")
      : stop_(::eventfd(0, EFD_CLOEXEC)) {
    p.listen = sockaddr_in{};
    p.listen.sin_family = AF_INET;
    ::inet_pton(AF_INET, listen_ip, &p.listen.sin_addr);
    server_ = std::make_unique<Server>(p, [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back(line);
    });
    thread_ = std::thread([this] { server_->run(stop_.get()); });
  }
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;
  ~ServerThread() { stop(); }
  void stop() {
    if (thread_.joinable()) {
      const uint64_t one = 1;
      [[maybe_unused]] ssize_t w = ::write(stop_.get(), &one, sizeof one);
      thread_.join();
    }
  }
  uint16_t port() const { return server_->port(); }
  ServerStats stats() const { return server_->stats(); }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }
  // Whether a log line so far contains `part`.
  bool logged(const std::string& part) {
    for (const auto& l : log()) {
      if (l.find(part) != std::string::npos) return true;
    }
    return false;
  }

 private:
  Fd stop_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> log_;
};

}  // namespace nicsim::live

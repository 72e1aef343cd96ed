#include "nicsim/live/netns_traffic.h"

#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>

#include <future>
#include <mutex>

#include "nicsim/live/server.h"

namespace nicsim::live {
namespace {

void signal_fd(int fd) {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = ::write(fd, &one, sizeof one);
}

// The emulator's loop may run SCHED_FIFO; traffic threads use the normal scheduler.
void normal_scheduling() {
  sched_param p{};
  p.sched_priority = 0;
  ::pthread_setschedparam(::pthread_self(), SCHED_OTHER, &p);
}

std::mutex g_log_mutex;

}  // namespace

NetnsTraffic::NetnsTraffic(TrafficPlan plan, report::RunInfo info, Log log)
    : plan_(std::move(plan)),
      info_(std::move(info)),
      log_(std::move(log)),
      done_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      stop_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!done_.valid() || !stop_.valid()) {
    throw_errno("eventfd");
  }
}

NetnsTraffic::~NetnsTraffic() { stop_threads(); }

void NetnsTraffic::start(const NetnsHosts& hosts) {
  auto log = [this](const std::string& line) {
    if (log_) {
      std::lock_guard<std::mutex> lock(g_log_mutex);
      log_(line);
    }
  };
  auto port = std::make_shared<std::promise<uint16_t>>();
  std::future<uint16_t> port_ready = port->get_future();
  server_ = std::thread([this, hosts, port, log] {
    normal_scheduling();
    try {
      enter_netns(hosts.netns_b);
      ServerParams p;
      p.listen.sin_family = AF_INET;
      p.listen.sin_addr = hosts.addr_b;
      p.listen.sin_port = 0;
      p.max_duration = plan_.duration + Duration::s(60);
      Server server(p, [log](const std::string& line) { log("server: " + line); });
      port->set_value(server.port());
      server.run(stop_.get());
    } catch (...) {
      try {
        port->set_exception(std::current_exception());
      } catch (const std::future_error&) {
        log("server: stopped by an error after it started");
      }
    }
  });
  client_ = std::thread([this, hosts, log, ready = std::move(port_ready)]() mutable {
    normal_scheduling();
    try {
      const uint16_t server_port = ready.get();
      enter_netns(hosts.netns_a);
      ClientOptions opt;
      opt.server.sin_family = AF_INET;
      opt.server.sin_addr = hosts.addr_b;
      opt.server.sin_port = htons(server_port);
      opt.shared_clock = true;
      opt.peer_netns_fd = hosts.netns_b;
      opt.local_addr = hosts.addr_a;
      opt.stop_fd = stop_.get();
      opt.log = log;
      result_ = run_traffic(plan_, info_, opt);
    } catch (...) {
      error_ = std::current_exception();
    }
    signal_fd(done_.get());
  });
}

void NetnsTraffic::stop_threads() {
  if (stop_.valid()) {
    signal_fd(stop_.get());
  }
  if (client_.joinable()) {
    client_.join();
  }
  if (server_.joinable()) {
    server_.join();
  }
}

report::Run NetnsTraffic::finish() {
  stop_threads();
  if (error_) {
    std::rethrow_exception(error_);
  }
  if (!result_) {
    throw LiveError("the traffic did not run");
  }
  return std::move(*result_);
}

}  // namespace nicsim::live

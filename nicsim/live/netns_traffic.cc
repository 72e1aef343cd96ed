#include "nicsim/live/netns_traffic.h"

#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>

#include <algorithm>
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

namespace {

// The hosts a server must run in: the higher-indexed end of every flow, UDP probe, flood and
// transfer set (ICMP is answered by the kernel). Sorted, without repeats.
std::vector<size_t> server_hosts(const TrafficPlan& plan) {
  std::vector<size_t> at;
  for (const FlowPlan& f : plan.flows) {
    at.push_back(std::max(f.from, f.to));
  }
  for (const ProbePlan& p : plan.probes) {
    if (!p.icmp) {
      at.push_back(std::max(p.from, p.to));
    }
  }
  for (const config::FloodPlan& f : plan.floods) {
    at.push_back(std::max(f.from, f.to));
  }
  for (const config::TransferSetPlan& t : plan.transfer_sets) {
    at.push_back(std::max(t.client, t.server));
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  return at;
}

}  // namespace

void NetnsTraffic::start_servers(const std::vector<size_t>& at, const NetnsHosts& hosts,
                                 bool network,
                                 std::vector<std::shared_ptr<std::promise<uint16_t>>>& ports) {
  for (const size_t h : at) {
    auto port = std::make_shared<std::promise<uint16_t>>();
    ports.push_back(port);
    const NetnsHosts::Host host = hosts.all.at(h);
    const std::string who =
        network ? "server (host " + std::to_string(h) + "): " : std::string("server: ");
    servers_.emplace_back([this, host, port, who] {
      normal_scheduling();
      try {
        enter_netns(host.netns_fd);
        ServerParams p;
        p.listen.sin_family = AF_INET;
        p.listen.sin_addr = host.addr;
        p.listen.sin_port = 0;
        p.max_duration = plan_.duration + Duration::s(60);
        // One client (this process) opens every connection: transfers may hold many at once.
        p.max_clients = 4096;
        p.max_per_peer = 4096;
        p.max_udp_rate_bps = kMaxFloodRateBps;
        Server server(p, [this, who](const std::string& line) { log_line(who + line); });
        port->set_value(server.port());
        server.run(stop_.get());
      } catch (...) {
        try {
          port->set_exception(std::current_exception());
        } catch (const std::future_error&) {
          log_line("server: stopped by an error after it started");
        }
      }
    });
  }
}

void NetnsTraffic::log_line(const std::string& line) {
  if (log_) {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    log_(line);
  }
}

void NetnsTraffic::start(const NetnsHosts& given) {
  NetnsHosts hosts = given;
  const bool network = !hosts.all.empty();
  if (!network) {
    // The two-host form: host a runs the client, host b the server.
    hosts.all = {{hosts.netns_a, hosts.addr_a}, {hosts.netns_b, hosts.addr_b}};
  }
  const std::vector<size_t> at = network ? server_hosts(plan_) : std::vector<size_t>{1};
  std::vector<std::shared_ptr<std::promise<uint16_t>>> ports;
  start_servers(at, hosts, network, ports);
  std::vector<std::future<uint16_t>> ready;
  for (auto& p : ports) {
    ready.push_back(p->get_future());
  }
  client_ = std::thread([this, hosts, at, network, ready = std::move(ready)]() mutable {
    normal_scheduling();
    try {
      std::vector<uint16_t> server_ports;
      for (auto& f : ready) {
        server_ports.push_back(f.get());
      }
      enter_netns(hosts.all.at(0).netns_fd);
      ClientOptions opt;
      opt.server.sin_family = AF_INET;
      opt.server.sin_addr = hosts.all.at(at.empty() ? 1 : at[0]).addr;
      opt.server.sin_port = htons(server_ports.empty() ? 0 : server_ports[0]);
      opt.shared_clock = true;
      opt.peer_netns_fd = hosts.all.at(1).netns_fd;
      opt.local_addr = hosts.all.at(0).addr;
      if (network) {
        for (const NetnsHosts::Host& h : hosts.all) {
          opt.hosts.push_back(ClientOptions::HostEndpoint{h.netns_fd, h.addr, 0});
        }
        for (size_t k = 0; k < at.size(); ++k) {
          opt.hosts[at[k]].server_port = server_ports[k];
        }
      }
      opt.stop_fd = stop_.get();
      opt.log = [this](const std::string& line) { log_line(line); };
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
  for (std::thread& t : servers_) {
    if (t.joinable()) {
      t.join();
    }
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

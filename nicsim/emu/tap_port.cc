#include "nicsim/emu/tap_port.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>

namespace nicsim::emu {

UniqueFd TapPort::create_tap(const std::string& ifname) {
  UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    throw_errno("open /dev/net/tun");
  }
  ifreq ifr{};
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) {
    throw_errno("TUNSETIFF " + ifname);
  }
  return fd;
}

TapPort::TapPort(UniqueFd tap_fd, const std::string& ifname, FramePool& pool)
    : fd_(std::move(tap_fd)), ifname_(ifname), pool_(pool), rx_buf_(pool.get()) {
  tx_.reserve(64);
}

size_t TapPort::receive(Packet* out, int64_t* rx_realtime_ns, size_t max) {
  size_t k = 0;
  while (k < max) {
    ++stats_.rx_calls;
    const ssize_t n = ::read(fd_.get(), rx_buf_->bytes.data(), rx_buf_->bytes.size());
    if (n <= 0) {
      break;  // EAGAIN: nothing more waiting
    }
    const auto len = static_cast<uint32_t>(n);
    rx_buf_->bytes.resize(len);
    out[k].payload = std::move(rx_buf_);
    out[k].len = len;
    rx_realtime_ns[k] = 0;  // a character device has no receive timestamps
    ++k;
    rx_buf_ = pool_.get();
    ++stats_.rx_frames;
    stats_.rx_bytes += len;
  }
  return k;
}

void TapPort::send(Packet&& frame) {
  tx_.push_back(std::move(frame));
  if (tx_.size() >= 64) {
    flush();
  }
}

void TapPort::flush() {
  for (Packet& p : tx_) {
    ++stats_.tx_calls;
    const ssize_t n = ::write(fd_.get(), p.payload->bytes.data(), p.len);
    if (n == static_cast<ssize_t>(p.len)) {
      ++stats_.tx_frames;
      stats_.tx_bytes += p.len;
    } else {
      ++stats_.tx_errors;
    }
  }
  tx_.clear();
}

std::string TapPort::describe() const { return "TAP " + ifname_ + " (read/write per frame)"; }

}  // namespace nicsim::emu

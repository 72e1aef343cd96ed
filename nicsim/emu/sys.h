#pragma once
// Small system helpers for the emulator: an owning file descriptor and errno exceptions.
// Setup code throws SysError (what failed + strerror); the packet path never throws.

#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <utility>

namespace nicsim::emu {

class SysError : public std::runtime_error {
 public:
  SysError(const std::string& what, int err);
  int err() const { return err_; }

 private:
  int err_;
};

// Throws SysError(what, errno).
[[noreturn]] void throw_errno(const std::string& what);

// Owns one file descriptor; closes it on destruction. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset(std::exchange(o.fd_, -1));
    }
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Writes `value` to a file (sysctls under /proc/sys, cgroup-style knobs). Throws SysError.
void write_file(const std::string& path, const std::string& value);
// Reads a whole (small) file; nullopt-like empty + false when it cannot be opened.
bool read_file(const std::string& path, std::string& out);

}  // namespace nicsim::emu

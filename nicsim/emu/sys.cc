#include "nicsim/emu/sys.h"

#include <fcntl.h>

#include <cstring>

namespace nicsim::emu {

SysError::SysError(const std::string& what, int err)
    : std::runtime_error(what + ": " + std::strerror(err)), err_(err) {}

void throw_errno(const std::string& what) { throw SysError(what, errno); }

void write_file(const std::string& path, const std::string& value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) {
    throw_errno("open " + path);
  }
  const ssize_t n = ::write(fd.get(), value.data(), value.size());
  if (n != static_cast<ssize_t>(value.size())) {
    throw_errno("write " + path);
  }
}

bool read_file(const std::string& path, std::string& out) {
  out.clear();
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    return false;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    if (n == 0) {
      return true;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace nicsim::emu

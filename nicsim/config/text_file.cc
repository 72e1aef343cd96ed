#include "nicsim/config/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nicsim/config/error.h"

namespace nicsim::config {
namespace {

[[noreturn]] void cannot_read(const std::string& path, const std::string& why) {
  throw ConfigError(Location{path, 0, 0}, "", "cannot read the file: " + why);
}

std::string describe_errno(int err) {
  switch (err) {
    case ENOENT:
      return "no such file";
    case EACCES:
      return "permission denied";
    case ELOOP:
      return "too many levels of symbolic links (a loop?)";
    case ENOTDIR:
      return "a part of the path is not a directory";
    case ENAMETOOLONG:
      return "the path is too long";
    default:
      return std::strerror(err);
  }
}

std::string describe_type(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "it is a directory";
  }
  if (S_ISFIFO(mode)) {
    return "it is a FIFO (named pipe), not a regular file";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "it is a device, not a regular file";
  }
  if (S_ISSOCK(mode)) {
    return "it is a socket, not a regular file";
  }
  return "not a regular file";
}

// Closes the descriptor on every path out of read_config_text.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

}  // namespace

std::string read_config_text(const std::string& path, size_t max_bytes) {
  // stat() first: opening a FIFO without a writer would block forever.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    cannot_read(path, describe_errno(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    cannot_read(path, describe_type(st.st_mode));
  }
  // O_NONBLOCK: the path could have been swapped for a FIFO since the stat().
  const Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    cannot_read(path, describe_errno(errno));
  }
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    cannot_read(path, "not a regular file");
  }
  const auto too_large = [&] {
    cannot_read(path, "larger than " + std::to_string(max_bytes) +
                          " bytes, the limit for a configuration file");
  };
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    too_large();
  }
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(file.fd, buf, sizeof buf);
    if (n == 0) {
      break;
    }
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      cannot_read(path, describe_errno(errno));
    }
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      too_large();  // the file grew while we read it
    }
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

void check_toml_depth(std::string_view text, const std::string& file, size_t max_depth) {
  // A small lexer over TOML's structure: it tracks strings (basic, literal, multi-line) and
  // comments so that dots and brackets inside them do not count, the open [ and { around the
  // current position, and the dots of the key being read (reset by '=', ',', a bracket or a
  // new line). Depth = open brackets/braces + dotted parts of the current key.
  size_t open = 0;
  size_t dots = 0;
  int64_t line = 1;
  int64_t column = 1;
  const auto too_deep = [&] {
    throw ConfigError(Location{file, line, column}, "",
                      "nested deeper than " + std::to_string(max_depth) +
                          " levels (dotted key parts, arrays and inline tables)");
  };
  for (size_t i = 0; i < text.size(); ++i, ++column) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      column = 0;
      dots = 0;
      continue;
    }
    if (c == '#') {
      while (i + 1 < text.size() && text[i + 1] != '\n') {
        ++i;
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      const bool multi = text.substr(i, 3) == std::string_view(c == '"' ? "\"\"\"" : "'''");
      const std::string_view close = multi ? text.substr(i, 3) : text.substr(i, 1);
      size_t j = i + close.size();
      while (j < text.size() && text.substr(j, close.size()) != close) {
        if (text[j] == '\n') {
          if (!multi) {
            break;  // an unterminated string: the parser reports it
          }
          ++line;
          column = 0;
        }
        if (c == '"' && text[j] == '\\') {
          ++j;  // an escaped character, e.g. \" or \\ .
        }
        ++j;
        ++column;
      }
      column += static_cast<int64_t>(close.size());
      i = std::min(j + close.size(), text.size()) - 1;
      continue;
    }
    switch (c) {
      case '[':
      case '{':
        ++open;
        dots = 0;
        break;
      case ']':
      case '}':
        open = open > 0 ? open - 1 : 0;
        dots = 0;
        break;
      case '=':
      case ',':
        dots = 0;
        break;
      case '.':
        ++dots;
        break;
      default:
        break;
    }
    if (open + dots + 1 > max_depth) {
      too_deep();
    }
  }
}

}  // namespace nicsim::config

#include "nicsim/live/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "nicsim/live/socket_util.h"

namespace nicsim::live {
namespace {

constexpr char kContext[] = "nicsim-auth-1";

std::string read_bounded(int fd, const std::string& path) {
  std::string text;
  char buf[1024];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw LiveError("secret file " + path + ": " + std::strerror(errno));
    }
    if (n == 0) {
      return text;
    }
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxSecretBytes) {
      throw LiveError("secret file " + path + ": larger than " + std::to_string(kMaxSecretBytes) +
                      " bytes");
    }
  }
}

}  // namespace

std::string load_secret(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) {
    throw LiveError("secret file " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw LiveError("secret file " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw LiveError("secret file " + path + ": not a regular file");
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    throw LiveError("secret file " + path + ": group or others may read it (chmod 600 " + path +
                    ")");
  }
  std::string secret = read_bounded(fd.get(), path);
  if (!secret.empty() && secret.back() == '\n') {
    secret.pop_back();
    if (!secret.empty() && secret.back() == '\r') {
      secret.pop_back();
    }
  }
  if (secret.empty()) {
    throw LiveError("secret file " + path + ": empty");
  }
  return secret;
}

Challenge make_challenge() {
  Challenge c;
  size_t got = 0;
  while (got < c.nonce.size()) {
    const ssize_t n = ::getrandom(c.nonce.data() + got, c.nonce.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw LiveError(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  return c;
}

Auth answer_challenge(const std::string& secret, const Challenge& c) {
  uint8_t message[sizeof kContext - 1 + kNonceBytes];
  std::memcpy(message, kContext, sizeof kContext - 1);
  std::memcpy(message + sizeof kContext - 1, c.nonce.data(), kNonceBytes);
  Auth a;
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), message, sizeof message,
           a.mac.data(), &len) == nullptr ||
      len != kMacBytes) {
    throw LiveError("HMAC-SHA256 failed (OpenSSL)");
  }
  return a;
}

bool auth_valid(const std::string& secret, const Challenge& c, const Auth& a) {
  const Auth expected = answer_challenge(secret, c);
  return CRYPTO_memcmp(expected.mac.data(), a.mac.data(), kMacBytes) == 0;
}

}  // namespace nicsim::live

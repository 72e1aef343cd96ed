#pragma once
// Shared-secret authentication of `nicsim server` clients (protocol.h, types 7 and 8): the
// server sends a random 16-byte nonce per connection; the client answers
// HMAC-SHA256(secret, "nicsim-auth-1" | nonce) (RFC 2104 HMAC over FIPS 180-4 SHA-256, computed
// by OpenSSL's libcrypto); the server compares in constant time. The same idea as irtt's
// HMAC-keyed packets (github.com/heistp/irtt, "HMAC" in its docs), with a server nonce so that a
// recorded answer opens nothing else. Pure functions; the nonce comes from getrandom(2).

#include <array>
#include <cstdint>
#include <string>

#include "nicsim/live/protocol.h"

namespace nicsim::live {

// The largest secret file accepted (bytes): a secret is a line, not a document.
inline constexpr size_t kMaxSecretBytes = 4096;

// Reads a secret from `path`: the file's bytes without one trailing newline (CRLF or LF).
// Refuses (LiveError naming the file) a missing or unreadable file, anything but a regular
// file, an empty secret, a file over kMaxSecretBytes, and a file that group or others may
// read (a shared secret in a world-readable file is no secret: "chmod 600 FILE").
std::string load_secret(const std::string& path);

Challenge make_challenge();
Auth answer_challenge(const std::string& secret, const Challenge& c);
bool auth_valid(const std::string& secret, const Challenge& c, const Auth& a);

}  // namespace nicsim::live

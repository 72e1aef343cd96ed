#include "nicsim/live/auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "nicsim/live/socket_util.h"

namespace nicsim::live {
namespace {

std::string hex(const Auth& a) {
  std::string s;
  char b[3];
  for (uint8_t x : a.mac) {
    std::snprintf(b, sizeof b, "%02x", x);
    s += b;
  }
  return s;
}

// The known answer was computed independently of this code, twice:
// `printf 'nicsim-auth-1\x00\x01...\x0f' | openssl dgst -sha256 -hmac Jefe` and Python's
// hmac.new(b"Jefe", b"nicsim-auth-1" + bytes(range(16)), hashlib.sha256).
TEST(Auth, AnswerIsHmacSha256OfContextAndNonce) {
  Challenge c;
  for (size_t i = 0; i < c.nonce.size(); ++i) {
    c.nonce[i] = static_cast<uint8_t>(i);
  }
  EXPECT_EQ(hex(answer_challenge("Jefe", c)),
            "ec335f7b598bfc057c90e173af094b7c09e8b138f18f639532745d37b93159bf");
}

TEST(Auth, AcceptsTheSecretOnlyForItsOwnNonce) {
  const Challenge c1 = make_challenge();
  const Challenge c2 = make_challenge();
  ASSERT_NE(c1, c2);
  const Auth a = answer_challenge("s3cret", c1);
  EXPECT_TRUE(auth_valid("s3cret", c1, a));
  EXPECT_FALSE(auth_valid("s3cret", c2, a));  // a recorded answer opens nothing else
  EXPECT_FALSE(auth_valid("s3cret!", c1, a));
}

class SecretFile : public ::testing::Test {
 protected:
  std::string path_ = ::testing::TempDir() + "nicsim_secret_" + std::to_string(::getpid());
  void write(const std::string& text, mode_t mode) {
    std::ofstream(path_, std::ios::binary) << text;
    ::chmod(path_.c_str(), mode);
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string error() {
    try {
      load_secret(path_);
    } catch (const LiveError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(SecretFile, ReadsOneLineWithoutItsNewline) {
  write("correct horse\r\n", 0600);
  EXPECT_EQ(load_secret(path_), "correct horse");
}

TEST_F(SecretFile, RefusesReadableByOthersEmptyLargeAndNonRegular) {
  write("x\n", 0644);
  EXPECT_NE(error().find("chmod 600"), std::string::npos) << error();
  write("\n", 0600);
  EXPECT_NE(error().find("empty"), std::string::npos) << error();
  write(std::string(kMaxSecretBytes + 1, 'x'), 0600);
  EXPECT_NE(error().find("larger than"), std::string::npos) << error();
  std::remove(path_.c_str());
  EXPECT_NE(error().find("No such file"), std::string::npos) << error();
  EXPECT_THROW(load_secret("/dev/null"), LiveError);  // not a regular file
}

}  // namespace
}  // namespace nicsim::live

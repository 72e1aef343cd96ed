// Replay recordings (config/replay_file.h): the pcapng the emulator writes parses back to the
// same frames; what tshark needs is there (magic, interfaces, nanosecond resolution, headers);
// every corruption is a ReplayFileError naming the byte, never a crash; and a scenario's
// [[traffic.replay]] reads its file relative to the scenario with errors at the `file` key.

#include "nicsim/config/replay_file.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"

namespace nicsim::config {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

ReplayRecording sample() {
  ReplayRecording r;
  r.hosts = {"a", "b"};
  ReplayFrame f;
  f.time_ns = 1'000'123;
  f.host = 0;
  f.to = 1;
  f.len = 1514;
  f.priority = 0;
  f.tos = 0x02;
  f.flow_hash = 0xdeadbeef;
  r.frames.push_back(f);
  f.time_ns = 1'000'123;  // same time: allowed
  f.host = 1;
  f.to = kReplayNoHost;
  f.len = 60;
  f.priority = 6;
  f.tos = 0x10;
  f.flow_hash = 7;
  r.frames.push_back(f);
  f.time_ns = 5'000'000'001;
  f.host = 0;
  f.to = 1;
  f.len = 65'226;
  f.gso_segs = 45;
  f.gso_size = 1514;
  r.frames.push_back(f);
  return r;
}

std::string encode(const ReplayRecording& r, size_t header_bytes = 100) {
  std::string out = encode_replay_header(r.hosts, "test");
  std::vector<uint8_t> frame(header_bytes, 0x45);
  for (const ReplayFrame& f : r.frames) {
    encode_replay_frame(out, f, frame);
  }
  return out;
}

TEST(ReplayFile, RoundTripKeepsEveryField) {
  const ReplayRecording r = sample();
  EXPECT_EQ(parse_replay(bytes_of(encode(r))), r);
  EXPECT_EQ(parse_replay(bytes_of(encode(r, 0))), r);  // frames without bytes
}

TEST(ReplayFile, IsPcapngWithNanosecondInterfaces) {
  const std::string s = encode(sample(), 300);
  uint32_t word = 0;
  std::memcpy(&word, s.data(), 4);
  EXPECT_EQ(word, 0x0A0D0D0Au);  // section header block
  std::memcpy(&word, s.data() + 8, 4);
  EXPECT_EQ(word, 0x1A2B3C4Du);  // byte-order magic
  EXPECT_NE(s.find("nicsim"), std::string::npos);
  EXPECT_NE(s.find("nicsim to=1 prio=0 tos=0x02 hash=0xdeadbeef segs=1 gso=0"), std::string::npos);
  // if_tsresol option: code 9, length 1, value 9.
  EXPECT_NE(s.find(std::string("\x09\x00\x01\x00\x09", 5)), std::string::npos);
  EXPECT_EQ(s.size() % 4, 0u);
}

// The same file written big-endian (another machine's pcapng) reads the same.
TEST(ReplayFile, ReadsTheOtherByteOrder) {
  // Header + one frame, built by hand in big-endian.
  std::string be;
  auto p32 = [&be](uint32_t v) {
    for (int i = 3; i >= 0; --i) be += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  auto p16 = [&be](uint16_t v) {
    be += static_cast<char>(v >> 8);
    be += static_cast<char>(v & 0xff);
  };
  p32(0x0A0D0D0A);
  p32(28);
  p32(0x1A2B3C4D);
  p16(1);
  p16(0);
  p32(0xffffffff);
  p32(0xffffffff);
  p32(28);
  p32(1);
  p32(36);
  p16(1);
  p16(0);
  p32(128);
  p16(2);
  p16(1);
  be += "a";
  be += std::string(3, '\0');
  p16(9);
  p16(1);
  be += std::string("\x09\0\0\0", 4);
  p32(36);
  const std::string comment = "nicsim to=- prio=0 tos=0x00 hash=0x1 segs=1 gso=0";
  const uint32_t opt = 4 + static_cast<uint32_t>((comment.size() + 3) / 4 * 4) + 4;
  const uint32_t len = 12 + 20 + opt;
  p32(6);
  p32(len);
  p32(0);
  p32(0);
  p32(42);
  p32(0);
  p32(98);
  p16(1);
  p16(static_cast<uint16_t>(comment.size()));
  be += comment;
  be += std::string((4 - comment.size() % 4) % 4, '\0');
  p32(0);
  p32(len);
  const ReplayRecording r = parse_replay(bytes_of(be));
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.hosts, std::vector<std::string>{"a"});
  EXPECT_EQ(r.frames[0].time_ns, 42);
  EXPECT_EQ(r.frames[0].len, 98u);
  EXPECT_EQ(r.frames[0].to, kReplayNoHost);
}

std::string error_of(const std::string& bytes) {
  try {
    parse_replay(bytes_of(bytes));
  } catch (const ReplayFileError& e) {
    return e.what();
  }
  return "";
}

TEST(ReplayFile, CorruptionIsAnErrorNamingTheByte) {
  const std::string good = encode(sample());
  EXPECT_NE(error_of("").find("not a pcapng file"), std::string::npos);
  EXPECT_NE(error_of(std::string(64, 'x')).find("byte 0: not a pcapng"), std::string::npos);
  // Every truncation is refused (or, at a block boundary, parses a prefix of the frames).
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      const ReplayRecording r = parse_replay(bytes_of(good.substr(0, n)));
      EXPECT_LE(r.frames.size(), 3u);
    } catch (const ReplayFileError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("byte ", 0), 0u) << e.what();
    }
  }
  // Every single-byte change is parsed or refused, never a crash (ASan/UBSan builds check).
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    (void)error_of(bad);
  }
  std::string no_comment = good;
  const size_t c = no_comment.find("nicsim to=");
  no_comment.replace(c, 6, "NICSIM");
  EXPECT_NE(error_of(no_comment).find("has no nicsim comment"), std::string::npos);
  std::string bad_field = good;
  bad_field.replace(bad_field.find("prio=0"), 6, "prio=x");
  EXPECT_NE(error_of(bad_field).find("prio: not a number"), std::string::npos);
}

TEST(ReplayFile, TimeMustNotGoBack) {
  ReplayRecording r = sample();
  r.frames[1].time_ns = 10;
  EXPECT_NE(error_of(encode(r)).find("frame 1 goes back in time"), std::string::npos);
}

// [[traffic.replay]] in a scenario: the file relative to the scenario, errors at the key.
class ReplayScenario : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nicsim_replay_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "rec.pcapng", std::ios::binary) << encode(sample());
    std::ofstream(dir_ / "bad.pcapng", std::ios::binary) << "garbage garbage garbage garbage!";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  LoadedScenario load(const std::string& replay_table) {
    const std::string text =
        "[scenario]\nname = \"r\"\nduration = \"6s\"\n[hosts.a]\ncpu = \"x86-desktop\"\nnic = "
        "\"generic-1g\"\n"
        "[hosts.b]\ncpu = \"x86-desktop\"\nnic = \"generic-1g\"\n[wire]\nrate = \"100Mbit\"\ndelay "
        "= \"1ms\"\n\n[[traffic.replay]]\n" +
        replay_table;
    LoadOptions o;
    o.preset_dirs = {NICSIM_TEST_PRESETS_DIR};
    o.standard_presets = false;
    return load_scenario_text(text, (dir_ / "s.toml").string(), o);
  }
  std::string error(const std::string& table) {
    try {
      load(table);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(ReplayScenario, ReadsTheFileBesideTheScenario) {
  const LoadedScenario s = load("file = \"rec.pcapng\"\nfrom = \"b\"\n");
  ASSERT_EQ(s.scenario.traffic.replay.size(), 1u);
  const ReplayConfig& r = s.scenario.traffic.replay[0];
  EXPECT_EQ(r.file, (dir_ / "rec.pcapng").lexically_normal().string());
  EXPECT_EQ(r.from, "b");
  ASSERT_NE(r.recording, nullptr);
  EXPECT_EQ(*r.recording, sample());
  // The dump names the file absolutely and loads back equal.
  const std::string dumped = dump(s.scenario);
  EXPECT_NE(dumped.find("[[traffic.replay]]\nfile = \"" + r.file + "\"\nfrom = \"b\""),
            std::string::npos)
      << dumped;
}

TEST_F(ReplayScenario, ErrorsNameFileLineAndKey) {
  const std::string missing = error("file = \"nope.pcapng\"\n");
  EXPECT_NE(missing.find("s.toml:15:1: traffic.replay[0].file: "), std::string::npos) << missing;
  EXPECT_NE(missing.find("nope.pcapng"), std::string::npos) << missing;
  const std::string corrupt = error("file = \"bad.pcapng\"\n");
  EXPECT_NE(corrupt.find("traffic.replay[0].file: "), std::string::npos) << corrupt;
  EXPECT_NE(corrupt.find("bad.pcapng: byte 0: not a pcapng file"), std::string::npos) << corrupt;
  const std::string no_file = error("from = \"a\"\n");
  EXPECT_NE(no_file.find("traffic.replay[0].file"), std::string::npos) << no_file;
  const std::string from = error("file = \"rec.pcapng\"\nfrom = \"c\"\n");
  EXPECT_NE(from.find("traffic.replay[0].from: \"c\" sent nothing"), std::string::npos) << from;
  EXPECT_NE(error("file = \"rec.pcapng\"\nspeed = 2\n").find("speed"), std::string::npos);
}

}  // namespace
}  // namespace nicsim::config

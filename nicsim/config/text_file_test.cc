// Bounded reading of configuration files (issue 16 item 1) and the runtime bounds a scenario
// is checked against (item 2): every refusal is a one-line ConfigError naming the file, and
// where there is one the line and key — never a crash, a hang or unbounded memory.

#include "nicsim/config/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"

namespace nicsim::config {
namespace {

namespace fs = std::filesystem;

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

class TextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nicsim_text_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

  fs::path dir_;
};

TEST_F(TextFile, ReadsARegularFile) {
  EXPECT_EQ(read_config_text(write("a.toml", "x = 1\n")), "x = 1\n");
}

TEST_F(TextFile, SaysWhyAFileCannotBeRead) {
  EXPECT_EQ(error_of([&] { read_config_text(path("missing.toml")); }),
            path("missing.toml") + ": cannot read the file: no such file");
  EXPECT_EQ(error_of([&] { read_config_text(dir_.string()); }),
            dir_.string() + ": cannot read the file: it is a directory");
  // A FIFO without a writer would block open() forever: refused before opening.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { read_config_text(path("fifo")); }),
            path("fifo") + ": cannot read the file: it is a FIFO (named pipe), not a regular file");
  // /dev/zero never ends: refused as a device.
  EXPECT_EQ(error_of([&] { read_config_text("/dev/zero"); }),
            "/dev/zero: cannot read the file: it is a device, not a regular file");
  fs::create_symlink(path("loop2"), path("loop1"));
  fs::create_symlink(path("loop1"), path("loop2"));
  EXPECT_EQ(error_of([&] { read_config_text(path("loop1")); }),
            path("loop1") + ": cannot read the file: too many levels of symbolic links (a loop?)");
  write("f", "");
  EXPECT_EQ(error_of([&] { read_config_text(path("f") + "/x.toml"); }),
            path("f") + "/x.toml: cannot read the file: a part of the path is not a directory");
}

TEST_F(TextFile, RefusesFilesOverTheLimit) {
  const std::string p = write("big.toml", std::string(101, '#'));
  EXPECT_EQ(read_config_text(p, 101).size(), 101u);
  EXPECT_EQ(error_of([&] { read_config_text(p, 100); }),
            p + ": cannot read the file: larger than 100 bytes, the limit for a configuration "
                "file");
}

TEST(TomlDepth, DottedKeysAndNestingAreBounded) {
  std::string deep_key = "a";
  for (int i = 0; i < 70; ++i) {
    deep_key += ".b";
  }
  EXPECT_EQ(error_of([&] { check_toml_depth("x = 1\n" + deep_key + " = 1\n", "f.toml"); }),
            "f.toml:2:128: nested deeper than 64 levels (dotted key parts, arrays and inline "
            "tables)");
  EXPECT_NE(error_of([&] { check_toml_depth("[" + deep_key + "]\n", "f.toml"); }), "");
  EXPECT_NE(error_of([&] { check_toml_depth("x = " + std::string(70, '[') + "\n", "f.toml"); }),
            "");
  EXPECT_NE(error_of([&] { check_toml_depth("x = " + std::string(70, '{') + "\n", "f.toml"); }),
            "");
}

TEST(TomlDepth, StringsCommentsAndValuesDoNotCount) {
  const std::string dots(200, '.');
  const std::string brackets(200, '[');
  EXPECT_EQ(error_of([&] {
              check_toml_depth(
                  "a = \"" + dots + brackets +
                      "\"\n"
                      "b = '" +
                      dots +
                      "'\n"
                      "c = \"\"\"\n" +
                      dots + "\n" + brackets +
                      "\"\"\"\n"
                      "d = '''" +
                      dots +
                      "'''\n"
                      "# " +
                      dots + brackets +
                      "\n"
                      "e = \"esc \\\" " +
                      dots +
                      "\"\n"
                      "f = [1.5, 2.5, 3.5]\n"
                      "[routers.r.interfaces.r1.qdisc]\n"
                      "\"routers.r.interfaces.r1.qdisc.class[0].qdisc.limit\" = [1, 2]\n",
                  "f.toml");
            }),
            "");
}

TEST(TomlDepth, AScenarioWithAHugeDottedKeyIsRefusedNotCrashed) {
  // The stack overflow of issue 16: ~35,000 dotted parts in an 80 KB file.
  std::string key = "scenario";
  for (int i = 0; i < 35'000; ++i) {
    key += ".a";
  }
  const std::string e = error_of([&] { load_scenario_text(key + " = 1\n", "deep.toml"); });
  EXPECT_EQ(e.rfind("deep.toml:1:", 0), 0u) << e;
  EXPECT_NE(e.find("nested deeper than 64 levels"), std::string::npos) << e;
}

TEST(ConfigErrorEcho, LongKeysAndMessagesAreCut) {
  const ConfigError e(Location{"f.toml", 3, 1}, std::string(1'000'000, 'k'),
                      "unknown key " + std::string(1'000'000, 'v'));
  const std::string what = e.what();
  EXPECT_LT(what.size(), 1'400u);
  EXPECT_NE(what.find("... (999800 more bytes)"), std::string::npos);
  EXPECT_EQ(what.rfind("f.toml:3:1: kkk", 0), 0u);
}

}  // namespace
}  // namespace nicsim::config

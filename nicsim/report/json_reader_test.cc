#include "nicsim/report/json_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "nicsim/report/json.h"
#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

std::string read_error(const std::string& text, const std::string& name = "r.json") {
  try {
    (void)read_results_text(text, name);
  } catch (const ResultsFileError& e) {
    return e.what();
  }
  return "";
}

// Replaces the first occurrence of `from` in `text` (which must contain it).
std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t p = text.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return p == std::string::npos ? text : text.replace(p, from.size(), to);
}

class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char name[] = "/tmp/nicsim_reader_XXXXXX";
    const int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(JsonReader, RoundTripThroughAFile) {
  for (const Results& in : {samples::full_sample_results(), samples::minimal_sample_results()}) {
    const TempFile f(to_json(in));
    const Results out = read_results_file(f.path());
    EXPECT_EQ(out, in);
    EXPECT_EQ(to_json(out), to_json(in));
  }
}

TEST(JsonReader, WrongTypeNamesFileAndJsonPath) {
  const std::string text = to_json(samples::full_sample_results());
  const std::string bad = replace(text, "\"goodput_bps\": {", "\"goodput_bps\": 5, \"x\": {");
  EXPECT_EQ(read_error(bad), "r.json: runs[0].goodput_bps: expected an object, got number");
}

TEST(JsonReader, DuplicateKeyIsAnError) {
  const std::string text = to_json(samples::full_sample_results());
  const std::string bad = replace(text, "\"seed\": 42,", "\"seed\": 42, \"seed\": 43,");
  EXPECT_EQ(read_error(bad), "r.json: runs[0]: duplicate key \"seed\"");
  const std::string bad_root = replace(text, "\"version\": 1,", "\"version\": 1, \"version\": 1,");
  EXPECT_EQ(read_error(bad_root), "r.json: duplicate key \"version\"");
}

TEST(JsonReader, SyntaxErrorNamesLineAndColumn) {
  const std::string msg = read_error("{\n  \"format\": tru\n}", "x.json");
  EXPECT_EQ(msg.rfind("x.json: line 3, column 0: syntax error", 0), 0u) << msg;
  EXPECT_NE(msg.find("syntax error"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(JsonReader, NumberOverflowIsAnErrorNotACrash) {
  const std::string text = to_json(samples::minimal_sample_results());
  const std::string bad = replace(text, "\"duration_s\": 0.0", "\"duration_s\": 1e999");
  const std::string msg = read_error(bad);
  EXPECT_EQ(msg.rfind("r.json: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("1e999"), std::string::npos) << msg;
}

TEST(JsonReader, DeepNestingIsRefused) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  std::string path;
  for (int i = 0; i < 64; ++i) {
    path += "[0]";
  }
  EXPECT_EQ(read_error(deep), "r.json: " + path + ": nesting deeper than 64 levels");
}

TEST(JsonReader, MissingMetaAndCheckResultsProblems) {
  const std::string no_meta = to_json(samples::minimal_sample_results(), {.include_meta = false});
  EXPECT_EQ(read_error(no_meta), "r.json: missing key \"meta\"");
  const std::string text = to_json(samples::minimal_sample_results());
  EXPECT_EQ(read_error(replace(text, "\"backend\": \"sim\"", "\"backend\": \"ns3\"")),
            "r.json: runs[0].backend: must be \"sim\", \"emu\" or \"live\", got \"ns3\"");
  EXPECT_EQ(read_error(replace(text, "\"version\": 1", "\"version\": 2")),
            "r.json: version: this nicsim reads version 1, got 2");
  EXPECT_EQ(read_error("[]"), "r.json: (document): expected an object, got array");
}

TEST(JsonReader, FileErrors) {
  try {
    (void)read_results_file("/nonexistent/r.json");
    FAIL();
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/r.json: cannot open: No such file or directory");
  }
  try {
    (void)read_results_file("/tmp");
    FAIL();
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(std::string(e.what()), "/tmp: not a regular file");
  }
  const TempFile empty("");
  try {
    (void)read_results_file(empty.path());
    FAIL();
  } catch (const ResultsFileError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(empty.path() + ": line 1, column 1: ", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace nicsim::report

// Strict reader for results files (json_reader.h). Two passes over the text: a SAX pass that
// rejects what nlohmann's DOM parser silently accepts (duplicate object keys: the last one
// would win) or what no results document contains (nesting deeper than kMaxDepth), naming the
// JSON path; then results_from_json (json.h), whose messages already name the JSON path, and
// check_results (results.h) for the cross-field rules.

#include "nicsim/report/json_reader.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nicsim/report/json.h"

namespace nicsim::report {

namespace {

using Json = nlohmann::json;

// A results document nests 7 levels deep (runs[].intervals[].directions.<dir>.flows[].key);
// anything much deeper is not one.
constexpr size_t kMaxDepth = 64;

// SAX handler: tracks the JSON path, refuses duplicate keys and deep nesting, and keeps the
// parser's own message for syntax errors.
class StrictSax {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(number_integer_t) { return value(); }
  bool number_unsigned(number_unsigned_t) { return value(); }
  bool number_float(number_float_t, const string_t&) { return value(); }
  bool string(string_t&) { return value(); }
  bool binary(binary_t&) { return value(); }
  bool start_object(size_t) { return open(true); }
  bool start_array(size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      const std::string at = path(frames_.size() - 1);
      error_ = (at.empty() ? "" : at + ": ") + "duplicate key \"" + k + "\"";
      return false;
    }
    f.key = k;
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    std::string m = e.what();
    const std::string at = "parse error at ";
    if (const size_t p = m.find(at); p != std::string::npos) {
      m = m.substr(p + at.size());
    } else if (const size_t q = m.find("] "); q != std::string::npos) {
      m = m.substr(q + 2);  // e.g. out_of_range.406 "number overflow parsing '1e999'"
    }
    error_ = m;
    return false;
  }

  const std::string& error() const { return error_; }
  // The keys of the document's top-level object (empty if it is not an object).
  const std::set<std::string>& root_keys() const { return root_keys_; }

 private:
  struct Frame {
    bool object = false;
    std::set<std::string> keys;
    std::string key;   // object: the key being read
    size_t index = 0;  // array: elements started so far
  };

  // A value (or a container) starts at the current position.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) {
      ++frames_.back().index;
    }
    return true;
  }
  bool open(bool object) {
    value();
    if (frames_.size() >= kMaxDepth) {
      error_ =
          path(frames_.size()) + ": nesting deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    frames_.push_back(Frame{object, {}, {}, 0});
    return true;
  }
  bool close() {
    if (frames_.size() == 1 && frames_.back().object) {
      root_keys_ = frames_.back().keys;
    }
    frames_.pop_back();
    return true;
  }
  // The path of the container frames_[n] (n = frames_.size(): of the value being read), in
  // json.h's notation: runs[0].latency_ms.ping
  std::string path(size_t n) const {
    std::string p;
    for (size_t i = 0; i < n; ++i) {
      const Frame& f = frames_[i];
      if (f.object) {
        p += (p.empty() ? "" : ".") + f.key;
      } else {
        p += "[" + std::to_string(f.index == 0 ? 0 : f.index - 1) + "]";
      }
    }
    return p;
  }

  std::vector<Frame> frames_;
  std::set<std::string> root_keys_;
  std::string error_;
};

// json.h prefixes its messages with "results JSON: "; the file name replaces it.
std::string strip_prefix(std::string m) {
  const std::string prefix = "results JSON: ";
  if (m.compare(0, prefix.size(), prefix) == 0) {
    m.erase(0, prefix.size());
  }
  return m;
}

}  // namespace

Results read_results_text(std::string_view text, const std::string& name) {
  StrictSax sax;
  if (!Json::sax_parse(text.begin(), text.end(), &sax)) {
    throw ResultsFileError(name + ": " + sax.error());
  }
  Results results;
  try {
    results = results_from_json(text);
  } catch (const JsonError& e) {
    throw ResultsFileError(name + ": " + strip_prefix(e.what()));
  } catch (const Json::exception& e) {  // not expected after the SAX pass; never escape raw
    throw ResultsFileError(name + ": " + e.what());
  }
  // json.h also reads the meta-less text of to_json(..., {.include_meta = false}); a file
  // always has meta (docs/results.md).
  if (sax.root_keys().count("meta") == 0) {
    throw ResultsFileError(name + ": missing key \"meta\"");
  }
  const std::vector<std::string> problems = check_results(results);
  if (!problems.empty()) {
    throw ResultsFileError(name + ": " + problems.front());
  }
  return results;
}

Results read_results_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw ResultsFileError(path + ": cannot open: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw ResultsFileError(path + ": not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxResultsFileBytes) {
    throw ResultsFileError(path + ": larger than " + std::to_string(kMaxResultsFileBytes >> 20) +
                           " MiB: not a results file");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    throw ResultsFileError(path + ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream buf;
  buf << f.rdbuf();
  if (f.bad()) {
    throw ResultsFileError(path + ": read error");
  }
  return read_results_text(buf.str(), path);
}

}  // namespace nicsim::report

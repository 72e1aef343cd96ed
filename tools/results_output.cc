#include "tools/results_output.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string_view>

#include "nicsim/report/json.h"
#include "tools/export_command.h"

namespace nicsim::tools {
namespace {

std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

// "" when a directory exists and files can be created in it, else why not.
std::string directory_problem(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return "directory " + dir + ": " + std::strerror(errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    return dir + " is not a directory";
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return "directory " + dir + ": " + std::strerror(errno);
  }
  return "";
}

// "" when `path` can be written as a file (it exists and is writable, or its directory is).
std::string file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return "is a directory";
    }
    return ::access(path.c_str(), W_OK) == 0 ? "" : std::strerror(errno);
  }
  return directory_problem(parent_dir(path));
}

}  // namespace

report::Results new_results(int argc, char** argv) {
  report::Results results;
  results.meta.nicsim_version = NICSIM_VERSION;
  if (std::string_view(NICSIM_GIT_COMMIT).size() > 0) {
    results.meta.git_commit = NICSIM_GIT_COMMIT;
  }
  results.meta.start_time = report::iso8601_utc(static_cast<int64_t>(std::time(nullptr)));
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) {
    results.meta.host = host;
  }
  for (int i = 0; i < argc; ++i) {
    results.meta.command_line.emplace_back(argv[i]);
  }
  return results;
}

void add_output_options(CLI::App& app, OutputOptions& out) {
  app.add_option("--json", out.json,
                 "also write the results as one JSON document (docs/results.md);\n"
                 "'-' writes it to standard output (the tables then go to stderr)")
      ->type_name("OUT.json")
      ->group("output");
  app.add_option("--csv", out.csv,
                 "also write CSV tables into DIR (as nicsim export --csv;\n"
                 "docs/exports.md)")
      ->type_name(cli::kDirType)
      ->group("output");
  app.add_option("--flent", out.flent, "also write flent data file(s) (as nicsim export --flent)")
      ->type_name("OUT.flent.gz")
      ->group("output");
}

std::string output_problem(const OutputOptions& out) {
  if (out.json && !out.json_to_stdout()) {
    if (std::string p = file_problem(*out.json); !p.empty()) {
      return "--json " + *out.json + ": " + p;
    }
  }
  if (out.csv) {
    if (*out.csv == "-") {
      return "--csv -: CSV is a directory of tables, not one stream (give a directory)";
    }
    struct stat st {};
    const bool exists = ::stat(out.csv->c_str(), &st) == 0;
    if (std::string p =
            exists ? directory_problem(*out.csv) : directory_problem(parent_dir(*out.csv));
        !p.empty()) {
      return "--csv " + *out.csv + ": " + p;
    }
  }
  if (out.flent) {
    if (*out.flent == "-") {
      return "--flent -: flent data files are written one per run (give a file name)";
    }
    if (std::string p = file_problem(*out.flent); !p.empty()) {
      return "--flent " + *out.flent + ": " + p;
    }
  }
  return "";
}

std::FILE* text_stream(const OutputOptions& out) { return out.json_to_stdout() ? stderr : stdout; }

namespace {

// Writes `data` to an open stream and closes it; "" or the reason.
std::string write_and_close(std::FILE* f, const std::string& data) {
  const bool wrote = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  const int write_errno = errno;
  if (std::fclose(f) != 0 || !wrote) {
    return std::strerror(wrote ? errno : write_errno);
  }
  return "";
}

}  // namespace

std::string write_file(const std::string& path, const std::string& data) {
  // A regular file is written under a temporary name beside it and renamed when complete, so
  // a failed or interrupted write never leaves a truncated file under the real name. Anything
  // else (/dev/stdout, a FIFO, /dev/full) is written in place.
  struct stat st {};
  const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (special) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    return f == nullptr ? std::strerror(errno) : write_and_close(f, data);
  }
  const std::string partial = path + ".partial-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(partial.c_str(), "wb");
  if (f == nullptr) {
    return std::strerror(errno);
  }
  if (std::string why = write_and_close(f, data); !why.empty()) {
    ::unlink(partial.c_str());
    return why;
  }
  if (::rename(partial.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(partial.c_str());
    return std::strerror(err);
  }
  return "";
}

int write_outputs(const report::Results& results, const OutputOptions& out, const char* who) {
  if (out.json_to_stdout()) {
    const std::string json = report::to_json(results);
    std::fflush(stdout);
    if (std::fwrite(json.data(), 1, json.size(), stdout) != json.size() || std::fflush(stdout)) {
      std::fprintf(stderr, "%s: cannot write the JSON to standard output: %s\n", who,
                   std::strerror(errno));
      return 1;
    }
  } else if (out.json) {
    if (std::string why = write_file(*out.json, report::to_json(results)); !why.empty()) {
      std::fprintf(stderr, "%s: cannot write %s: %s\n", who, out.json->c_str(), why.c_str());
      return 1;
    }
  }
  if (out.csv || out.flent) {
    return write_exports(results, out.csv, out.flent, std::nullopt, who);
  }
  return 0;
}

}  // namespace nicsim::tools

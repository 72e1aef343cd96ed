#include "tools/results_output.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string_view>

#include "nicsim/report/json.h"

namespace nicsim::tools {

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

int write_json_file(const report::Results& results, const std::optional<std::string>& path,
                    const char* who) {
  if (!path) {
    return 0;
  }
  std::ofstream f(*path, std::ios::binary | std::ios::trunc);
  f << report::to_json(results);
  f.close();
  if (!f) {
    std::fprintf(stderr, "%s: cannot write %s\n", who, path->c_str());
    return 1;
  }
  return 0;
}

}  // namespace nicsim::tools

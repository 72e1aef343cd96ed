#pragma once
// Internal to nicsim/config: preset loading from toml++ tables (used by the scenario parser).

#include <toml++/toml.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "nicsim/config/error.h"
#include "nicsim/config/presets.h"
#include "nicsim/model/cpu.h"

namespace nicsim::config::detail {

// Parsed preset files, shared by all runs of a scenario (each file is read once).
class PresetCache {
 public:
  // Throws ConfigError for an unreadable file or a TOML syntax error in it.
  const toml::table& get(const std::string& path);

 private:
  std::map<std::string, std::shared_ptr<const toml::table>> tables_;
};

// Where a preset reference comes from (for "unknown preset" errors).
struct PresetRef {
  std::string name;
  Location at;           // position of the name in the scenario file
  std::string key_path;  // e.g. hosts.a.nic.preset
};

// Overrides: a table of the scenario (may be null) with its key path and file.
struct Overrides {
  const toml::table* table = nullptr;
  std::string path;  // e.g. hosts.a.nic
  std::string file;
  std::vector<std::string> reserved;  // keys of that table handled by the caller ("preset")
};

NicConfig load_nic(const PresetSearch& search, PresetCache& cache, const PresetRef& ref,
                   const Overrides& overrides);
model::CpuCosts load_cpu(const PresetSearch& search, PresetCache& cache, const PresetRef& ref,
                         const Overrides& overrides);

}  // namespace nicsim::config::detail

#pragma once
// Device presets as data files: presets/nic/<name>.toml and presets/cpu/<name>.toml.
//
// A NIC preset names the model family (`model = "platform"` → model::PlatformNic, `"usb"` →
// model::UsbNic), a description, the fastest link speed of the device (`max_link_rate`) and
// values for the model's keys, each with its source in a comment. A scenario overrides any of
// those keys under [hosts.<h>.nic] with the same names and units. A CPU preset gives the
// model::CpuCosts of one host core. Presets are physical: one preset serves every scenario
// that uses the device (docs/scenarios.md lists every key).
//
// USB presets have "knobs" that select several model values at once, as the drivers do:
//   chip       "smsc95xx" | "asix"
//   driver     "linux_usbnet" | "freebsd" (usbnet vs uether: URB counts, copies, re-posting)
//   turbo_mode (smsc95xx) true: MEF + BURST_CAP 18,944 B + BULK_IN_DLY 136.5 µs, Linux
//              rx_urb_size 18,944; false: SEF, rx_urb_size 2,048 (docs/mechanisms §4.2–4.3)
//   rx_burst   (asix) RX maximum frame burst (MFB) 2KiB | 4KiB | 8KiB | 16KiB (§5.1); Linux
//              also sizes its URBs to it
// The knobs are resolved first (override, else preset, else driver default), the model's
// named starting point is built from them (UsbNic::linux_smsc95xx, freebsd_smsc95xx,
// linux_asix, freebsd_axe), then the explicit low-level keys of the preset and then of the
// scenario are applied. Linux's rx_transfers follows rx_urb_size (usbnet rx_qlen = 91080 /
// rx_urb_size) unless set explicitly.
//
// Search path for a preset name (first match wins):
//   1. the directories in $NICSIM_PRESETS (colon-separated), unless disabled;
//   2. the nearest `presets/` directory in the scenario file's directory or one of its parents
//      (so scenarios/x.toml in a checkout finds <checkout>/presets);
//   3. the source tree's presets/ (compiled in) and the installed <datadir>/nicsim/presets.
// A name ending in ".toml" is a file path instead, relative to the scenario file's directory.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nicsim/algo/rss.h"
#include "nicsim/config/error.h"
#include "nicsim/core/rate.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/usb_nic.h"

namespace nicsim::config {

struct PresetSearch {
  std::vector<std::string> dirs;  // each holds nic/ and cpu/ sub-directories
  std::string base_dir;           // where "<file>.toml" preset paths are relative to

  // The standard search path for a scenario at `scenario_file` ("" = none; base_dir = cwd).
  static PresetSearch standard(const std::string& scenario_file = "", bool use_env = true);
  // Only the given directories (tests, tools).
  static PresetSearch only(std::vector<std::string> dirs);

  // The file of preset `name` of `kind` ("nic" or "cpu"), if any.
  std::optional<std::string> find(std::string_view kind, std::string_view name) const;
  // Names of all presets of `kind` found on the path, sorted, without duplicates.
  std::vector<std::string> list(std::string_view kind) const;
};

enum class NicModel : uint8_t {
  kPlatform,  // "platform": model::PlatformNic (PCIe / SoC MAC + Linux driver)
  kUsb,       // "usb": model::UsbNic (USB 2.0 adapter + usbnet / uether)
};
const char* to_string(NicModel m);

struct NicConfig {
  std::string preset;       // the preset name as written in the scenario
  std::string description;  // from the preset file
  NicModel model = NicModel::kPlatform;
  Rate max_link_rate;                   // the device's fastest PHY speed; a faster wire is an error
  model::PlatformNic::Params platform;  // model == kPlatform (qdisc_bypass is set by the qdisc)
  model::UsbNic::Params usb;            // model == kUsb
  bool turbo_mode = true;               // usb, chip smsc95xx: the knob's effective value
  int64_t rx_burst = 16'384;            // usb, chip asix: the knob's effective value (MFB bytes)
  // Platform NICs: queue pairs (`ethtool -L DEV combined N`), each on its own core, received
  // frames spread by RSS (model::MultiQueueNic); 1 = one queue pair on the host's core.
  int64_t queues = 1;
  algo::Rss::Fill rss_fill = algo::Rss::Fill::kModulo;  // the driver's default RETA
  bool rss_udp_ports = false;                           // ethtool -N rx-flow-hash udp4 sdfn
  // The RSS key: Linux draws a random one per boot (netdev_rss_key_fill); here a seed makes it
  // (algo::Rss::key_from_seed), 0 = the 82599 / NDIS verification key.
  int64_t rss_key_seed = 1;

  std::string preset_file;  // where the preset was read from (not part of equality)

  // Every key of the model's table compares equal (the preset file path is not compared).
  bool operator==(const NicConfig& o) const;
};

// Loads NIC preset `name` and applies `overrides` (TOML text with the preset's keys, e.g.
// "turbo_mode = false\nrx_urb_size = \"4KiB\""). Throws ConfigError.
NicConfig load_nic_preset(std::string_view name, std::string_view overrides_toml = "",
                          const PresetSearch& search = PresetSearch::standard());
// Loads CPU preset `name` (CpuCosts) and applies `overrides`. Throws ConfigError.
model::CpuCosts load_cpu_preset(std::string_view name, std::string_view overrides_toml = "",
                                const PresetSearch& search = PresetSearch::standard());

// Effective configuration as TOML "key = value" lines, every key of the model with its unit.
std::string dump_nic(const NicConfig& nic);
// A host's CPU leaves out the router-only costs (per_forward, per_qdisc_op); a router's has all.
enum class CpuRole : uint8_t { kHost, kRouter };
std::string dump_cpu(const model::CpuCosts& cpu, CpuRole role = CpuRole::kHost);
bool cpu_costs_equal(const model::CpuCosts& a, const model::CpuCosts& b);

// The keys a NIC of `model` accepts (preset files and overrides), in documentation order.
std::vector<std::string> nic_keys(NicModel model);
std::vector<std::string> cpu_keys();

}  // namespace nicsim::config

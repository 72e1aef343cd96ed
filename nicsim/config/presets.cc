#include "nicsim/config/presets.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "nicsim/config/fields.h"
#include "nicsim/config/presets_internal.h"
#include "nicsim/config/text_file.h"
#include "nicsim/config/toml_util.h"
#include "nicsim/config/units.h"

#ifndef NICSIM_SOURCE_PRESETS_DIR
#define NICSIM_SOURCE_PRESETS_DIR ""
#endif
#ifndef NICSIM_INSTALL_PRESETS_DIR
#define NICSIM_INSTALL_PRESETS_DIR ""
#endif

namespace nicsim::config {

using detail::Field;
using detail::Kind;
using model::CpuCosts;
using model::ItrMode;
using model::PlatformNic;
using model::TxCompletion;
using model::UsbNic;

namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// Field tables. Keys are the names used in preset files and scenario overrides.

using NicField = Field<NicConfig>;

// Queue pairs a platform NIC may have (ixgbe's RSS limit is 16, mlx5 and ice go to 64+).
constexpr int64_t kMaxQueues = 64;

std::vector<NicField> make_platform_fields() {
  using detail::enum_field;
  using detail::field;
  using N = NicConfig;
  std::vector<NicField> f;
  f.push_back(
      field<N>("max_link_rate", Kind::kRate, [](N& n) -> Rate& { return n.max_link_rate; }));
  f.push_back(field<N>("tx_ring_size", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.tx_ring_size; }));
  f.push_back(field<N>("descs_per_frame", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.descs_per_frame; }));
  f.push_back(field<N>("tx_stop_free", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.tx_stop_free; }));
  f.push_back(field<N>("tx_wake_free", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.tx_wake_free; }));
  f.push_back(field<N>("tso", Kind::kBool, [](N& n) -> bool& { return n.platform.tso; }));
  f.push_back(field<N>("bql", Kind::kBool, [](N& n) -> bool& { return n.platform.doorbell.bql; },
                       {"doorbell.bql"}));
  f.push_back(field<N>("xmit_more", Kind::kBool,
                       [](N& n) -> bool& { return n.platform.doorbell.uses_xmit_more; },
                       {"doorbell.uses_xmit_more"}));
  f.push_back(field<N>("kick_cost", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.doorbell.kick_cost; },
                       {"doorbell.kick_cost"}));
  f.push_back(field<N>("dql.min_limit", Kind::kBytes,
                       [](N& n) -> int64_t& { return n.platform.doorbell.dql.min_limit; },
                       {"doorbell.dql.min_limit"}));
  f.push_back(field<N>("dql.max_limit", Kind::kBytes,
                       [](N& n) -> int64_t& { return n.platform.doorbell.dql.max_limit; },
                       {"doorbell.dql.max_limit"}));
  f.push_back(field<N>("dql.hold_time", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.doorbell.dql.hold_time; },
                       {"doorbell.dql.hold_time"}));
  f.push_back(field<N>("dql.hz", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.doorbell.dql.hz; },
                       {"doorbell.dql.hz", "doorbell.dql"}));
  f.push_back(field<N>("doorbell_latency", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.doorbell_latency; }));
  f.push_back(field<N>("dev_tx_weight", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.dev_tx_weight; }));
  f.push_back(
      field<N>("bulk_dequeue", Kind::kBool, [](N& n) -> bool& { return n.platform.bulk_dequeue; }));
  f.push_back(
      enum_field<N, TxCompletion>("tx_completion",
                                  {{"irq", TxCompletion::kIrq},
                                   {"stmmac_2014", TxCompletion::kStmmac2014},
                                   {"stmmac_modern", TxCompletion::kStmmacModern}},
                                  [](N& n) -> TxCompletion& { return n.platform.tx_completion; }));
  f.push_back(field<N>("tx_coalesce.usecs", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.tx_coalesce.usecs; }));
  f.push_back(field<N>("tx_coalesce.frames", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.tx_coalesce.frames; },
                       {"tx_coalesce.frames", "tx_coalesce"}));
  f.push_back(field<N>("tx_coal_frames", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.tx_coal_frames; }));
  f.push_back(field<N>("tx_coal_timer", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.tx_coal_timer; }));
  f.push_back(field<N>("clean_tx_in_rx_poll", Kind::kBool,
                       [](N& n) -> bool& { return n.platform.clean_tx_in_rx_poll; }));
  f.push_back(field<N>("rx_ring_size", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.rx_ring_size; }));
  f.push_back(field<N>("rx_coalesce.usecs", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.rx_coalesce.usecs; }));
  f.push_back(field<N>("rx_coalesce.frames", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.rx_coalesce.frames; },
                       {"rx_coalesce.frames", "rx_coalesce"}));
  f.push_back(
      field<N>("napi_budget", Kind::kInt, [](N& n) -> int64_t& { return n.platform.napi_budget; }));
  f.push_back(field<N>("gro", Kind::kBool, [](N& n) -> bool& { return n.platform.gro; }));
  f.push_back(
      field<N>("adaptive_rx", Kind::kBool, [](N& n) -> bool& { return n.platform.adaptive_rx; }));
  f.push_back(field<N>("gro_max_size", Kind::kBytes,
                       [](N& n) -> int64_t& { return n.platform.gro_max_size; }));
  // Intel adaptive ITR and NAPI deferral / busy polling (docs/rx-batching.md).
  f.push_back(enum_field<N, ItrMode>("itr",
                                     {{"fixed", ItrMode::kFixed},
                                      {"igb", ItrMode::kIgb},
                                      {"igb_conservative", ItrMode::kIgbConservative},
                                      {"ixgbe", ItrMode::kIxgbe}},
                                     [](N& n) -> ItrMode& { return n.platform.itr; }));
  f.push_back(field<N>("napi_defer_hard_irqs", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.napi_defer_hard_irqs; }));
  f.push_back(field<N>("gro_flush_timeout", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.gro_flush_timeout; }));
  f.push_back(field<N>("threaded", Kind::kBool, [](N& n) -> bool& { return n.platform.threaded; }));
  f.push_back(field<N>("threaded_wakeup", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.threaded_wakeup; }));
  f.push_back(field<N>("busy_read", Kind::kDuration,
                       [](N& n) -> Duration& { return n.platform.busy_read; }));
  f.push_back(field<N>("prefer_busy_poll", Kind::kBool,
                       [](N& n) -> bool& { return n.platform.prefer_busy_poll; }));
  f.push_back(field<N>("busy_poll_budget", Kind::kInt,
                       [](N& n) -> int64_t& { return n.platform.busy_poll_budget; }));
  f.push_back(field<N>("queues", Kind::kInt, [](N& n) -> int64_t& { return n.queues; }));
  f.push_back(enum_field<N, algo::Rss::Fill>(
      "rss_table", {{"modulo", algo::Rss::Fill::kModulo}, {"blocks", algo::Rss::Fill::kBlocks}},
      [](N& n) -> algo::Rss::Fill& { return n.rss_fill; }));
  f.push_back(
      field<N>("rss_udp_ports", Kind::kBool, [](N& n) -> bool& { return n.rss_udp_ports; }));
  f.push_back(
      field<N>("rss_key_seed", Kind::kInt, [](N& n) -> int64_t& { return n.rss_key_seed; }));
  return f;
}

bool is_smsc(const NicConfig& n) { return n.usb.chip == UsbNic::Chip::kSmsc95xx; }
bool is_asix(const NicConfig& n) { return n.usb.chip == UsbNic::Chip::kAsix; }

std::vector<NicField> make_usb_fields() {
  using detail::enum_field;
  using detail::field;
  using N = NicConfig;
  std::vector<NicField> f;
  f.push_back(
      field<N>("max_link_rate", Kind::kRate, [](N& n) -> Rate& { return n.max_link_rate; }));
  f.push_back(enum_field<N, UsbNic::Chip>(
      "chip", {{"smsc95xx", UsbNic::Chip::kSmsc95xx}, {"asix", UsbNic::Chip::kAsix}},
      [](N& n) -> UsbNic::Chip& { return n.usb.chip; }));
  f.push_back(enum_field<N, UsbNic::Driver>(
      "driver", {{"linux_usbnet", UsbNic::Driver::kLinux}, {"freebsd", UsbNic::Driver::kFreeBsd}},
      [](N& n) -> UsbNic::Driver& { return n.usb.driver; }));
  NicField turbo = field<N>("turbo_mode", Kind::kBool, [](N& n) -> bool& { return n.turbo_mode; });
  turbo.applies = is_smsc;
  turbo.applies_note = "only for chip smsc95xx (ASIX: use rx_burst)";
  f.push_back(turbo);
  NicField burst = field<N>("rx_burst", Kind::kBytes, [](N& n) -> int64_t& { return n.rx_burst; });
  burst.applies = is_asix;
  burst.applies_note = "only for chip asix (SMSC: use turbo_mode / burst_cap)";
  f.push_back(burst);
  NicField cap = field<N>("burst_cap", Kind::kBytes,
                          [](N& n) -> int64_t& { return n.usb.rx_aggregation.burst_cap_bytes; });
  cap.applies = is_smsc;
  cap.applies_note = "only for chip smsc95xx (ASIX: use rx_burst)";
  f.push_back(cap);
  NicField delay = field<N>("bulk_in_delay", Kind::kDuration,
                            [](N& n) -> Duration& { return n.usb.rx_aggregation.hold_time; });
  delay.applies = is_smsc;
  delay.applies_note = "only for chip smsc95xx (ASIX has no bulk-in delay)";
  f.push_back(delay);
  f.push_back(field<N>("packets_per_microframe", Kind::kInt, [](N& n) -> int64_t& {
    return n.usb.rx_aggregation.packets_per_microframe;
  }));
  f.push_back(field<N>("rx_fifo", Kind::kBytes,
                       [](N& n) -> int64_t& { return n.usb.rx_aggregation.fifo_bytes; }));
  f.push_back(field<N>("pause_high", Kind::kBytes,
                       [](N& n) -> int64_t& { return n.usb.rx_aggregation.pause_high_bytes; }));
  f.push_back(field<N>("pause_low", Kind::kBytes,
                       [](N& n) -> int64_t& { return n.usb.rx_aggregation.pause_low_bytes; }));
  f.push_back(
      field<N>("rx_transfers", Kind::kInt, [](N& n) -> int64_t& { return n.usb.rx_transfers; }));
  f.push_back(
      field<N>("rx_urb_size", Kind::kBytes, [](N& n) -> int64_t& { return n.usb.rx_urb_bytes; }));
  f.push_back(field<N>("tx_qlen", Kind::kInt, [](N& n) -> int64_t& { return n.usb.tx_qlen; }));
  f.push_back(field<N>("tx_frames_per_transfer", Kind::kInt,
                       [](N& n) -> int64_t& { return n.usb.tx_frames_per_transfer; }));
  f.push_back(field<N>("log2_irq_thresh", Kind::kInt,
                       [](N& n) -> int64_t& { return n.usb.log2_irq_thresh; }));
  f.push_back(field<N>("irq_latency", Kind::kDuration,
                       [](N& n) -> Duration& { return n.usb.irq_latency; }));
  f.push_back(field<N>("bulk_out_packets_per_microframe", Kind::kInt,
                       [](N& n) -> int64_t& { return n.usb.bulk_out_packets_per_microframe; }));
  f.push_back(
      field<N>("tx_fifo", Kind::kBytes, [](N& n) -> int64_t& { return n.usb.tx_fifo_bytes; }));
  f.push_back(
      field<N>("pause_time", Kind::kDuration, [](N& n) -> Duration& { return n.usb.pause_time; }));
  NicField csum = field<N>("rx_csum", Kind::kBool, [](N& n) -> bool& { return n.usb.rx_csum; });
  csum.applies = is_smsc;
  csum.applies_note = "only for chip smsc95xx (the SMSC RX checksum word)";
  f.push_back(csum);
  return f;
}

std::vector<Field<CpuCosts>> make_cpu_fields() {
  using detail::field;
  using C = CpuCosts;
  std::vector<Field<C>> f;
  f.push_back(field<C>("per_interrupt", Kind::kDuration,
                       [](C& c) -> Duration& { return c.per_interrupt; }));
  f.push_back(field<C>("per_poll", Kind::kDuration, [](C& c) -> Duration& { return c.per_poll; }));
  f.push_back(
      field<C>("per_rx_frame", Kind::kDuration, [](C& c) -> Duration& { return c.per_rx_frame; }));
  f.push_back(field<C>("per_rx_packet", Kind::kDuration,
                       [](C& c) -> Duration& { return c.per_rx_packet; }));
  f.push_back(
      field<C>("per_tx_frame", Kind::kDuration, [](C& c) -> Duration& { return c.per_tx_frame; }));
  f.push_back(
      field<C>("per_tx_clean", Kind::kDuration, [](C& c) -> Duration& { return c.per_tx_clean; }));
  f.push_back(field<C>("per_gso_segment", Kind::kDuration,
                       [](C& c) -> Duration& { return c.per_gso_segment; }));
  f.push_back(field<C>("per_usb_transfer", Kind::kDuration,
                       [](C& c) -> Duration& { return c.per_usb_transfer; }));
  f.push_back(field<C>("per_kick", Kind::kDuration, [](C& c) -> Duration& { return c.per_kick; }));
  f.push_back(field<C>("copy_ps_per_byte", Kind::kInt,
                       [](C& c) -> int64_t& { return c.copy_ps_per_byte; }));
  f.push_back(
      field<C>("per_forward", Kind::kDuration, [](C& c) -> Duration& { return c.per_forward; }));
  f.push_back(
      field<C>("per_qdisc_op", Kind::kDuration, [](C& c) -> Duration& { return c.per_qdisc_op; }));
  return f;
}

const std::vector<NicField>& platform_fields() {
  static const std::vector<NicField> kFields = make_platform_fields();
  return kFields;
}
const std::vector<NicField>& usb_fields() {
  static const std::vector<NicField> kFields = make_usb_fields();
  return kFields;
}
const std::vector<NicField>& nic_fields(NicModel m) {
  return m == NicModel::kPlatform ? platform_fields() : usb_fields();
}
const std::vector<Field<CpuCosts>>& cpu_fields() {
  static const std::vector<Field<CpuCosts>> kFields = make_cpu_fields();
  return kFields;
}

// ---------------------------------------------------------------------------------------------

bool valid_preset_name(std::string_view name) {
  if (name.empty() || name.size() > 100) {
    return false;
  }
  const auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  };
  return name.front() != '.' && std::all_of(name.begin(), name.end(), ok);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

void add_dir(std::vector<std::string>& dirs, const std::string& d) {
  if (d.empty()) {
    return;
  }
  if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) {
    dirs.push_back(d);
  }
}

std::string search_description(const PresetSearch& s) {
  std::string out;
  for (const auto& d : s.dirs) {
    out += (out.empty() ? "" : ", ") + d;
  }
  return out.empty() ? std::string("no preset directories") : out;
}

// Resolves a reference to a file, or throws "unknown <kind> preset".
std::string resolve(const PresetSearch& search, std::string_view kind,
                    const detail::PresetRef& ref) {
  if (ends_with(ref.name, ".toml")) {
    if (auto p = search.find(kind, ref.name)) {
      return *p;
    }
    detail::fail(ref.at, ref.key_path,
                 "no " + std::string(kind) + " preset file '" + ref.name + "' (relative to " +
                     (search.base_dir.empty() ? std::string(".") : search.base_dir) + ")");
  }
  if (!valid_preset_name(ref.name)) {
    detail::fail(ref.at, ref.key_path,
                 "invalid preset name '" + ref.name +
                     "' (letters, digits, '.', '_', '-'; or a path ending in .toml)");
  }
  if (auto p = search.find(kind, ref.name)) {
    return *p;
  }
  std::string avail;
  for (const auto& n : search.list(kind)) {
    avail += (avail.empty() ? "" : ", ") + n;
  }
  detail::fail(ref.at, ref.key_path,
               "unknown " + std::string(kind) + " preset '" + ref.name +
                   "' (available: " + (avail.empty() ? std::string("none") : avail) +
                   "; searched " + search_description(search) + ")");
}

template <class P>
using Assignments = std::vector<detail::Assignment<P>>;

template <class P>
void apply_all(P& p, const Assignments<P>& a) {
  for (const auto& x : a) {
    x.field->set(p, x.value);
  }
}

void reject_model_keys(const detail::Overrides& o) {
  if (o.table == nullptr) {
    return;
  }
  for (const char* k : {"model", "description"}) {
    if (o.table->contains(k)) {
      detail::fail(detail::key_location(*o.table, k, o.file), detail::join_key(o.path, k),
                   "is fixed by the preset and cannot be overridden (choose another preset)");
    }
  }
}

// Maps a Params::validate() failure back to the assignment that set the key, or to the
// overrides table / preset file when nobody set it explicitly.
template <class P>
[[noreturn]] void report_invalid(const ParamError& err, const Field<P>* f,
                                 const Assignments<P>& all, const detail::Overrides& o,
                                 const std::string& preset_name, const std::string& preset_file,
                                 std::string_view kind) {
  const std::string in_preset =
      " (" + std::string(kind) + " preset '" + preset_name + "', " + preset_file + ")";
  if (f != nullptr) {
    if (const auto* a = detail::last_assignment(all, f->key)) {
      const bool from_preset = a->at.file == preset_file;
      detail::fail(a->at, a->key_path, err.message + (from_preset ? in_preset : ""));
    }
    if (o.table != nullptr) {
      detail::fail(detail::where(*o.table, o.file), detail::join_key(o.path, f->key),
                   err.message + " (value from" + in_preset.substr(1));
    }
    detail::fail(Location{preset_file, 0, 0}, f->key, err.message + in_preset);
  }
  if (o.table != nullptr) {
    detail::fail(detail::where(*o.table, o.file), detail::join_key(o.path, err.key),
                 err.message + in_preset);
  }
  detail::fail(Location{preset_file, 0, 0}, err.key, err.message + in_preset);
}

struct PresetHeader {
  std::string model;
  std::string description;
};

PresetHeader read_header(const toml::table& t, const std::string& file, bool with_model) {
  detail::TableReader r(t, "", file);
  PresetHeader h;
  if (with_model) {
    h.model = r.required(r.opt_string("model"), "model");
  }
  h.description = r.required(r.opt_string("description"), "description");
  return h;
}

int64_t default_rx_burst(UsbNic::Driver d) {
  // Linux asix: AX88178 picks MFB by hard_mtu, 2048 for a 1500 MTU (ax88178_set_mfb); FreeBSD
  // axe since 2009 (S2): MFB_16384 (docs/mechanisms/asix.md §5.1).
  return d == UsbNic::Driver::kLinux ? 2048 : 16'384;
}

// EHCI interrupt -> completion handler running, when the preset does not say. Linux usbnet:
// the URB is given back from the host controller's interrupt handler (or its BH): interrupt
// delivery only, a couple of microseconds (estimate). FreeBSD uether: the callback runs in the
// USB bus's callback process, woken by the interrupt, and the single transfer is re-posted from
// there; seed S2's per-transfer gap (docs/mechanisms §5.4, refit in docs/presets.md: ≈208 us
// per transfer besides the bus time) minus the mean 62.5 us EHCI threshold wait and the Core 2
// Duo's per_interrupt + per_usb_transfer (presets/cpu/x86-core2.toml, 18 us) leaves ≈125 us.
Duration default_irq_latency(UsbNic::Driver d) {
  return d == UsbNic::Driver::kLinux ? Duration::us(2) : Duration::us(125);
}

}  // namespace

// ---------------------------------------------------------------------------------------------

const char* to_string(NicModel m) { return m == NicModel::kPlatform ? "platform" : "usb"; }

bool NicConfig::operator==(const NicConfig& o) const {
  return preset == o.preset && description == o.description && model == o.model &&
         detail::fields_equal(nic_fields(model), *this, o);
}

bool cpu_costs_equal(const CpuCosts& a, const CpuCosts& b) {
  return detail::fields_equal(cpu_fields(), a, b);
}

std::string dump_nic(const NicConfig& nic) {
  return detail::dump_fields(nic_fields(nic.model), nic);
}
std::string dump_cpu(const CpuCosts& cpu, CpuRole role) {
  if (role == CpuRole::kRouter) {
    return detail::dump_fields(cpu_fields(), cpu);
  }
  // A host forwards nothing: its effective configuration leaves the router-only costs out.
  static const std::vector<Field<CpuCosts>> kHostFields = [] {
    std::vector<Field<CpuCosts>> f = cpu_fields();
    std::erase_if(f, [](const Field<CpuCosts>& x) {
      return x.key == "per_forward" || x.key == "per_qdisc_op";
    });
    return f;
  }();
  return detail::dump_fields(kHostFields, cpu);
}

std::vector<std::string> nic_keys(NicModel model) {
  std::vector<std::string> out;
  for (const auto& f : nic_fields(model)) {
    out.push_back(f.key);
  }
  return out;
}

std::vector<std::string> cpu_keys() {
  std::vector<std::string> out;
  for (const auto& f : cpu_fields()) {
    out.push_back(f.key);
  }
  return out;
}

PresetSearch PresetSearch::standard(const std::string& scenario_file, bool use_env) {
  PresetSearch s;
  if (use_env) {
    if (const char* env = std::getenv("NICSIM_PRESETS")) {
      std::string_view v(env);
      while (!v.empty()) {
        const size_t colon = v.find(':');
        const std::string dir(v.substr(0, colon));
        // A mistyped $NICSIM_PRESETS would otherwise be skipped without a word and the
        // shipped preset of the same name used instead.
        if (!dir.empty() && !is_dir(dir)) {
          std::error_code ec;
          throw ConfigError(Location{"$NICSIM_PRESETS", 0, 0}, "",
                            "'" + dir + "' " +
                                (fs::exists(dir, ec) ? "is not a directory" : "does not exist") +
                                " (a colon-separated list of preset directories)");
        }
        add_dir(s.dirs, dir);
        v = colon == std::string_view::npos ? std::string_view() : v.substr(colon + 1);
      }
    }
  }
  std::error_code ec;
  if (!scenario_file.empty()) {
    fs::path dir = fs::absolute(fs::path(scenario_file), ec).parent_path();
    s.base_dir = fs::path(scenario_file).parent_path().string();
    for (fs::path d = dir; !d.empty(); d = d.parent_path()) {
      if (is_dir(d / "presets")) {
        add_dir(s.dirs, (d / "presets").string());
        break;
      }
      if (d == d.parent_path()) {
        break;
      }
    }
  }
  add_dir(s.dirs, NICSIM_SOURCE_PRESETS_DIR);
  add_dir(s.dirs, NICSIM_INSTALL_PRESETS_DIR);
  return s;
}

PresetSearch PresetSearch::only(std::vector<std::string> dirs) {
  PresetSearch s;
  s.dirs = std::move(dirs);
  return s;
}

std::optional<std::string> PresetSearch::find(std::string_view kind, std::string_view name) const {
  if (ends_with(name, ".toml")) {
    fs::path p(name);
    if (p.is_relative() && !base_dir.empty()) {
      p = fs::path(base_dir) / p;
    }
    if (is_file(p)) {
      return p.string();
    }
    return std::nullopt;
  }
  for (const auto& d : dirs) {
    const fs::path p = fs::path(d) / kind / (std::string(name) + ".toml");
    if (is_file(p)) {
      return p.string();
    }
  }
  return std::nullopt;
}

std::vector<std::string> PresetSearch::list(std::string_view kind) const {
  std::set<std::string> names;
  for (const auto& d : dirs) {
    std::error_code ec;
    const fs::path dir = fs::path(d) / kind;
    if (!is_dir(dir)) {
      continue;
    }
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".toml") {
        names.insert(e.path().stem().string());
      }
    }
  }
  return {names.begin(), names.end()};
}

namespace detail {

const toml::table& PresetCache::get(const std::string& path) {
  auto it = tables_.find(path);
  if (it != tables_.end()) {
    return *it->second;
  }
  try {
    const std::string text = read_config_text(path);
    check_toml_depth(text, path);
    auto t = std::make_shared<const toml::table>(toml::parse(text, std::string_view(path)));
    return *tables_.emplace(path, std::move(t)).first->second;
  } catch (const toml::parse_error& e) {
    fail(where(e.source(), path), "", std::string(e.description()));
  }
}

NicConfig load_nic(const PresetSearch& search, PresetCache& cache, const PresetRef& ref,
                   const Overrides& overrides) {
  const std::string file = resolve(search, "nic", ref);
  const toml::table& t = cache.get(file);
  const PresetHeader h = read_header(t, file, /*with_model=*/true);
  NicConfig nc;
  nc.preset = ref.name;
  nc.preset_file = file;
  nc.description = h.description;
  if (h.model == "platform") {
    nc.model = NicModel::kPlatform;
  } else if (h.model == "usb") {
    nc.model = NicModel::kUsb;
  } else {
    TableReader r(t, "", file);
    fail(r.key_location("model"), "model", "expected one of platform, usb, got " + quote(h.model));
  }
  const auto& fields = nic_fields(nc.model);
  reject_model_keys(overrides);
  Assignments<NicConfig> all = read_assignments(t, fields, "", file, {"model", "description"});
  if (!detail::last_assignment(all, "max_link_rate")) {
    fail(Location{file, 0, 0}, "max_link_rate", "required in a nic preset");
  }
  if (overrides.table != nullptr) {
    auto o = read_assignments(*overrides.table, fields, overrides.path, overrides.file,
                              overrides.reserved);
    all.insert(all.end(), std::make_move_iterator(o.begin()), std::make_move_iterator(o.end()));
  }

  if (nc.model == NicModel::kPlatform) {
    nc.platform = PlatformNic::Params{};
    apply_all(nc, all);
  } else {
    // Knobs first: chip and driver (required), turbo_mode / rx_burst (defaults per driver).
    const auto* chip = detail::last_assignment(all, "chip");
    const auto* driver = detail::last_assignment(all, "driver");
    if (chip == nullptr || driver == nullptr) {
      fail(Location{file, 0, 0}, chip == nullptr ? "chip" : "driver", "required in a usb preset");
    }
    chip->field->set(nc, chip->value);
    driver->field->set(nc, driver->value);
    for (const auto& a : all) {
      if (!a.field->applies_to(nc)) {
        fail(a.at, a.key_path, a.field->applies_note);
      }
    }
    nc.turbo_mode = true;  // Linux turbo_mode and FreeBSD smsc_rx_packet_batching default 1 (§4.3)
    nc.rx_burst = default_rx_burst(nc.usb.driver);
    if (const auto* a = detail::last_assignment(all, "turbo_mode")) {
      a->field->set(nc, a->value);
    }
    if (const auto* a = detail::last_assignment(all, "rx_burst")) {
      a->field->set(nc, a->value);
      if (nc.rx_burst != 2048 && nc.rx_burst != 4096 && nc.rx_burst != 8192 &&
          nc.rx_burst != 16'384) {
        fail(a->at, a->key_path,
             "must be one of \"2KiB\", \"4KiB\", \"8KiB\", \"16KiB\" (ASIX RX_CTL maximum frame "
             "burst), got " +
                 quote(format_bytes(nc.rx_burst)));
      }
    }
    const bool is_linux = nc.usb.driver == UsbNic::Driver::kLinux;
    const UsbNic::Chip c = nc.usb.chip;
    if (c == UsbNic::Chip::kSmsc95xx) {
      nc.usb = is_linux ? UsbNic::linux_smsc95xx(nc.turbo_mode)
                        : UsbNic::freebsd_smsc95xx(nc.turbo_mode);
    } else {
      nc.usb = is_linux ? UsbNic::linux_asix(nc.rx_burst) : UsbNic::freebsd_axe(nc.rx_burst);
    }
    for (const auto& a : all) {
      const std::string& k = a.field->key;
      if (k != "chip" && k != "driver" && k != "turbo_mode" && k != "rx_burst") {
        a.field->set(nc, a.value);
      }
    }
    if (is_linux && detail::last_assignment(all, "rx_urb_size") != nullptr &&
        detail::last_assignment(all, "rx_transfers") == nullptr) {
      nc.usb.rx_transfers = model::usbnet_rx_qlen(nc.usb.rx_urb_bytes);  // usbnet_update_max_qlen
    }
    if (detail::last_assignment(all, "irq_latency") == nullptr) {
      nc.usb.irq_latency = default_irq_latency(nc.usb.driver);
    }
  }

  if (nc.max_link_rate.is_zero()) {
    const auto* a = detail::last_assignment(all, "max_link_rate");
    fail(a->at, a->key_path, "must be > 0");
  }
  if (nc.model == NicModel::kPlatform && nc.rss_key_seed < 0) {
    const auto* a = detail::last_assignment(all, "rss_key_seed");
    fail(a->at, a->key_path, "must be >= 0 (0: the verification key)");
  }
  if (nc.model == NicModel::kPlatform && (nc.queues < 1 || nc.queues > kMaxQueues)) {
    const auto* a = detail::last_assignment(all, "queues");
    fail(a->at, a->key_path,
         "must be 1.." + std::to_string(kMaxQueues) + " queue pairs (got " +
             std::to_string(nc.queues) + ")");
  }
  const Validation v = nc.model == NicModel::kPlatform ? nc.platform.validate() : nc.usb.validate();
  if (v) {
    const Field<NicConfig>* f = nullptr;
    if (nc.model == NicModel::kUsb && is_asix(nc) && v->key == "burst_cap") {
      f = find_field(fields, "rx_burst");
    } else {
      f = field_for_model_key(fields, v->key);
    }
    report_invalid(*v, f, all, overrides, ref.name, file, "nic");
  }
  return nc;
}

CpuCosts load_cpu(const PresetSearch& search, PresetCache& cache, const PresetRef& ref,
                  const Overrides& overrides) {
  const std::string file = resolve(search, "cpu", ref);
  const toml::table& t = cache.get(file);
  read_header(t, file, /*with_model=*/false);
  const auto& fields = cpu_fields();
  if (overrides.table != nullptr) {
    if (const toml::node* n = overrides.table->get("description")) {
      fail(where(*n, overrides.file), join_key(overrides.path, "description"),
           "is fixed by the preset and cannot be overridden");
    }
  }
  Assignments<CpuCosts> all = read_assignments(t, fields, "", file, {"description"});
  for (const auto& f : fields) {
    if (detail::last_assignment(all, f.key) == nullptr) {
      fail(Location{file, 0, 0}, f.key, "required in a cpu preset (every cost must be stated)");
    }
  }
  if (overrides.table != nullptr) {
    auto o = read_assignments(*overrides.table, fields, overrides.path, overrides.file,
                              overrides.reserved);
    all.insert(all.end(), std::make_move_iterator(o.begin()), std::make_move_iterator(o.end()));
  }
  CpuCosts c;
  apply_all(c, all);
  if (const Validation v = c.validate()) {
    report_invalid(*v, field_for_model_key(fields, v->key), all, overrides, ref.name, file, "cpu");
  }
  return c;
}

}  // namespace detail

namespace {

toml::table parse_overrides(std::string_view text) {
  try {
    return toml::parse(text, std::string_view("<overrides>"));
  } catch (const toml::parse_error& e) {
    detail::fail(detail::where(e.source(), "<overrides>"), "", std::string(e.description()));
  }
}

// A preset named through the API (not from a scenario file): no file position. A named object,
// not a temporary in the call: g++ 12 at -O3 warns that the temporary's Location::file "may be
// used uninitialized" on the exception path (a false -Wmaybe-uninitialized).
detail::PresetRef api_ref(std::string_view name, std::string key_path) {
  detail::PresetRef ref;
  ref.name = std::string(name);
  ref.key_path = std::move(key_path);
  return ref;
}

}  // namespace

NicConfig load_nic_preset(std::string_view name, std::string_view overrides_toml,
                          const PresetSearch& search) {
  detail::PresetCache cache;
  const toml::table o = parse_overrides(overrides_toml);
  detail::Overrides ov{&o, "", "<overrides>", {}};
  const detail::PresetRef ref = api_ref(name, "nic");
  return detail::load_nic(search, cache, ref, ov);
}

CpuCosts load_cpu_preset(std::string_view name, std::string_view overrides_toml,
                         const PresetSearch& search) {
  detail::PresetCache cache;
  const toml::table o = parse_overrides(overrides_toml);
  detail::Overrides ov{&o, "", "<overrides>", {}};
  const detail::PresetRef ref = api_ref(name, "cpu");
  return detail::load_cpu(search, cache, ref, ov);
}

}  // namespace nicsim::config

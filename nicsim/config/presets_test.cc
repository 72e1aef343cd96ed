// Presets as data files: every shipped preset loads, validates and builds its model; overrides
// apply with the preset's key names and units; the seed knobs map to the right model Params;
// errors carry the file, line, column and key (docs/scenarios.md "Strict").

#include "nicsim/config/presets.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nicsim/config/qdisc.h"
#include "nicsim/model/cpu.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/platform_nic.h"
#include "nicsim/model/usb_nic.h"
#include "nicsim/model/wire.h"

namespace nicsim::config {
namespace {

using algo::UsbRxAggregator;
using model::UsbNic;

const PresetSearch& shipped() {
  static const PresetSearch s = PresetSearch::only({NICSIM_TEST_PRESETS_DIR});
  return s;
}

NicConfig nic(std::string_view name, std::string_view overrides = "") {
  return load_nic_preset(name, overrides, shipped());
}

// The ConfigError message of `f`, or "" if it did not throw.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// "path:line:1" of the first line of `file` that starts with `prefix`.
std::string line_of(const std::string& file, const std::string& prefix) {
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind(prefix, 0) == 0) {
      return file + ":" + std::to_string(n) + ":1";
    }
  }
  return file + ":?";
}

std::string preset_file(std::string_view kind, std::string_view name) {
  return std::string(NICSIM_TEST_PRESETS_DIR) + "/" + std::string(kind) + "/" + std::string(name) +
         ".toml";
}

TEST(Presets, TheShippedPresetsAreListed) {
  EXPECT_EQ(shipped().list("nic"), (std::vector<std::string>{"ax88178", "ax88772", "generic-10g",
                                                             "generic-1g", "smsc95xx", "stmmac"}));
  EXPECT_EQ(shipped().list("cpu"),
            (std::vector<std::string>{"arm-cortex-a5", "x86-core2", "x86-desktop"}));
}

// Every NIC preset loads, passes its model's validate() and builds the model with every CPU
// preset (the constructors call require_valid).
TEST(Presets, EveryPresetLoadsValidatesAndBuildsItsModel) {
  for (const std::string& c : shipped().list("cpu")) {
    SCOPED_TRACE(c);
    const model::CpuCosts costs = load_cpu_preset(c, "", shipped());
    EXPECT_FALSE(costs.validate());
    EXPECT_GT(costs.per_rx_frame, Duration::zero());
    for (const std::string& n : shipped().list("nic")) {
      SCOPED_TRACE(n);
      const NicConfig cfg = nic(n);
      EXPECT_EQ(cfg.preset, n);
      EXPECT_FALSE(cfg.description.empty());
      EXPECT_FALSE(cfg.max_link_rate.is_zero());
      if (cfg.model == NicModel::kPlatform) {
        EXPECT_FALSE(cfg.platform.validate());
        EXPECT_NO_THROW(model::PlatformNic(cfg.platform, QdiscConfig{}.build(), costs));
      } else {
        EXPECT_FALSE(cfg.usb.validate());
        EXPECT_NO_THROW(model::UsbNic(cfg.usb, QdiscConfig{}.build(), costs));
      }
    }
  }
}

TEST(Presets, PhysicalFactsOfTheDevices) {
  EXPECT_EQ(nic("smsc95xx").max_link_rate, Rate::mbit(100));
  EXPECT_EQ(nic("ax88772").max_link_rate, Rate::mbit(100));
  EXPECT_EQ(nic("ax88178").max_link_rate, Rate::gbit(1));
  EXPECT_EQ(nic("stmmac").max_link_rate, Rate::gbit(1));
  EXPECT_EQ(nic("generic-1g").max_link_rate, Rate::gbit(1));
  EXPECT_EQ(nic("generic-10g").max_link_rate, Rate::gbit(10));
  // Driver styles: the seeds' systems (§1): S1/S2 FreeBSD, S3 Linux (platform = Linux).
  EXPECT_EQ(nic("smsc95xx").usb.driver, UsbNic::Driver::kFreeBsd);
  EXPECT_EQ(nic("ax88178").usb.driver, UsbNic::Driver::kFreeBsd);
  EXPECT_EQ(nic("stmmac").model, NicModel::kPlatform);

  // stmmac 2014 (§2.6, §3.4, §7.3): 256-descriptor rings, stop 18 / wake 64, no TSO, no
  // xmit_more, 64 frames / 40 ms TX mitigation, one NAPI for both directions, riwt 0xff.
  const NicConfig s = nic("stmmac");
  EXPECT_EQ(s.platform.tx_ring_size, 256);
  EXPECT_EQ(s.platform.rx_ring_size, 256);
  EXPECT_EQ(s.platform.tx_stop_free, 18);
  EXPECT_EQ(s.platform.tx_wake_free, 64);
  EXPECT_FALSE(s.platform.tso);
  EXPECT_FALSE(s.platform.doorbell.uses_xmit_more);
  EXPECT_EQ(s.platform.tx_completion, model::TxCompletion::kStmmac2014);
  EXPECT_EQ(s.platform.tx_coal_frames, 64);
  EXPECT_EQ(s.platform.tx_coal_timer, Duration::ms(40));
  EXPECT_TRUE(s.platform.clean_tx_in_rx_poll);
  EXPECT_EQ(s.platform.rx_coalesce.usecs, Duration::ns(391'700));
  EXPECT_EQ(s.platform.rx_coalesce.frames, 0);
  EXPECT_EQ(s.platform.doorbell.dql.hz, 100);

  // igb / ixgbe defaults (igb.h, ixgbe.h): rings, DESC_NEEDED thresholds, 20K ITR.
  const NicConfig g1 = nic("generic-1g");
  EXPECT_EQ(g1.platform.tx_ring_size, 256);
  EXPECT_EQ(g1.platform.tx_stop_free, 20);
  EXPECT_EQ(g1.platform.tx_wake_free, 41);
  EXPECT_TRUE(g1.platform.tso);
  EXPECT_TRUE(g1.platform.doorbell.bql);
  EXPECT_TRUE(g1.platform.doorbell.uses_xmit_more);
  EXPECT_EQ(g1.platform.rx_coalesce.usecs, Duration::us(49));
  const NicConfig g10 = nic("generic-10g");
  EXPECT_EQ(g10.platform.tx_ring_size, 512);
  EXPECT_EQ(g10.platform.rx_ring_size, 512);
  EXPECT_EQ(g10.platform.tx_coalesce.usecs, Duration::us(50));
}

// Seed S1 knob (§4.2-4.3): turbo_mode selects MEF + burst cap 18,944 + bulk-in delay 136.5 us
// vs SEF, and Linux's rx_urb_size 18,944 vs 2,048 (rx_qlen 4 vs 44). FreeBSD: one 20,480-byte
// transfer either way.
TEST(Presets, TurboModeMapsToAggregatorModeCapDelayAndUrbSize) {
  const NicConfig on = nic("smsc95xx");
  EXPECT_TRUE(on.turbo_mode);
  EXPECT_EQ(on.usb.rx_aggregation.mode, UsbRxAggregator::Mode::kMultiFrame);
  EXPECT_EQ(on.usb.rx_aggregation.burst_cap_bytes, 18'944);
  EXPECT_EQ(on.usb.rx_aggregation.hold_time, Duration::ns(136'533));
  EXPECT_EQ(on.usb.rx_urb_bytes, 20'480);
  EXPECT_EQ(on.usb.rx_transfers, 1);
  EXPECT_EQ(on.usb.tx_frames_per_transfer, 16);
  EXPECT_EQ(on.usb.irq_latency, Duration::us(125));  // FreeBSD default (S2 calibration)
  // FreeBSD uether never negotiates PAUSE: the AFC watermarks follow the driver (off).
  EXPECT_EQ(on.usb.rx_aggregation.pause_high_bytes, 0);
  EXPECT_EQ(on.usb.rx_aggregation.pause_low_bytes, 0);
  EXPECT_EQ(nic("smsc95xx", "pause_high = \"15872B\"\npause_low = \"3072B\"")
                .usb.rx_aggregation.pause_high_bytes,
            15'872);  // an explicit override still applies

  const NicConfig off = nic("smsc95xx", "turbo_mode = false");
  EXPECT_FALSE(off.turbo_mode);
  EXPECT_EQ(off.usb.rx_aggregation.mode, UsbRxAggregator::Mode::kSingleFrame);
  EXPECT_EQ(off.usb.rx_urb_bytes, 20'480);

  const NicConfig lon = nic("smsc95xx", "driver = \"linux_usbnet\"");
  EXPECT_EQ(lon.usb.driver, UsbNic::Driver::kLinux);
  EXPECT_EQ(lon.usb.rx_aggregation.mode, UsbRxAggregator::Mode::kMultiFrame);
  EXPECT_EQ(lon.usb.rx_urb_bytes, 18'944);
  EXPECT_EQ(lon.usb.rx_transfers, 4);  // 91080 / 18944
  EXPECT_EQ(lon.usb.tx_frames_per_transfer, 1);
  EXPECT_EQ(lon.usb.tx_qlen, 59);  // 91080 / 1526
  EXPECT_EQ(lon.usb.irq_latency, Duration::us(2));

  const NicConfig loff = nic("smsc95xx", "driver = \"linux_usbnet\"\nturbo_mode = false");
  EXPECT_EQ(loff.usb.rx_aggregation.mode, UsbRxAggregator::Mode::kSingleFrame);
  EXPECT_EQ(loff.usb.rx_urb_bytes, 2048);
  EXPECT_EQ(loff.usb.rx_transfers, 44);  // 91080 / 2048

  // The preset's device values survive the knob (FIFOs, COE word); Linux enables AFC PAUSE.
  EXPECT_EQ(loff.usb.rx_aggregation.fifo_bytes, 20 * 1024);
  EXPECT_EQ(loff.usb.rx_aggregation.pause_high_bytes, 15'872);
  EXPECT_EQ(loff.usb.rx_aggregation.pause_low_bytes, 3'072);
  EXPECT_EQ(loff.usb.tx_fifo_bytes, 8 * 1024);
  EXPECT_TRUE(loff.usb.rx_csum);
}

// Seed S2 knob (§5.1): rx_burst is the ASIX MFB; Linux sizes its URBs (and rx_qlen) to it;
// FreeBSD's transfer buffer stays 16 KiB. Unset, it follows the driver (FreeBSD 16 KiB since
// S2, Linux 2 KiB for a 1500 MTU).
TEST(Presets, RxBurstMapsToMaximumFrameBurst) {
  const NicConfig d = nic("ax88178");
  EXPECT_EQ(d.rx_burst, 16'384);
  EXPECT_EQ(d.usb.rx_aggregation.mode, UsbRxAggregator::Mode::kMultiFrame);
  EXPECT_EQ(d.usb.rx_aggregation.burst_cap_bytes, 16'384);
  EXPECT_EQ(d.usb.rx_aggregation.hold_time, Duration::zero());
  EXPECT_EQ(d.usb.rx_urb_bytes, 16'384);
  EXPECT_EQ(d.usb.rx_transfers, 1);

  for (const auto& [text, bytes] : std::vector<std::pair<std::string, int64_t>>{
           {"2KiB", 2048}, {"4KiB", 4096}, {"8KiB", 8192}, {"16KiB", 16'384}}) {
    const NicConfig b = nic("ax88178", "rx_burst = \"" + text + "\"");
    EXPECT_EQ(b.rx_burst, bytes);
    EXPECT_EQ(b.usb.rx_aggregation.burst_cap_bytes, bytes);
    EXPECT_EQ(b.usb.rx_urb_bytes, 16'384);  // FreeBSD AXE_BULK_BUF_SIZE
  }
  const NicConfig l = nic("ax88178", "driver = \"linux_usbnet\"");
  EXPECT_EQ(l.rx_burst, 2048);
  EXPECT_EQ(l.usb.rx_aggregation.burst_cap_bytes, 2048);
  EXPECT_EQ(l.usb.rx_urb_bytes, 2048);
  EXPECT_EQ(l.usb.rx_transfers, 44);
  const NicConfig l8 = nic("ax88178", "driver = \"linux_usbnet\"\nrx_burst = \"8KiB\"");
  EXPECT_EQ(l8.usb.rx_urb_bytes, 8192);
  EXPECT_EQ(l8.usb.rx_transfers, 11);  // 91080 / 8192
  // An explicit rx_urb_size re-derives Linux's rx_qlen unless rx_transfers is also given.
  const NicConfig lu = nic("ax88178", "driver = \"linux_usbnet\"\nrx_urb_size = \"4KiB\"");
  EXPECT_EQ(lu.usb.rx_transfers, 22);
  const NicConfig lt =
      nic("ax88178", "driver = \"linux_usbnet\"\nrx_urb_size = \"4KiB\"\nrx_transfers = 3");
  EXPECT_EQ(lt.usb.rx_transfers, 3);

  EXPECT_EQ(error_of([] { nic("ax88178", "rx_burst = \"3KiB\""); }),
            "<overrides>:1:1: rx_burst: must be one of \"2KiB\", \"4KiB\", \"8KiB\", \"16KiB\" "
            "(ASIX RX_CTL maximum frame burst), got \"3KiB\"");
  EXPECT_EQ(error_of([] { nic("ax88178", "turbo_mode = false"); }),
            "<overrides>:1:1: turbo_mode: only for chip smsc95xx (ASIX: use rx_burst)");
  EXPECT_EQ(error_of([] { nic("smsc95xx", "rx_burst = \"2KiB\""); }),
            "<overrides>:1:1: rx_burst: only for chip asix (SMSC: use turbo_mode / burst_cap)");
}

// Seed S3 knob (§2.6): bql switches Doorbell::Params::bql; the other doorbell keys map too.
TEST(Presets, BqlMapsToDoorbellParams) {
  EXPECT_TRUE(nic("stmmac").platform.doorbell.bql);
  const NicConfig off = nic("stmmac", "bql = false");
  EXPECT_FALSE(off.platform.doorbell.bql);
  EXPECT_FALSE(off.platform.doorbell.uses_xmit_more);  // unchanged
  const NicConfig more =
      nic("stmmac",
          "xmit_more = true\nkick_cost = \"250ns\"\n"
          "[dql]\nmin_limit = \"3KiB\"\nmax_limit = \"64KiB\"\nhold_time = \"2s\"");
  EXPECT_TRUE(more.platform.doorbell.uses_xmit_more);
  EXPECT_EQ(more.platform.doorbell.kick_cost, Duration::ns(250));
  EXPECT_EQ(more.platform.doorbell.dql.min_limit, 3072);
  EXPECT_EQ(more.platform.doorbell.dql.max_limit, 65'536);
  EXPECT_EQ(more.platform.doorbell.dql.hold_time, Duration::s(2));
}

TEST(Presets, OverridesUseThePresetKeysAndUnits) {
  const NicConfig s =
      nic("stmmac",
          "tx_ring_size = 512\ntx_wake_free = 128\ntx_completion = \"stmmac_modern\"\n"
          "tx_coal_frames = 25\ntx_coal_timer = \"5ms\"\nclean_tx_in_rx_poll = false\n"
          "rx_coalesce.usecs = \"327.7us\"\ntso = true\ndescs_per_frame = 3\n"
          "max_link_rate = \"100Mbit\"");
  EXPECT_EQ(s.platform.tx_ring_size, 512);
  EXPECT_EQ(s.platform.tx_wake_free, 128);
  EXPECT_EQ(s.platform.tx_completion, model::TxCompletion::kStmmacModern);
  EXPECT_EQ(s.platform.tx_coal_frames, 25);
  EXPECT_EQ(s.platform.tx_coal_timer, Duration::ms(5));
  EXPECT_FALSE(s.platform.clean_tx_in_rx_poll);
  EXPECT_EQ(s.platform.rx_coalesce.usecs, Duration::ns(327'700));
  EXPECT_TRUE(s.platform.tso);
  EXPECT_EQ(s.platform.descs_per_frame, 3);
  EXPECT_EQ(s.max_link_rate, Rate::mbit(100));
  EXPECT_EQ(s.platform.rx_ring_size, 256);  // untouched keys keep the preset's values

  const model::CpuCosts c = load_cpu_preset("arm-cortex-a5", "per_rx_frame = \"12us\"", shipped());
  EXPECT_EQ(c.per_rx_frame, Duration::us(12));
  EXPECT_EQ(c.per_tx_frame, Duration::us(10));
}

TEST(Presets, UnknownKeysAndBadValuesAreErrorsWithPositions) {
  EXPECT_EQ(error_of([] { nic("stmmac", "bqll = true"); }),
            "<overrides>:1:1: bqll: unknown key (did you mean 'bql'?)");
  EXPECT_EQ(error_of([] { nic("stmmac", "\n\ntx_coalesce.usec = \"5us\""); }),
            "<overrides>:3:13: tx_coalesce.usec: unknown key (did you mean 'tx_coalesce.usecs'?)");
  EXPECT_EQ(error_of([] { nic("stmmac", "bql = \"yes\""); }),
            "<overrides>:1:1: bql: expected a boolean, got \"yes\"");
  EXPECT_EQ(error_of([] { nic("stmmac", "tx_coal_timer = 40"); }),
            "<overrides>:1:1: tx_coal_timer: expected a duration with a unit (ns, us, ms, s), got "
            "40 (write it as a string, e.g. \"5ms\")");
  EXPECT_EQ(error_of([] { nic("stmmac", "tx_coal_timer = \"40\""); }),
            "<overrides>:1:1: tx_coal_timer: expected a duration with a unit (ns, us, ms, s), got "
            "'40'");
  EXPECT_EQ(error_of([] { nic("stmmac", "tx_completion = \"napi\""); }),
            "<overrides>:1:1: tx_completion: expected one of irq, stmmac_2014, stmmac_modern, got "
            "\"napi\"");
  EXPECT_EQ(error_of([] { nic("stmmac", "tx_coalesce = 5"); }),
            "<overrides>:1:1: tx_coalesce: expected a table, got 5");
  EXPECT_EQ(error_of([] { nic("stmmac", "model = \"usb\""); }),
            "<overrides>:1:1: model: is fixed by the preset and cannot be overridden (choose "
            "another preset)");
  EXPECT_EQ(error_of([] { nic("stmmac", "bql = "); }).substr(0, 16), "<overrides>:1:7:");
  EXPECT_EQ(error_of([] { load_cpu_preset("x86-desktop", "per_interrupt = \"1\"", shipped()); }),
            "<overrides>:1:1: per_interrupt: expected a duration with a unit (ns, us, ms, s), got "
            "'1'");
  const std::string unknown = error_of([] { nic("e1000"); });
  EXPECT_EQ(unknown.substr(0, unknown.find("; searched")),
            "<input>: nic: unknown nic preset 'e1000' (available: ax88178, ax88772, generic-10g, "
            "generic-1g, smsc95xx, stmmac");
  EXPECT_EQ(error_of([] { nic("../etc/passwd"); }),
            "<input>: nic: invalid preset name '../etc/passwd' (letters, digits, '.', '_', '-'; or "
            "a path ending in .toml)");
}

// Params::validate() failures land on the key that set the value: the override line, or the
// preset file's line when the preset set it.
TEST(Presets, ValidationErrorsMapBackToTheKeyThatSetTheValue) {
  EXPECT_EQ(error_of([] { nic("stmmac", "tx_wake_free = 10"); }),
            "<overrides>:1:1: tx_wake_free: must be >= tx_stop_free, got 10");
  // tx_ring_size = 32 makes the preset's tx_wake_free = 64 invalid: reported in the preset.
  EXPECT_EQ(error_of([] { nic("stmmac", "tx_ring_size = 32"); }),
            line_of(preset_file("nic", "stmmac"), "tx_wake_free =") +
                ": tx_wake_free: must be < tx_ring_size (else the queue never wakes), got 64 (nic "
                "preset 'stmmac', " +
                preset_file("nic", "stmmac") + ")");
  EXPECT_EQ(error_of([] { nic("stmmac", "[dql]\nmin_limit = \"2KiB\"\nmax_limit = \"1KiB\""); }),
            "<overrides>:3:1: dql.max_limit: must be >= min_limit (2048), got 1024");
  EXPECT_EQ(
      error_of([] { nic("smsc95xx", "rx_urb_size = \"1KiB\""); }),
      "<overrides>:1:1: rx_urb_size: must hold a full-size frame (1528 bytes on the USB), got "
      "1024");
  // A dotted key is located at its last part.
  EXPECT_EQ(error_of([] { nic("stmmac", "rx_coalesce.frames = 0\nrx_coalesce.usecs = \"0us\""); }),
            "<overrides>:1:13: rx_coalesce.frames: usecs and frames are both 0 (illegal in ethtool "
            "-C; use frames = 1 for no coalescing)");
  EXPECT_EQ(error_of([] { load_cpu_preset("x86-core2", "copy_ps_per_byte = -1", shipped()); }),
            "<overrides>:1:1: copy_ps_per_byte: CPU cost must be >= 0");
}

class TempPresets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("nicsim_presets_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "nic");
    std::filesystem::create_directories(dir_ / "cpu");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& rel, const std::string& text) {
    const auto p = dir_ / rel;
    std::ofstream(p) << text;
    return p.string();
  }
  PresetSearch search() const { return PresetSearch::only({dir_.string()}); }
  std::filesystem::path dir_;
};

TEST_F(TempPresets, PresetFileErrorsNameThePresetFile) {
  const std::string bad = write("nic/bad.toml",
                                "model = \"platform\"\ndescription = \"x\"\n"
                                "max_link_rate = \"1Gbit\"\ntx_ring_size = [\n");
  EXPECT_EQ(error_of([&] { load_nic_preset("bad", "", search()); }).substr(0, bad.size() + 5),
            bad + ":4:18");
  const std::string nolink =
      write("nic/nolink.toml", "model = \"platform\"\ndescription = \"x\"\n");
  EXPECT_EQ(error_of([&] { load_nic_preset("nolink", "", search()); }),
            nolink + ": max_link_rate: required in a nic preset");
  const std::string nomodel = write("nic/nomodel.toml", "description = \"x\"\n");
  EXPECT_EQ(error_of([&] { load_nic_preset("nomodel", "", search()); }),
            nomodel + ":1:1: model: required");
  const std::string wrong = write("nic/wrong.toml", "model = \"pci\"\ndescription = \"x\"\n");
  EXPECT_EQ(error_of([&] { load_nic_preset("wrong", "", search()); }),
            wrong + ":1:1: model: expected one of platform, usb, got \"pci\"");
  const std::string typo = write("nic/typo.toml",
                                 "model = \"usb\"\ndescription = \"x\"\nmax_link_rate = "
                                 "\"100Mbit\"\nchip = \"smsc95xx\"\ndriver = \"freebsd\"\n"
                                 "turbo = true\n");
  EXPECT_EQ(error_of([&] { load_nic_preset("typo", "", search()); }),
            typo + ":6:1: turbo: unknown key (did you mean 'turbo_mode'?)");
  const std::string cpu =
      write("cpu/partial.toml", "description = \"x\"\nper_interrupt = \"1us\"\n");
  EXPECT_EQ(error_of([&] { load_cpu_preset("partial", "", search()); }),
            cpu + ": per_poll: required in a cpu preset (every cost must be stated)");
}

TEST(Presets, DumpListsEveryKeyWithUnits) {
  const std::string d = dump_nic(nic("stmmac"));
  EXPECT_NE(d.find("max_link_rate = \"1Gbit\"\n"), std::string::npos);
  EXPECT_NE(d.find("bql = true\n"), std::string::npos);
  EXPECT_NE(d.find("tx_coal_timer = \"40ms\"\n"), std::string::npos);
  EXPECT_NE(d.find("rx_coalesce.usecs = \"391.7us\"\n"), std::string::npos);
  EXPECT_NE(d.find("tx_completion = \"stmmac_2014\"\n"), std::string::npos);
  for (const std::string& k : nic_keys(NicModel::kPlatform)) {
    EXPECT_NE(("\n" + d).find("\n" + k + " = "), std::string::npos) << k;
  }
  // Re-applying the dump as overrides gives an equal configuration.
  EXPECT_EQ(nic("stmmac", d), nic("stmmac"));
  const NicConfig u = nic("smsc95xx", "driver = \"linux_usbnet\"\nturbo_mode = false");
  const std::string du = dump_nic(u);
  EXPECT_NE(du.find("turbo_mode = false\n"), std::string::npos);
  EXPECT_EQ(du.find("rx_burst"), std::string::npos);  // not an SMSC key
  EXPECT_EQ(nic("smsc95xx", du), u);
  EXPECT_FALSE(nic("smsc95xx", du) == nic("smsc95xx"));
  const std::string dc = dump_cpu(load_cpu_preset("arm-cortex-a5", "", shipped()));
  EXPECT_NE(dc.find("per_rx_frame = \"10us\"\n"), std::string::npos);
  EXPECT_NE(dc.find("copy_ps_per_byte = 1250\n"), std::string::npos);
}

// --- calibration against the seeds (bands, not exact values) -----------------------------------

// Saturates a NIC's receive side with back-to-back frames of `len` bytes at `rate` and counts
// the frames delivered to the host in [warmup, warmup + 1 s).
class RxSaturation : public model::NicSink {
 public:
  RxSaturation(const NicConfig& nic, const model::CpuCosts& cpu, Rate rate)
      : in_({.rate = rate}), out_({.rate = rate}) {
    if (nic.model == NicModel::kUsb) {
      nic_ = std::make_unique<model::UsbNic>(nic.usb, QdiscConfig{}.build(), cpu);
    } else {
      nic_ = std::make_unique<model::PlatformNic>(nic.platform, QdiscConfig{}.build(), cpu);
    }
    nic_->attach(&out_, &in_, &cpu_, this);
  }
  void deliver(Packet&& /*frame*/, Time now) override {
    if (now >= kWarmup && now < kWarmup + Duration::s(1)) {
      ++delivered_;
    }
  }
  void tx_released(const model::TxRelease& /*r*/, Time /*now*/) override {}

  uint64_t frames_per_second(uint32_t len) {
    const Time end = kWarmup + Duration::s(1);
    Time now;
    uint64_t id = 0;
    while (now < end) {
      while (in_.free_at(now) <= now) {
        Packet p;
        p.id = ++id;
        p.len = len;
        in_.transmit(std::move(p), now);
      }
      Time next = in_.free_at(now);
      if (auto t = nic_->next_event(); t && *t < next) {
        next = *t;
      }
      now = max(now, next);
      nic_->advance(now);
      while (out_.pop_arrived(now)) {
      }
    }
    return delivered_;
  }

 private:
  static constexpr Time kWarmup = Time::from_ns(200'000'000);
  model::Wire in_;
  model::Wire out_;
  model::Cpu cpu_;
  std::unique_ptr<model::Nic> nic_;
  uint64_t delivered_ = 0;
};

// Seed S2 (§1 S2.1-S2.3, §5.4): FreeBSD axe on a 2.8 GHz Core 2 Duo receives 50 Mbit/s with a
// 2 KiB RX burst and 220 Mbit/s with 16 KiB (4.4x). The shipped presets (ax88178 + x86-core2,
// FreeBSD completion latency calibrated on S2, docs/presets.md) give one 1514-byte frame per
// 250 us transfer cycle (48 Mbit/s of frames) and ten per 500 us (242 Mbit/s). Pure RX here: no
// ACKs compete for the CPU.
TEST(PresetCalibration, SeedS2AsixBurstThroughput) {
  const model::CpuCosts core2 = load_cpu_preset("x86-core2", "", shipped());
  const uint64_t k2 = RxSaturation(nic("ax88178", "rx_burst = \"2KiB\""), core2, Rate::gbit(1))
                          .frames_per_second(1514);
  const uint64_t k16 = RxSaturation(nic("ax88178", "rx_burst = \"16KiB\""), core2, Rate::gbit(1))
                           .frames_per_second(1514);
  RecordProperty("frames_per_s_2KiB", std::to_string(k2));
  RecordProperty("frames_per_s_16KiB", std::to_string(k16));
  EXPECT_GE(k2, 3'600u);    // 44 Mbit/s of 1514-byte frames
  EXPECT_LE(k2, 4'600u);    // 56 Mbit/s
  EXPECT_GE(k16, 16'500u);  // 200 Mbit/s
  EXPECT_LE(k16, 21'000u);  // 254 Mbit/s
  EXPECT_GT(static_cast<double>(k16) / static_cast<double>(k2), 4.0);
}

// Seed S1's direction (§1 S1.1-S1.8): turbo mode raises the frame rate the SMSC adapter
// delivers under FreeBSD; with turbo it keeps up with a 100 Mbit/s link.
TEST(PresetCalibration, SeedS1TurboRaisesThroughput) {
  const model::CpuCosts arm = load_cpu_preset("arm-cortex-a5", "", shipped());
  const uint64_t off = RxSaturation(nic("smsc95xx", "turbo_mode = false"), arm, Rate::mbit(100))
                           .frames_per_second(1514);
  const uint64_t on = RxSaturation(nic("smsc95xx", "turbo_mode = true"), arm, Rate::mbit(100))
                          .frames_per_second(1514);
  RecordProperty("frames_per_s_turbo_off", std::to_string(off));
  RecordProperty("frames_per_s_turbo_on", std::to_string(on));
  EXPECT_LT(off, 5'000u);
  EXPECT_GT(on, 7'800u);  // line rate: 8,127 frames/s
  EXPECT_GT(static_cast<double>(on) / static_cast<double>(off), 1.6);
}

}  // namespace
}  // namespace nicsim::config

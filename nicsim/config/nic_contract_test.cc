// The Nic contract (nicsim/model/nic.h) over every shipped NIC preset × driver: every TX
// release carries the identity of the packet the stack handed to send() — its id, flow, metadata
// handle, which GSO segments it covers and their bytes — so a back-end can give the socket its
// bytes back (TCP Small Queues, docs/models/usb_nic.md) and map each frame to its TCP segment.
// A release that loses `meta` stalls a TSQ-limited sender for good (issue 9: linux_usbnet sent
// ~32 KB of TCP and stopped).
//
// The NICs are built from presets/nic/*.toml as a scenario host builds them
// (config::make_host_nic), so this test lives in config, above the models it drives.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "nicsim/config/host_nic.h"
#include "nicsim/config/presets.h"
#include "nicsim/config/scenario.h"
#include "nicsim/core/gso.h"
#include "nicsim/model/nic.h"
#include "nicsim/model/wire.h"

namespace nicsim::config {
namespace {

const PresetSearch& shipped() {
  static const PresetSearch s = PresetSearch::only({NICSIM_TEST_PRESETS_DIR});
  return s;
}

// One NIC under test: a shipped preset with the overrides that select a driver path.
struct Variant {
  std::string preset;
  std::string overrides;  // TOML, preset keys
  std::string name;       // the test's name: preset and variant, [A-Za-z0-9_]
};
void PrintTo(const Variant& v, std::ostream* os) { *os << v.preset << " [" << v.overrides << "]"; }

Variant variant(const std::string& preset, const std::string& overrides, const std::string& tag) {
  std::string name = preset + "_" + tag;
  std::replace_if(
      name.begin(), name.end(), [](char c) { return std::isalnum(c) == 0; }, '_');
  return Variant{preset, overrides, name};
}

// Every preset; USB presets under both drivers (usbnet: one URB per frame; uether: batched
// transfers); platform presets with and without TSO (the hardware cuts the frames, or software
// GSO does before the ring).
std::vector<Variant> all_variants() {
  std::vector<Variant> out;
  for (const std::string& name : shipped().list("nic")) {
    const NicConfig nic = load_nic_preset(name, "", shipped());
    if (nic.model == NicModel::kUsb) {
      out.push_back(variant(name, "driver = \"linux_usbnet\"", "linux_usbnet"));
      out.push_back(variant(name, "driver = \"freebsd\"", "freebsd"));
    } else {
      out.push_back(variant(name, "tso = true", "tso"));
      out.push_back(variant(name, "tso = false", "software_gso"));
    }
  }
  return out;
}

struct Recorder final : model::NicSink {
  std::vector<model::TxRelease> releases;
  void deliver(Packet&&, Time) override {}
  void tx_released(const model::TxRelease& r, Time) override { releases.push_back(r); }
};

// A packet the test hands to send(): its identity, which its releases must carry.
struct Sent {
  uint64_t id = 0;
  uint32_t flow_id = 0;
  uint32_t meta = 0;
  uint32_t len = 0;
  uint16_t segs = 1;
  uint16_t gso_size = 0;

  Packet packet() const {
    Packet p;
    p.id = id;
    p.flow_id = flow_id;
    p.flow_hash = flow_id;
    p.meta = meta;
    p.len = len;
    p.gso_segs = segs;
    p.gso_size = gso_size;
    return p;
  }
};

// A mix of what a host stack sends: full-size frames, small frames (ACKs, pings) and GSO
// super-packets of 2..8 segments (full ones and a short tail), each with its own metadata
// handle. Lengths are skb->len with the 14-byte Ethernet header, within a 1500-byte MTU.
std::vector<Sent> traffic() {
  std::vector<Sent> out;
  uint64_t id = 0;
  for (int round = 0; round < 12; ++round) {
    const uint16_t segs = static_cast<uint16_t>(2 + round % 7);
    for (int k = 0; k < 3; ++k) {
      Sent p;
      p.id = ++id;
      p.flow_id = static_cast<uint32_t>(1 + round % 3);
      p.meta = static_cast<uint32_t>(1000 + id);
      if (k == 0) {
        p.len = 1514;
      } else if (k == 1) {
        p.len = 66;
      } else {
        p.segs = segs;
        p.gso_size = 1514;
        p.len = 1514 * (segs - 1) + 66 + 100 * static_cast<uint32_t>(round);
      }
      out.push_back(p);
    }
  }
  return out;
}

struct Outcome {
  std::map<uint64_t, Sent> accepted;
  std::vector<model::TxRelease> releases;
};

// Sends the traffic in bursts (so rings, URB queues and batches fill) and runs the NIC, its
// outgoing wire and the idle incoming wire until nothing is left to do.
Outcome run(const Variant& v) {
  HostConfig host;
  host.name = "a";
  host.nic = load_nic_preset(v.preset, v.overrides, shipped());
  host.cpu = load_cpu_preset("x86-desktop", "", shipped());
  std::unique_ptr<model::Nic> nic = make_host_nic(host);
  model::Wire out({.rate = host.nic.max_link_rate, .delay = Duration::us(5)});
  model::Wire in({.rate = host.nic.max_link_rate});
  model::Cpu cpu;
  Recorder sink;
  nic->attach(&out, &in, &cpu, &sink);

  Outcome o;
  Time now = Time::zero();
  auto run_until = [&](Time end) {
    while (true) {
      std::optional<Time> t = nic->next_event();
      if (const std::optional<Time> w = out.next_ready(); w && (!t || *w < *t)) {
        t = w;
      }
      if (!t || *t > end) {
        break;
      }
      now = max(now, *t);
      nic->advance(now);
      while (out.pop_arrived(now)) {
      }
    }
    now = max(now, end);
  };
  const std::vector<Sent> packets = traffic();
  for (size_t i = 0; i < packets.size(); ++i) {
    if (i % 9 == 0) {
      run_until(now + Duration::us(300));
    }
    const Sent& s = packets[i];
    if (nic->send(s.packet(), now) != Verdict::kDropped) {
      o.accepted[s.id] = s;
    }
  }
  run_until(now + Duration::s(1));
  o.releases = std::move(sink.releases);
  return o;
}

// A release of an accepted packet names it as sent: flow, metadata handle, segments inside it.
::testing::AssertionResult names_its_packet(const model::TxRelease& r, const Sent& s) {
  if (r.meta != s.meta || r.flow_id != s.flow_id || r.segs < 1 || r.gso_index + r.segs > s.segs) {
    return ::testing::AssertionFailure()
           << "packet " << s.id << " (flow " << s.flow_id << ", meta " << s.meta << ", " << s.segs
           << " segments) released as flow " << r.flow_id << ", meta " << r.meta << ", segments ["
           << r.gso_index << ", +" << r.segs << ")";
  }
  return ::testing::AssertionSuccess();
}

// The releases of one packet (sorted by gso_index) tile its segments [0, segs) exactly once,
// each carries the bytes of the segments it covers, and only the one ending the packet is
// marked last_segment.
::testing::AssertionResult tile_the_packet(const std::vector<model::TxRelease>& rs, const Sent& s) {
  uint16_t next = 0;
  for (const model::TxRelease& r : rs) {
    uint32_t bytes = 0;
    for (uint16_t i = r.gso_index; i < r.gso_index + r.segs; ++i) {
      bytes += gso_segment_len(s.len, s.segs, s.gso_size, i);
    }
    const uint16_t end = static_cast<uint16_t>(r.gso_index + r.segs);
    if (r.gso_index != next || r.bytes != bytes || r.last_segment != (end == s.segs)) {
      return ::testing::AssertionFailure()
             << "packet " << s.id << " (" << s.len << " B, " << s.segs << " segments): release of "
             << "segments [" << r.gso_index << ", " << end << ") with " << r.bytes << " B, last "
             << r.last_segment << "; expected segment " << next << " with " << bytes << " B";
    }
    next = end;
  }
  if (next != s.segs) {
    return ::testing::AssertionFailure()
           << "packet " << s.id << ": " << next << " of " << s.segs << " segments released";
  }
  return ::testing::AssertionSuccess();
}

class NicContract : public ::testing::TestWithParam<Variant> {};

TEST_P(NicContract, EveryReleaseCarriesThePacketsIdentity) {
  const Outcome o = run(GetParam());
  ASSERT_FALSE(o.accepted.empty());
  std::map<uint64_t, std::vector<model::TxRelease>> by_id;
  for (const model::TxRelease& r : o.releases) {
    const auto it = o.accepted.find(r.packet_id);
    ASSERT_NE(it, o.accepted.end()) << "a release of a packet never accepted: " << r.packet_id;
    ASSERT_TRUE(names_its_packet(r, it->second));
    by_id[r.packet_id].push_back(r);
  }
  for (auto& [id, s] : o.accepted) {
    std::vector<model::TxRelease>& rs = by_id[id];
    std::sort(rs.begin(), rs.end(),
              [](const auto& a, const auto& b) { return a.gso_index < b.gso_index; });
    ASSERT_TRUE(tile_the_packet(rs, s));
  }
}

INSTANTIATE_TEST_SUITE_P(ShippedPresets, NicContract, ::testing::ValuesIn(all_variants()),
                         [](const ::testing::TestParamInfo<Variant>& param) {
                           return param.param.name;
                         });

TEST(NicContract, CoversEveryShippedPresetAndBothUsbDrivers) {
  // A new preset joins the contract by being shipped; this keeps the list from going empty.
  const std::vector<Variant> v = all_variants();
  EXPECT_EQ(v.size(), 2 * shipped().list("nic").size());
  EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](const Variant& x) {
    return x.overrides == "driver = \"linux_usbnet\"";
  }));
}

}  // namespace
}  // namespace nicsim::config

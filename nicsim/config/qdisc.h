#pragma once
// A host's root qdisc as configured in a scenario: kind + the algorithm's Params (an HTB tree
// with its classes and leaf qdiscs), built into an AnyQueue by the back-ends.
//
// Kinds and keys (tc names; units required; defaults are the algorithms' Linux defaults):
//   pfifo       limit (packets)
//   bfifo       limit (bytes, default txqueuelen x psched_mtu = 1000 x 1514 B)
//   pfifo_fast  limit (packets), per_band_limit, priomap (16 bands 0..2)
//   codel       limit, target, interval, ecn, ce_threshold
//   fq_codel    limit, flows, memory_limit, drop_batch, quantum, target, interval, ecn,
//               ce_threshold
//   tbf         rate, burst, limit | latency, peakrate, mtu
//   htb         default ("1:20"), r2q, direct_qlen, hysteresis, and [[class]] entries with
//               id ("1:10"), parent, rate, ceil, burst, cburst, mtu, prio, quantum, qdisc (the
//               leaf: any kind but htb; default pfifo limit 1000)
// Classification into HTB classes follows the algorithm's default (skb->priority naming a leaf
// 1:1..1:f, else the default class).

#include <cstdint>
#include <string>
#include <vector>

#include "nicsim/algo/codel.h"
#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/htb.h"
#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/algo/tbf.h"
#include "nicsim/core/element.h"
#include "nicsim/core/rate.h"

namespace nicsim::config {

enum class QdiscKind : uint8_t { kPfifo, kBfifo, kPfifoFast, kCodel, kFqCodel, kTbf, kHtb };
const char* to_string(QdiscKind k);

struct QdiscConfig;

struct HtbClassConfig {
  uint32_t id = 0;      // minor id: "1:10" is 0x10
  uint32_t parent = 0;  // 0 = the root
  Rate rate{};
  Rate ceil{};         // zero = rate
  int64_t burst = 0;   // bytes; 0 = tc default
  int64_t cburst = 0;  // bytes; 0 = tc default
  int64_t mtu = 1600;  // tc mtu for the default bursts
  int64_t prio = 0;
  int64_t quantum = 0;            // bytes; 0 = rate / r2q
  std::vector<QdiscConfig> leaf;  // empty: pfifo 1000 (qdisc_create_dflt); else one qdisc

  bool operator==(const HtbClassConfig& o) const;
};

struct QdiscConfig {
  QdiscKind kind = QdiscKind::kPfifoFast;  // Linux default_qdisc (docs/mechanisms §9.4)
  algo::Fifo::Params fifo;                 // pfifo, bfifo
  algo::PfifoFast::Params pfifo_fast;
  algo::Codel::Params codel;
  algo::FqCodel::Params fq_codel;
  algo::Tbf::Params tbf;
  algo::Htb::Params htb;  // classify left empty
  std::vector<HtbClassConfig> classes;

  // A fresh element (throws InvalidParams; the loader has validated it already).
  AnyQueue build() const;
  // TCQ_F_CAN_BYPASS: pfifo_fast, fq_codel and pfifo/bfifo (with room for a packet) let an
  // empty qdisc be bypassed; codel, tbf and htb do not (§9.4, §10).
  bool can_bypass() const;
  bool operator==(const QdiscConfig& o) const;
};

// "1:10" for minor 0x10.
std::string htb_class_id(uint32_t minor);

}  // namespace nicsim::config

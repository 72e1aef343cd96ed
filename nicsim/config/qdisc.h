#pragma once
// A host's root qdisc as configured in a scenario: its kind and that kind's Params (an HTB tree
// with its classes and leaf qdiscs), built into an AnyQueue by the back-ends.
//
// Every kind is one row of the registry in qdisc_kinds.cc (name, keys, defaults, validate,
// build, bypass, counters); nothing else in the tree switches on the kind. docs/qdiscs.md says
// how to add one. Kinds and keys (tc names; units required; defaults are the algorithms' Linux
// defaults): docs/scenarios.md, "Qdiscs".
// Classification into HTB classes follows the algorithm's default (skb->priority naming a leaf
// 1:1..1:f, else the default class).

#include <any>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nicsim/algo/htb.h"
#include "nicsim/core/element.h"
#include "nicsim/core/rate.h"

namespace nicsim::config {

class QdiscConfig;
struct QdiscKind;  // a registry row (qdisc_kind.h)

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

  // The algorithm's ClassParams (without the leaf qdisc).
  algo::Htb::ClassParams class_params() const;
  bool operator==(const HtbClassConfig& o) const;
};

// The params of kind "htb": the algorithm's (classify left empty) and the class tree in the
// order written (parents first).
struct HtbConfig {
  algo::Htb::Params htb;
  std::vector<HtbClassConfig> classes;
};

// One kind-specific counter of a built qdisc, named as `tc -s qdisc show` names it.
struct QdiscCounter {
  std::string name;
  uint64_t value = 0;
  bool operator==(const QdiscCounter&) const = default;
};

class QdiscConfig {
 public:
  // pfifo_fast with its defaults: Linux default_qdisc (docs/mechanisms/qdisc-basics.md §9.4).
  QdiscConfig();
  // The kind `name` with its defaults. Throws std::invalid_argument for an unknown kind.
  static QdiscConfig of_kind(std::string_view name);

  const std::string& kind() const;  // "fq_codel"
  const QdiscKind& row() const { return *kind_; }

  // The kind's Params (algo::FqCodel::Params for "fq_codel", HtbConfig for "htb", ...; the
  // registry row names the type). Throws std::bad_any_cast for another type.
  template <class P>
  P& params() {
    return std::any_cast<P&>(params_);
  }
  template <class P>
  const P& params() const {
    return std::any_cast<const P&>(params_);
  }

  // A fresh element (throws InvalidParams; the loader has validated it already).
  AnyQueue build() const;
  // TCQ_F_CAN_BYPASS: whether an empty qdisc of this configuration may be bypassed
  // (docs/mechanisms/qdisc-basics.md, "Qdisc bypass").
  bool can_bypass() const;
  // The kind's own counters of `q` (built from this configuration), in tc -s order; empty for
  // a kind that has only the common QueueStats.
  std::vector<QdiscCounter> counters(AnyQueue& q) const;
  bool operator==(const QdiscConfig& o) const;

 private:
  QdiscConfig(const QdiscKind& kind, std::any params);

  const QdiscKind* kind_;
  std::any params_;
};

// The registered kind names in registry order ("pfifo", "bfifo", "pfifo_fast", ...).
std::vector<std::string> qdisc_kind_names();

// "1:10" for minor 0x10.
std::string htb_class_id(uint32_t minor);

}  // namespace nicsim::config

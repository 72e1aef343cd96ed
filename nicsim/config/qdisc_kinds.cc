// The qdisc registry: one row per kind (docs/qdiscs.md). A row says everything the rest of the
// tree knows about its kind: the tc name, the Params type and its defaults, the scenario keys,
// validation, how to build the element, whether an empty one may be bypassed
// (TCQ_F_CAN_BYPASS, docs/mechanisms/qdisc-basics.md "Qdisc bypass") and its own tc -s
// counters.

#include <algorithm>
#include <string>
#include <vector>

#include "nicsim/algo/codel.h"
#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/htb.h"
#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/algo/tbf.h"
#include "nicsim/config/qdisc_kind.h"

namespace nicsim::config {

using detail::Field;
using detail::Kind;
using detail::qfield;
using detail::simple_kind;
using detail::unset_if_zero;

namespace {

constexpr int64_t kTxQueueLen = 1000;  // DEFAULT_TX_QUEUE_LEN (include/linux/netdevice.h)
constexpr int64_t kPschedMtu = 1514;   // psched_mtu(dev) = 1500 + 14 on Ethernet

using Fifo = algo::Fifo::Params;
using PfifoFast = algo::PfifoFast::Params;
using Codel = algo::Codel::Params;
using FqCodel = algo::FqCodel::Params;
using Tbf = algo::Tbf::Params;
using Fq = algo::Fq::Params;

// CoDel's control-law counters (tc -s: "dropped", "ecn_mark", "ce_mark", "maxpacket").
void add_codel_counters(std::vector<QdiscCounter>& out, const algo::CodelStats& c) {
  out.push_back({"codel_drop_count", c.drop_count});
  out.push_back({"ecn_mark", c.ecn_mark});
  out.push_back({"ce_mark", c.ce_mark});
  out.push_back({"maxpacket", c.maxpacket});
}

// priomap: 16 bands (one per skb->priority 0..15), each 0..2 (prio2band in sch_generic.c).
std::optional<std::string> check_priomap(const detail::Value& v) {
  const auto& l = std::get<std::vector<int64_t>>(v);
  if (l.size() != 16) {
    return "expected 16 bands (one per skb->priority 0..15), got " + std::to_string(l.size());
  }
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] < 0 || l[i] > 2) {
      return "entry " + std::to_string(i) + " must be a band 0..2, got " + std::to_string(l[i]);
    }
  }
  return std::nullopt;
}

// The CoDel control-law keys shared by codel and fq_codel (tc-codel(8), tc-fq_codel(8)), after
// the kind's own keys.
template <class P>
std::vector<Field<QdiscConfig>> with_codel_keys(std::vector<Field<QdiscConfig>> own) {
  own.push_back(qfield<P>("target", Kind::kDuration, [](P& p) -> Duration& { return p.target; }));
  own.push_back(
      qfield<P>("interval", Kind::kDuration, [](P& p) -> Duration& { return p.interval; }));
  own.push_back(qfield<P>("ecn", Kind::kBool, [](P& p) -> bool& { return p.ecn; }));
  own.push_back(qfield<P>("ce_threshold", Kind::kDuration,
                          [](P& p) -> std::optional<Duration>& { return p.ce_threshold; }));
  return own;
}

QdiscKind pfifo() {
  return simple_kind<algo::Fifo>(
      "pfifo",
      [] {  // sch_fifo.c fifo_init: limit = tx_queue_len packets
        return Fifo{.limit_packets = kTxQueueLen, .limit_bytes = 0};
      },
      {qfield<Fifo>("limit", Kind::kInt, [](Fifo& p) -> int64_t& { return p.limit_packets; })},
      [](const Fifo& p) { return p.limit_packets >= 1; });
}

QdiscKind bfifo() {
  return simple_kind<algo::Fifo>(
      "bfifo",
      [] {  // fifo_init: limit = tx_queue_len * psched_mtu(dev) bytes
        return Fifo{.limit_packets = 0, .limit_bytes = kTxQueueLen * kPschedMtu};
      },
      {qfield<Fifo>("limit", Kind::kBytes, [](Fifo& p) -> int64_t& { return p.limit_bytes; },
                    {"limit_bytes", "limit"})},
      [](const Fifo& p) { return p.limit_bytes >= kPschedMtu; });
}

QdiscKind pfifo_fast() {
  Field<QdiscConfig> priomap =
      qfield<PfifoFast>("priomap", Kind::kIntList,
                        [](PfifoFast& p) -> std::array<int32_t, 16>& { return p.priomap; });
  priomap.check = check_priomap;
  return simple_kind<algo::PfifoFast>(
      "pfifo_fast", [] { return PfifoFast{}; },
      {qfield<PfifoFast>("limit", Kind::kInt, [](PfifoFast& p) -> int64_t& { return p.limit; }),
       qfield<PfifoFast>("per_band_limit", Kind::kBool,
                         [](PfifoFast& p) -> bool& { return p.per_band_limit; }),
       priomap},
      [](const PfifoFast&) { return true; });
}

QdiscKind codel() {
  QdiscKind k = simple_kind<algo::Codel>(
      "codel", [] { return Codel{}; },
      with_codel_keys<Codel>(
          {qfield<Codel>("limit", Kind::kInt, [](Codel& p) -> int64_t& { return p.limit; })}),
      [](const Codel&) { return false; });
  k.counters = [](AnyQueue& q) {
    const auto& s = q.get<algo::Codel>()->stats();
    std::vector<QdiscCounter> out = {{"drop_overlimit", s.drop_overlimit}};
    add_codel_counters(out, s.codel);
    return out;
  };
  return k;
}

QdiscKind fq_codel() {
  QdiscKind k = simple_kind<algo::FqCodel>(
      "fq_codel", [] { return FqCodel{}; },
      with_codel_keys<FqCodel>(
          {qfield<FqCodel>("limit", Kind::kInt, [](FqCodel& p) -> int64_t& { return p.limit; }),
           qfield<FqCodel>("flows", Kind::kInt, [](FqCodel& p) -> int64_t& { return p.flows; }),
           qfield<FqCodel>("memory_limit", Kind::kBytes,
                           [](FqCodel& p) -> int64_t& { return p.memory_limit; }),
           qfield<FqCodel>("drop_batch", Kind::kInt,
                           [](FqCodel& p) -> int64_t& { return p.drop_batch; }),
           qfield<FqCodel>("quantum", Kind::kBytes,
                           [](FqCodel& p) -> int64_t& { return p.quantum; })}),
      [](const FqCodel& p) { return p.limit >= 1; });
  k.counters = [](AnyQueue& q) {
    const auto& s = q.get<algo::FqCodel>()->stats();
    std::vector<QdiscCounter> out = {{"drop_overlimit", s.drop_overlimit},
                                     {"drop_overmemory", s.drop_overmemory},
                                     {"new_flow_count", s.new_flow_count}};
    add_codel_counters(out, s.codel);
    return out;
  };
  return k;
}

QdiscKind tbf() {
  QdiscKind k = simple_kind<algo::Tbf>(
      "tbf", [] { return Tbf{}; },
      {unset_if_zero(qfield<Tbf>("rate", Kind::kRate, [](Tbf& p) -> Rate& { return p.rate; })),
       unset_if_zero(
           qfield<Tbf>("burst", Kind::kBytes, [](Tbf& p) -> int64_t& { return p.burst; })),
       unset_if_zero(
           qfield<Tbf>("limit", Kind::kBytes, [](Tbf& p) -> int64_t& { return p.limit; })),
       unset_if_zero(
           qfield<Tbf>("latency", Kind::kDuration, [](Tbf& p) -> Duration& { return p.latency; })),
       unset_if_zero(
           qfield<Tbf>("peakrate", Kind::kRate, [](Tbf& p) -> Rate& { return p.peakrate; })),
       unset_if_zero(qfield<Tbf>("mtu", Kind::kBytes, [](Tbf& p) -> int64_t& { return p.mtu; }))},
      [](const Tbf&) { return false; });
  k.counters = [](AnyQueue& q) {
    return std::vector<QdiscCounter>{
        {"dropped_too_big", q.get<algo::Tbf>()->stats().dropped_too_big}};
  };
  return k;
}

QdiscKind htb() {
  using H = HtbConfig;
  QdiscKind k;
  k.name = "htb";
  k.defaults = [] { return std::any(HtbConfig{}); };
  k.fields = {
      qfield<H>("r2q", Kind::kInt, [](H& h) -> int64_t& { return h.htb.r2q; }),
      qfield<H>("direct_qlen", Kind::kInt, [](H& h) -> int64_t& { return h.htb.direct_qlen; }),
      qfield<H>("hysteresis", Kind::kBool, [](H& h) -> bool& { return h.htb.hysteresis; })};
  k.validate = [](const QdiscConfig& q) { return q.params<H>().htb.validate(); };
  k.build = [](const QdiscConfig& q) {
    const HtbConfig& h = q.params<H>();
    algo::Htb tree(h.htb);
    for (const HtbClassConfig& c : h.classes) {
      algo::Htb::ClassParams cp = c.class_params();
      if (!c.leaf.empty()) {
        cp.leaf = c.leaf.front().build();
      }
      tree.add_class(std::move(cp));
    }
    return AnyQueue(std::move(tree));
  };
  k.can_bypass = [](const QdiscConfig&) { return false; };
  k.counters = [](AnyQueue& q) {
    return std::vector<QdiscCounter>{
        {"direct_packets", q.get<algo::Htb>()->stats().direct_packets}};
  };
  k.can_be_leaf = false;  // not supported as an HTB class's qdisc
  k.tree = detail::htb_tree();
  return k;
}

// fq (tc-fq(8) keywords; sch_fq.c fq_init defaults, docs/algorithms/fq.md). Not a bypass
// kind: "FQ can not use generic TCQ_F_CAN_BYPASS infrastructure" (it has its own fast path).
QdiscKind fq() {
  Field<QdiscConfig> priomap = qfield<Fq>(
      "priomap", Kind::kIntList, [](Fq& p) -> std::array<int32_t, 16>& { return p.priomap; });
  priomap.check = [](const detail::Value& v) -> std::optional<std::string> {
    const auto& l = std::get<std::vector<int64_t>>(v);
    if (l.size() != 16) {
      return "expected 16 bands (one per skb->priority 0..15), got " + std::to_string(l.size());
    }
    return std::nullopt;  // each entry's range: Fq::Params::validate
  };
  Field<QdiscConfig> weights = qfield<Fq>(
      "weights", Kind::kIntList, [](Fq& p) -> std::array<int32_t, 3>& { return p.weights; });
  weights.check = [](const detail::Value& v) -> std::optional<std::string> {
    const auto& l = std::get<std::vector<int64_t>>(v);
    if (l.size() != 3) {
      return "expected 3 weights (bands 0..2), got " + std::to_string(l.size());
    }
    return std::nullopt;
  };
  QdiscKind k = simple_kind<algo::Fq>(
      "fq", [] { return Fq{}; },
      {qfield<Fq>("limit", Kind::kInt, [](Fq& p) -> int64_t& { return p.limit; }),
       qfield<Fq>("flow_limit", Kind::kInt, [](Fq& p) -> int64_t& { return p.flow_limit; }),
       qfield<Fq>("quantum", Kind::kBytes, [](Fq& p) -> int64_t& { return p.quantum; }),
       qfield<Fq>("initial_quantum", Kind::kBytes,
                  [](Fq& p) -> int64_t& { return p.initial_quantum; }),
       unset_if_zero(qfield<Fq>("maxrate", Kind::kRate, [](Fq& p) -> Rate& { return p.maxrate; })),
       qfield<Fq>("buckets", Kind::kInt, [](Fq& p) -> int64_t& { return p.buckets; }),
       qfield<Fq>("refill_delay", Kind::kDuration,
                  [](Fq& p) -> Duration& { return p.refill_delay; }),
       qfield<Fq>("orphan_mask", Kind::kInt, [](Fq& p) -> int64_t& { return p.orphan_mask; }),
       qfield<Fq>("low_rate_threshold", Kind::kRate,
                  [](Fq& p) -> Rate& { return p.low_rate_threshold; }),
       qfield<Fq>("ce_threshold", Kind::kDuration,
                  [](Fq& p) -> std::optional<Duration>& { return p.ce_threshold; }),
       qfield<Fq>("horizon", Kind::kDuration, [](Fq& p) -> Duration& { return p.horizon; }),
       qfield<Fq>("horizon_drop", Kind::kBool, [](Fq& p) -> bool& { return p.horizon_drop; }),
       qfield<Fq>("pacing", Kind::kBool, [](Fq& p) -> bool& { return p.pacing; }),
       unset_if_zero(qfield<Fq>("offload_horizon", Kind::kDuration,
                                [](Fq& p) -> Duration& { return p.offload_horizon; })),
       priomap, weights,
       qfield<Fq>("orphan", Kind::kBool, [](Fq& p) -> bool& { return p.orphan; })},
      [](const Fq&) { return false; });
  // tc -s qdisc show ... fq: "flows N (inactive N throttled N) gc N fastpath N throttled N
  // flows_plimit N pkts_too_long N horizon_drops N horizon_caps N ce_mark N" and per band.
  k.counters = [](AnyQueue& q) {
    const algo::Fq& e = *q.get<algo::Fq>();
    const algo::Fq::Stats& s = e.stats();
    std::vector<QdiscCounter> out = {{"flows", e.flows()},
                                     {"inactive", e.inactive_flows()},
                                     {"throttled_flows", e.throttled_flows()},
                                     {"gc", s.gc_flows},
                                     {"fastpath", s.fastpath_packets},
                                     {"throttled", s.throttled},
                                     {"flows_plimit", s.flows_plimit},
                                     {"pkts_too_long", s.pkts_too_long},
                                     {"horizon_drops", s.horizon_drops},
                                     {"horizon_caps", s.horizon_caps},
                                     {"ce_mark", s.ce_mark}};
    for (int b = 0; b < algo::Fq::kBands; ++b) {
      out.push_back({"band" + std::to_string(b) + "_pkts", e.band_packets(b)});
      out.push_back({"band" + std::to_string(b) + "_drops", s.band_drops[static_cast<size_t>(b)]});
    }
    return out;
  };
  return k;
}

}  // namespace

const std::vector<QdiscKind>& qdisc_kinds() {
  static const std::vector<QdiscKind> kKinds = {pfifo(),    bfifo(), pfifo_fast(), codel(),
                                                fq_codel(), tbf(),   htb(),        fq()};
  return kKinds;
}

const QdiscKind* find_qdisc_kind(std::string_view name) {
  const auto& kinds = qdisc_kinds();
  const auto it =
      std::find_if(kinds.begin(), kinds.end(), [&](const QdiscKind& k) { return k.name == name; });
  return it == kinds.end() ? nullptr : &*it;
}

}  // namespace nicsim::config

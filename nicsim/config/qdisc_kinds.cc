// The qdisc registry: one row per kind (docs/qdiscs.md). A row says everything the rest of the
// tree knows about its kind: the tc name, the Params type and its defaults, the scenario keys,
// validation, how to build the element, whether an empty one may be bypassed
// (TCQ_F_CAN_BYPASS, docs/mechanisms/qdisc-basics.md "Qdisc bypass") and its own tc -s
// counters.

#include <algorithm>
#include <string>
#include <vector>

#include "nicsim/algo/cake.h"
#include "nicsim/algo/codel.h"
#include "nicsim/algo/docsis_pie.h"
#include "nicsim/algo/dualpi2.h"
#include "nicsim/algo/fifo.h"
#include "nicsim/algo/fq.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/algo/fq_pie.h"
#include "nicsim/algo/htb.h"
#include "nicsim/algo/pfifo_fast.h"
#include "nicsim/algo/pie.h"
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

// CAKE (tc-cake(8) keywords; docs/algorithms/cake.md): the shaper, tins, isolation, overhead
// compensation and flags, with tc -s's global lines and per-tin columns as counters.
QdiscKind cake() {
  using P = algo::Cake::Params;
  using algo::Cake;
  using algo::CakeAckFilterMode;
  using algo::CakeAtm;
  using algo::CakeDiffserv;
  using detail::enum_field;
  auto cfield = [](std::string key, auto names, auto member) {
    return enum_field<QdiscConfig>(
        std::move(key),
        names, [member](QdiscConfig & q) -> auto& { return member(q.params<P>()); });
  };
  QdiscKind k = simple_kind<Cake>(
      "cake", [] { return P{}; },
      {unset_if_zero(
           qfield<P>("bandwidth", Kind::kRate, [](P& p) -> Rate& { return p.bandwidth; })),
       cfield("diffserv",
              std::vector<std::pair<std::string, CakeDiffserv>>{
                  {"diffserv3", CakeDiffserv::kDiffserv3},
                  {"diffserv4", CakeDiffserv::kDiffserv4},
                  {"diffserv8", CakeDiffserv::kDiffserv8},
                  {"besteffort", CakeDiffserv::kBesteffort},
                  {"precedence", CakeDiffserv::kPrecedence}},
              [](P& p) -> CakeDiffserv& { return p.diffserv; }),
       cfield("isolation",
              std::vector<std::pair<std::string, Cake::FlowMode>>{
                  {"flowblind", Cake::FlowMode::kFlowblind},
                  {"srchost", Cake::FlowMode::kSrcHost},
                  {"dsthost", Cake::FlowMode::kDstHost},
                  {"hosts", Cake::FlowMode::kHosts},
                  {"flows", Cake::FlowMode::kFlows},
                  {"dual-srchost", Cake::FlowMode::kDualSrcHost},
                  {"dual-dsthost", Cake::FlowMode::kDualDstHost},
                  {"triple-isolate", Cake::FlowMode::kTripleIsolate}},
              [](P& p) -> Cake::FlowMode& { return p.flow_mode; }),
       qfield<P>("rtt", Kind::kDuration, [](P& p) -> Duration& { return p.rtt; }),
       qfield<P>("target", Kind::kDuration,
                 [](P& p) -> std::optional<Duration>& { return p.target; }),
       qfield<P>("overhead", Kind::kInt, [](P& p) -> int64_t& { return p.overhead; }),
       qfield<P>("raw", Kind::kBool, [](P& p) -> bool& { return p.raw; }),
       qfield<P>("mpu", Kind::kInt, [](P& p) -> int64_t& { return p.mpu; }),
       cfield("atm",
              std::vector<std::pair<std::string, CakeAtm>>{
                  {"noatm", CakeAtm::kNone}, {"atm", CakeAtm::kAtm}, {"ptm", CakeAtm::kPtm}},
              [](P& p) -> CakeAtm& { return p.atm; }),
       qfield<P>("ingress", Kind::kBool, [](P& p) -> bool& { return p.ingress; }),
       qfield<P>("wash", Kind::kBool, [](P& p) -> bool& { return p.wash; }),
       qfield<P>("split_gso", Kind::kBool, [](P& p) -> bool& { return p.split_gso; }),
       cfield("ack_filter",
              std::vector<std::pair<std::string, CakeAckFilterMode>>{
                  {"no-ack-filter", CakeAckFilterMode::kNone},
                  {"ack-filter", CakeAckFilterMode::kFilter},
                  {"ack-filter-aggressive", CakeAckFilterMode::kAggressive}},
              [](P& p) -> CakeAckFilterMode& { return p.ack_filter; }),
       unset_if_zero(
           qfield<P>("memlimit", Kind::kBytes, [](P& p) -> int64_t& { return p.memlimit; })),
       qfield<P>("nat", Kind::kBool, [](P& p) -> bool& { return p.nat; }),
       qfield<P>("autorate_ingress", Kind::kBool,
                 [](P& p) -> bool& { return p.autorate_ingress; })},
      [](const P&) { return false; });  // cake_reconfigure clears TCQ_F_CAN_BYPASS
  k.counters = [](AnyQueue& q) {
    const Cake& c = *q.get<Cake>();
    const Cake::Stats& s = c.stats();
    const algo::CakeOverhead& o = c.overhead();
    std::vector<QdiscCounter> out = {{"capacity_estimate", c.capacity_estimate() * 8},  // bit/s
                                     {"memory_used", c.memory_used()},
                                     {"memory_limit", c.memory_limit()},
                                     {"min_network_size", o.seen() ? o.min_netlen() : 0},
                                     {"max_network_size", o.max_netlen()},
                                     {"min_adj_size", o.seen() ? o.min_adjlen() : 0},
                                     {"max_adj_size", o.max_adjlen()},
                                     {"avg_hdr_offset", o.avg_netoff()},
                                     {"drop_overlimit", s.drop_overlimit},
                                     {"cobalt_drops", s.cobalt_drops},
                                     {"ack_drops", s.ack_drops}};
    // One column per tin in tc's display order: tin0 is the first column (Bulk for
    // diffserv3/4).
    for (int i = 0; i < c.tin_count(); ++i) {
      const Cake::TinStats t = c.tin_stats(i);
      const std::string p = "tin" + std::to_string(i) + "_";
      const std::pair<const char*, uint64_t> cols[] = {{"thresh", t.threshold_rate * 8},  // bit/s
                                                       {"target_us", t.target_us},
                                                       {"interval_us", t.interval_us},
                                                       {"pk_delay_us", t.peak_delay_us},
                                                       {"av_delay_us", t.avg_delay_us},
                                                       {"sp_delay_us", t.base_delay_us},
                                                       {"backlog", t.backlog_bytes},
                                                       {"pkts", t.sent_packets},
                                                       {"bytes", t.sent_bytes},
                                                       {"way_inds", t.way_indirect_hits},
                                                       {"way_miss", t.way_misses},
                                                       {"way_cols", t.way_collisions},
                                                       {"drops", t.dropped},
                                                       {"marks", t.ecn_marked},
                                                       {"ack_drop", t.ack_drops},
                                                       {"sp_flows", t.sparse_flows},
                                                       {"bk_flows", t.bulk_flows},
                                                       {"un_flows", t.unresponsive_flows},
                                                       {"max_len", t.max_skblen},
                                                       {"quantum", t.flow_quantum}};
      for (const auto& [name, value] : cols) {
        out.push_back({p + name, value});
      }
    }
    return out;
  };
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

// ---- PIE family (h-pie): pie, fq_pie, dualpi2 ----

// tc -s qdisc show's PIE xstats (iproute2 q_pie.c): prob as tc_pie_xstats carries it (the
// fraction of 2^64: MAX_PROB << 8), delay in microseconds, avg_dq_rate in bytes/s (estimator
// mode only), then the pie_stats counters.
void add_pie_counters(std::vector<QdiscCounter>& out, const algo::PieVars& v,
                      const algo::PieStats& s, bool dq_rate_estimator) {
  out.push_back({"prob", v.prob << 8});
  out.push_back({"delay", (v.qdelay << algo::kPschedShift) / 1000});
  if (dq_rate_estimator) {
    out.push_back(
        {"avg_dq_rate", (uint64_t{v.avg_dq_rate} * algo::kPschedTicksPerSec) >> algo::kPieScale});
  }
  out.push_back({"pkts_in", s.packets_in});
  out.push_back({"overlimit", s.overlimit});
  out.push_back({"dropped", s.dropped});
  out.push_back({"maxq", s.maxq});
  out.push_back({"ecn_mark", s.ecn_mark});
}

QdiscKind pie() {
  using P = algo::Pie::Params;
  QdiscKind k = simple_kind<algo::Pie>(
      "pie", [] { return P{}; },
      {qfield<P>("limit", Kind::kInt, [](P& p) -> int64_t& { return p.limit; }),
       qfield<P>("target", Kind::kDuration, [](P& p) -> Duration& { return p.target; }),
       qfield<P>("tupdate", Kind::kDuration, [](P& p) -> Duration& { return p.tupdate; }),
       qfield<P>("alpha", Kind::kInt, [](P& p) -> int64_t& { return p.alpha; }),
       qfield<P>("beta", Kind::kInt, [](P& p) -> int64_t& { return p.beta; }),
       qfield<P>("ecn", Kind::kBool, [](P& p) -> bool& { return p.ecn; }),
       qfield<P>("bytemode", Kind::kBool, [](P& p) -> bool& { return p.bytemode; }),
       qfield<P>("dq_rate_estimator", Kind::kBool,
                 [](P& p) -> bool& { return p.dq_rate_estimator; })},
      [](const P&) { return false; });  // pie_qdisc_ops sets no TCQ_F_CAN_BYPASS
  k.counters = [](AnyQueue& q) {
    const algo::Pie& e = *q.get<algo::Pie>();
    std::vector<QdiscCounter> out;
    add_pie_counters(out, e.vars(), e.stats().pie, e.params().dq_rate_estimator);
    return out;
  };
  return k;
}

QdiscKind fq_pie() {
  using P = algo::FqPie::Params;
  QdiscKind k = simple_kind<algo::FqPie>(
      "fq_pie", [] { return P{}; },
      {qfield<P>("limit", Kind::kInt, [](P& p) -> int64_t& { return p.limit; }),
       qfield<P>("flows", Kind::kInt, [](P& p) -> int64_t& { return p.flows; }),
       qfield<P>("target", Kind::kDuration, [](P& p) -> Duration& { return p.target; }),
       qfield<P>("tupdate", Kind::kDuration, [](P& p) -> Duration& { return p.tupdate; }),
       qfield<P>("alpha", Kind::kInt, [](P& p) -> int64_t& { return p.alpha; }),
       qfield<P>("beta", Kind::kInt, [](P& p) -> int64_t& { return p.beta; }),
       qfield<P>("quantum", Kind::kBytes, [](P& p) -> int64_t& { return p.quantum; }),
       qfield<P>("memory_limit", Kind::kBytes, [](P& p) -> int64_t& { return p.memory_limit; }),
       qfield<P>("ecn_prob", Kind::kInt, [](P& p) -> int64_t& { return p.ecn_prob; }),
       qfield<P>("ecn", Kind::kBool, [](P& p) -> bool& { return p.ecn; }),
       qfield<P>("bytemode", Kind::kBool, [](P& p) -> bool& { return p.bytemode; }),
       qfield<P>("dq_rate_estimator", Kind::kBool,
                 [](P& p) -> bool& { return p.dq_rate_estimator; })},
      [](const P&) { return false; });  // fq_pie_qdisc_ops sets no TCQ_F_CAN_BYPASS
  // tc -s (iproute2 q_fq_pie.c, tc_fq_pie_xstats).
  k.counters = [](AnyQueue& q) {
    const algo::FqPie& e = *q.get<algo::FqPie>();
    const auto& s = e.stats();
    return std::vector<QdiscCounter>{
        {"pkts_in", s.pie.packets_in},        {"overlimit", s.pie.overlimit},
        {"overmemory", s.overmemory},         {"dropped", s.pie.dropped},
        {"ecn_mark", s.pie.ecn_mark},         {"new_flow_count", s.new_flow_count},
        {"new_flows_len", e.new_flows_len()}, {"old_flows_len", e.old_flows_len()},
        {"memory_used", e.memory_usage()}};
  };
  return k;
}

QdiscKind dualpi2() {
  using P = algo::DualPi2::Params;
  QdiscKind k = simple_kind<algo::DualPi2>(
      "dualpi2", [] { return P{}; },
      {qfield<P>("limit", Kind::kInt, [](P& p) -> int64_t& { return p.limit; }),
       unset_if_zero(qfield<P>("memory_limit", Kind::kBytes,
                               [](P& p) -> int64_t& { return p.memory_limit; })),
       qfield<P>("target", Kind::kDuration, [](P& p) -> Duration& { return p.target; }),
       qfield<P>("tupdate", Kind::kDuration, [](P& p) -> Duration& { return p.tupdate; }),
       qfield<P>("alpha", Kind::kInt, [](P& p) -> int64_t& { return p.alpha; }),
       qfield<P>("beta", Kind::kInt, [](P& p) -> int64_t& { return p.beta; }),
       qfield<P>("step_thresh", Kind::kDuration, [](P& p) -> Duration& { return p.step_thresh; }),
       unset_if_zero(
           qfield<P>("step_packets", Kind::kInt, [](P& p) -> int64_t& { return p.step_packets; })),
       qfield<P>("min_qlen_step", Kind::kInt, [](P& p) -> int64_t& { return p.min_qlen_step; }),
       qfield<P>("coupling_factor", Kind::kInt, [](P& p) -> int64_t& { return p.coupling_factor; }),
       qfield<P>("drop_overload", Kind::kBool, [](P& p) -> bool& { return p.drop_overload; }),
       qfield<P>("drop_early", Kind::kBool, [](P& p) -> bool& { return p.drop_early; }),
       qfield<P>("c_protection", Kind::kInt, [](P& p) -> int64_t& { return p.c_protection; }),
       qfield<P>("ecn_mask", Kind::kInt, [](P& p) -> int64_t& { return p.ecn_mask; })},
      [](const P&) { return false; });  // dualpi2_qdisc_ops sets no TCQ_F_CAN_BYPASS
  // tc -s (iproute2 q_dualpi2.c): prob in 2^32 - 1 units, then the xstats counters; nicsim
  // adds the per-queue mean sojourn (delay_c / delay_l are instantaneous in tc).
  k.counters = [](AnyQueue& q) {
    const algo::DualPi2& e = *q.get<algo::DualPi2>();
    const auto& s = e.stats();
    const auto avg_us = [](uint64_t sum_ns, uint64_t n) { return n == 0 ? 0 : sum_ns / n / 1000; };
    return std::vector<QdiscCounter>{{"prob", e.prob()},
                                     {"pkts_in_c", s.packets_in_c},
                                     {"pkts_in_l", s.packets_in_l},
                                     {"maxq", s.maxq},
                                     {"ecn_mark", s.ecn_mark},
                                     {"step_marks", s.step_marks},
                                     {"memory_used", e.memory_used()},
                                     {"max_memory_used", s.max_memory_used},
                                     {"memory_limit", e.memory_limit()},
                                     {"drop_overlimit", s.drop_overlimit},
                                     {"drop_aqm", s.drop_aqm},
                                     {"sojourn_c_avg_us", avg_us(s.sojourn_c_ns, s.dequeued_c)},
                                     {"sojourn_l_avg_us", avg_us(s.sojourn_l_ns, s.dequeued_l)}};
  };
  return k;
}

// DOCSIS-PIE (RFC 8034; docs/algorithms/docsis_pie.md): a cable modem's upstream AQM. No tc
// exists for it; the keys are RFC 8034's names in lower case, alpha and beta stay RFC 8034's.
QdiscKind docsis_pie() {
  using P = algo::DocsisPie::Params;
  QdiscKind k = simple_kind<algo::DocsisPie>(
      "docsis_pie", [] { return P{}; },
      {unset_if_zero(qfield<P>("rate", Kind::kRate, [](P& p) -> Rate& { return p.rate; })),
       unset_if_zero(qfield<P>("limit", Kind::kBytes, [](P& p) -> int64_t& { return p.limit; })),
       qfield<P>("target", Kind::kDuration, [](P& p) -> Duration& { return p.target; }),
       qfield<P>("interval", Kind::kDuration, [](P& p) -> Duration& { return p.interval; }),
       qfield<P>("max_burst", Kind::kDuration, [](P& p) -> Duration& { return p.max_burst; }),
       qfield<P>("burst_reset_timeout", Kind::kDuration,
                 [](P& p) -> Duration& { return p.burst_reset_timeout; }),
       qfield<P>("mean_packet_size", Kind::kBytes,
                 [](P& p) -> int64_t& { return p.mean_packet_size; })},
      [](const P&) { return false; });  // an AQM with a timer: never bypassed
  k.counters = [](AnyQueue& q) {
    const algo::DocsisPie& e = *q.get<algo::DocsisPie>();
    const auto& s = e.stats();
    return std::vector<QdiscCounter>{
        {"prob_ppm", static_cast<uint64_t>(e.drop_prob() * 1e6)},  // drop_prob_ x 10^6
        {"delay_us", static_cast<uint64_t>(e.qdelay().count_ns() / 1000)},
        {"burst_allowance_us", static_cast<uint64_t>(e.burst_allowance().count_ns() / 1000)},
        {"buffer_bytes", static_cast<uint64_t>(e.buffer_bytes())},
        {"pkts_in", s.packets_in},
        {"early_drops", s.early_drops},
        {"overlimit", s.overlimit},
        {"bursts", s.bursts}};
  };
  return k;
}

}  // namespace

const std::vector<QdiscKind>& qdisc_kinds() {
  static const std::vector<QdiscKind> kKinds = {pfifo(), bfifo(), pfifo_fast(), codel(), fq_codel(),
                                                tbf(), htb(), cake(), fq(),
                                                // PIE family
                                                pie(), fq_pie(), dualpi2(),
                                                // DOCSIS-PIE (h-qdisc)
                                                docsis_pie()};
  return kKinds;
}

const QdiscKind* find_qdisc_kind(std::string_view name) {
  const auto& kinds = qdisc_kinds();
  const auto it =
      std::find_if(kinds.begin(), kinds.end(), [&](const QdiscKind& k) { return k.name == name; });
  return it == kinds.end() ? nullptr : &*it;
}

}  // namespace nicsim::config

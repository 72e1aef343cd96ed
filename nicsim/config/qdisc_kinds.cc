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

}  // namespace

const std::vector<QdiscKind>& qdisc_kinds() {
  static const std::vector<QdiscKind> kKinds = {pfifo(),    bfifo(), pfifo_fast(), codel(),
                                                fq_codel(), tbf(),   htb(),        cake(),
                                                fq()};
  return kKinds;
}

const QdiscKind* find_qdisc_kind(std::string_view name) {
  const auto& kinds = qdisc_kinds();
  const auto it =
      std::find_if(kinds.begin(), kinds.end(), [&](const QdiscKind& k) { return k.name == name; });
  return it == kinds.end() ? nullptr : &*it;
}

}  // namespace nicsim::config

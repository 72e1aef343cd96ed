// The qdisc registry (qdisc_kinds.cc): every row works end to end through the generic code
// (defaults, parse, dump round trip, build, bypass, counters), so a new row is covered by
// these tests without writing new ones.

#include "nicsim/config/qdisc.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <map>
#include <set>
#include <string>

#include "nicsim/algo/cake.h"
#include "nicsim/algo/fq.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/config/error.h"
#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/qdisc_kind.h"
#include "nicsim/testing/packet_factory.h"

namespace nicsim::config {
namespace {

QdiscConfig parse(const std::string& toml_text, const std::string& key = "qdisc") {
  const toml::table t = toml::parse(std::string_view(toml_text), std::string_view("q.toml"));
  return detail::parse_qdisc(*t.get(key), Location{"q.toml", 1, 1}, key, "q.toml",
                             /*is_leaf=*/false);
}

std::string error_of(const std::string& toml_text) {
  try {
    parse(toml_text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(QdiscRegistry, KindsAreTheDocumentedOnesInOrder) {
  EXPECT_EQ(
      qdisc_kind_names(),
      (std::vector<std::string>{"pfifo", "bfifo", "pfifo_fast", "codel", "fq_codel", "tbf", "htb",
                                "cake", "fq", "pie", "fq_pie", "dualpi2", "docsis_pie"}));
  EXPECT_EQ(QdiscConfig().kind(), "pfifo_fast");  // Linux default_qdisc
  EXPECT_THROW(QdiscConfig::of_kind("sfq_not_yet"), std::invalid_argument);
}

// Every row: a bare kind string gives its defaults; the dump of those parses back to an equal
// configuration; the element builds empty.
TEST(QdiscRegistry, EveryKindParsesDumpsAndBuilds) {
  for (const QdiscKind& k : qdisc_kinds()) {
    SCOPED_TRACE(k.name);
    const QdiscConfig defaults = QdiscConfig::of_kind(k.name);
    EXPECT_EQ(defaults.kind(), k.name);
    if (k.name == "tbf") {
      // tbf has no usable defaults (rate and burst are required, as in tc).
      EXPECT_NE(error_of("qdisc = \"tbf\""), "");
      continue;
    }
    const QdiscConfig bare = parse("qdisc = \"" + k.name + "\"");
    EXPECT_EQ(bare, defaults);
    const std::string dumped = detail::dump_qdisc(bare, "qdisc");
    EXPECT_EQ(parse(dumped), bare) << dumped;
    AnyQueue q = bare.build();
    ASSERT_TRUE(q);
    EXPECT_EQ(q.backlog_packets(), 0u);
  }
}

TEST(QdiscRegistry, BypassFollowsTcqFCanBypass) {
  std::set<std::string> bypassing;
  for (const std::string& name : qdisc_kind_names()) {
    if (name != "tbf" && QdiscConfig::of_kind(name).can_bypass()) {
      bypassing.insert(name);
    }
  }
  EXPECT_EQ(bypassing, (std::set<std::string>{"pfifo", "bfifo", "pfifo_fast", "fq_codel"}));
  EXPECT_FALSE(parse("qdisc = { kind = \"tbf\", rate = \"1Mbit\", burst = \"10KiB\", "
                     "latency = \"50ms\" }")
                   .can_bypass());
  EXPECT_FALSE(parse("qdisc = { kind = \"bfifo\", limit = \"1000B\" }").can_bypass());
}

TEST(QdiscRegistry, KindSpecificCountersComeFromTheElement) {
  const QdiscConfig fq = parse("qdisc = \"fq_codel\"");
  AnyQueue q = fq.build();
  testing::PacketFactory pf;
  q.enqueue(pf.make(1514, 0x10000000), Time::zero());  // two buckets (reciprocal_scale)
  q.enqueue(pf.make(1514, 0x90000000), Time::zero());
  const std::vector<QdiscCounter> c = fq.counters(q);
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[2], (QdiscCounter{"new_flow_count", 2}));
  // The PIE family's rows (h-pie): tc -s names in tc's order, values from the element.
  const QdiscConfig pie = parse("qdisc = \"pie\"");
  AnyQueue pq = pie.build();
  pq.enqueue(pf.make(1514, 1), Time::zero());
  const std::vector<QdiscCounter> pc = pie.counters(pq);
  std::vector<std::string> names;
  for (const QdiscCounter& x : pc) {
    names.push_back(x.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"prob", "delay", "pkts_in", "overlimit", "dropped",
                                             "maxq", "ecn_mark"}));
  EXPECT_EQ(pc[2], (QdiscCounter{"pkts_in", 1}));
  const QdiscConfig dualpi2 = parse("qdisc = { kind = \"dualpi2\", step_packets = 5 }");
  AnyQueue dq = dualpi2.build();
  dq.enqueue(pf.make(1514, 1, 0, 0x01), Time::zero());  // ECT(1): the L-queue
  const std::vector<QdiscCounter> dc = dualpi2.counters(dq);
  ASSERT_GE(dc.size(), 3u);
  EXPECT_EQ(dc[2], (QdiscCounter{"pkts_in_l", 1}));
  EXPECT_EQ(detail::dump_qdisc(dualpi2, "qdisc").find("step_packets = 5") != std::string::npos,
            true);
  const QdiscConfig pfifo = parse("qdisc = \"pfifo\"");
  AnyQueue p = pfifo.build();
  EXPECT_TRUE(pfifo.counters(p).empty());
  // fq: tc -s's "flows N (inactive N throttled N) gc N fastpath N ...": two packets due now
  // into an empty fq take the fast path and create no flow.
  const QdiscConfig fqc = parse("qdisc = { kind = \"fq\", flow_limit = 50 }");
  EXPECT_EQ(fqc.params<algo::Fq::Params>().flow_limit, 50);
  AnyQueue f = fqc.build();
  f.enqueue(pf.make(1514, 1), Time::zero());
  f.enqueue(pf.make(1514, 2), Time::zero());
  const std::vector<QdiscCounter> fc = fqc.counters(f);
  ASSERT_GE(fc.size(), 5u);
  EXPECT_EQ(fc[0], (QdiscCounter{"flows", 0}));
  EXPECT_EQ(fc[4], (QdiscCounter{"fastpath", 2}));
}

TEST(QdiscRegistry, CakeTakesTcKeywordsAndReportsTcStatistics) {
  const QdiscConfig c = parse(
      "[qdisc]\nkind = \"cake\"\nbandwidth = \"10Mbit\"\ndiffserv = \"diffserv4\"\n"
      "isolation = \"dual-srchost\"\noverhead = 18\nraw = false\nmpu = 64\natm = \"ptm\"\n"
      "ack_filter = \"ack-filter-aggressive\"\nwash = true");
  const auto& p = c.params<algo::Cake::Params>();
  EXPECT_EQ(p.diffserv, algo::CakeDiffserv::kDiffserv4);
  EXPECT_EQ(p.flow_mode, algo::Cake::FlowMode::kDualSrcHost);
  EXPECT_EQ(p.atm, algo::CakeAtm::kPtm);
  EXPECT_EQ(p.ack_filter, algo::CakeAckFilterMode::kAggressive);
  EXPECT_EQ(parse(detail::dump_qdisc(c, "qdisc")), c);
  AnyQueue q = c.build();
  testing::PacketFactory pf;
  q.enqueue(pf.make(1514, 7), Time::zero());
  std::map<std::string, uint64_t> m;
  for (const QdiscCounter& k : c.counters(q)) {
    m[k.name] = k.value;
  }
  EXPECT_EQ(m["capacity_estimate"], 10'000'000u);
  EXPECT_EQ(m["tin0_thresh"], 10'000'000u / 16);  // Bulk, tc's first column
  EXPECT_EQ(m["tin1_pkts"], 1u);                  // Best Effort
  EXPECT_EQ(m["tin1_backlog"], 1514u);
  EXPECT_EQ(m["max_adj_size"], 1500u + 18 + 24);  // PTM: one byte per 64
  EXPECT_EQ(m["memory_limit"], 4u << 20);
  EXPECT_EQ(error_of("[qdisc]\nkind = \"cake\"\nnat = true"),
            "q.toml:3:1: qdisc.nat: is not modelled: it needs conntrack's address translations "
            "(docs/algorithms/cake.md)");
}

TEST(QdiscRegistry, ErrorsNameTheKey) {
  EXPECT_EQ(error_of("qdisc = \"sfq\""),
            "q.toml:1:1: qdisc: expected one of pfifo, bfifo, pfifo_fast, codel, fq_codel, tbf, "
            "htb, cake, fq, pie, fq_pie, dualpi2, docsis_pie, got \"sfq\"");
  EXPECT_EQ(error_of("[qdisc]\nkind = \"pfifo_fast\"\npriomap = [1, 2]"),
            "q.toml:3:1: qdisc.priomap: expected 16 bands (one per skb->priority 0..15), got 2");
  EXPECT_EQ(error_of("[qdisc]\nkind = \"fq_codel\"\nflows = 0"),
            "q.toml:3:1: qdisc.flows: must be in 1..65536, got 0");
  EXPECT_EQ(error_of("[qdisc]\nkind = \"htb\"\n[[qdisc.class]]\nid = \"1:10\"\nrate = \"1Mbit\"\n"
                     "qdisc = \"htb\""),
            "q.toml:6:1: qdisc.class[0].qdisc: an HTB class's qdisc cannot itself be htb (not "
            "supported)");
}

}  // namespace
}  // namespace nicsim::config

#include "nicsim/report/export_csv.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

const CsvTable& table(const std::vector<CsvTable>& ts, const std::string& name) {
  for (const CsvTable& t : ts) {
    if (t.file_name == name) {
      return t;
    }
  }
  throw std::runtime_error("no table " + name);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

TEST(Csv, FieldQuotingAndNumbers) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_number(0.1), "0.1");
  EXPECT_EQ(csv_number(1e-9), "1e-09");
  EXPECT_EQ(csv_number(2.0), "2");
  EXPECT_EQ(csv_number(-0.0), "0");
  EXPECT_EQ(csv_number(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(csv_number(4e6), "4000000");
  EXPECT_EQ(csv_number(93768618.66666667), "93768618.66666667");
  EXPECT_EQ(csv_number(1e20), "1e+20");
}

// Fields of one CSV record (RFC 4180: a quoted field may hold commas and doubled quotes).
size_t field_count(const std::string& line) {
  size_t n = 1;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      ++n;
    }
  }
  return n;
}

// Every row of every table has exactly as many fields as its header has columns
// (flow_intervals.csv once wrote srtt_ms without a header column).
TEST(Csv, EveryRowHasTheHeadersColumnCount) {
  for (const CsvTable& t : csv_tables(samples::full_sample_results())) {
    const std::vector<std::string> ls = lines(t.text);
    ASSERT_FALSE(ls.empty()) << t.file_name;
    for (size_t i = 1; i < ls.size(); ++i) {
      EXPECT_EQ(field_count(ls[i]), field_count(ls[0])) << t.file_name << " line " << i + 1;
    }
  }
}

TEST(Csv, TablesOfTheFullSample) {
  const Results res = samples::full_sample_results();
  const std::vector<CsvTable> ts = csv_tables(res);
  ASSERT_EQ(ts.size(), 9u);

  const std::vector<std::string> runs = lines(table(ts, "runs.csv").text);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(
      runs[0],
      "run,label,backend,seed,duration_s,goodput_a_to_b_bps,goodput_b_to_a_bps,retransmits,"
      "main_probe,main_p50_ms,main_p99_ms,induced_latency_ms,grade,rpm,idle_rtt_p50_ms,"
      "loaded_rtt_p50_ms,loaded_rtt_p99_ms,fairness_all,load_goodput_a_to_b_bps,"
      "load_goodput_b_to_a_bps,param:hosts.a.nic.bql,param:wire.rate,param:hosts.a.nic.tx_ring,"
      "param:hosts.a.tcp.pacing_ratio");
  EXPECT_EQ(runs[2].rfind("1,bql=true rate=1Gbit,sim,42,2,", 0), 0u) << runs[2];
  // main probe ping: p50 0.401, p99; induced 0.226, grade A+, RPM 1e5; idle p50 of {0.344,
  // 0.399}; loaded p50 of {0.401, 0.432, 0.558, 1.0}; fairness 0.75; load goodput
  EXPECT_NE(runs[2].find(",ping,0.401,"), std::string::npos) << runs[2];
  EXPECT_NE(runs[2].find(",0.226,A+,100000,0.3715,0.495,0.98674,"), std::string::npos) << runs[2];
  EXPECT_NE(runs[2].find(",0.75,3996000,11988000,true,1Gbit,256,1.5"), std::string::npos)
      << runs[2];

  // intervals: 2 runs x 2 intervals x 2 directions
  const std::vector<std::string> iv = lines(table(ts, "intervals.csv").text);
  ASSERT_EQ(iv.size(), 9u);
  EXPECT_EQ(iv[0],
            "run,label,start_s,end_s,direction,bytes,bits_per_second,retransmits,cwnd_bytes");
  EXPECT_EQ(iv[1], "0,bql=false rate=1Gbit,0,1,a->b,1000001,8000008,0,43440");
  // flows: x 2 flows each
  EXPECT_EQ(lines(table(ts, "flow_intervals.csv").text).size(), 17u);
  EXPECT_EQ(lines(table(ts, "flow_intervals.csv").text)[0],
            "run,label,start_s,end_s,direction,flow_id,flow_name,bytes,bits_per_second,"
            "retransmits,cwnd_bytes,srtt_ms");
  EXPECT_EQ(lines(table(ts, "flow_intervals.csv").text)[2],
            "0,bql=false rate=1Gbit,0,1,a->b,7,TCP upload EF,500001,4000008,0,28960,2.25");
  EXPECT_EQ(lines(table(ts, "flow_intervals.csv").text)[1],
            "0,bql=false rate=1Gbit,0,1,a->b,5,TCP upload BE,500000,4000000,0,14480,");
  const std::vector<std::string> lat = lines(table(ts, "interval_latency.csv").text);
  ASSERT_EQ(lat.size(), 1u + 2 * 3);
  EXPECT_EQ(lat[1], "0,bql=false rate=1Gbit,0,1,ping,0.1");

  // flows: one row per flow with its totals; hosts empty in the two-host form
  const std::vector<std::string> fl = lines(table(ts, "flows.csv").text);
  EXPECT_EQ(fl[0],
            "run,label,direction,flow_id,flow_name,dscp,from,to,start_s,end_s,sender_bytes,"
            "receiver_bytes,bits_per_second,retransmits");
  EXPECT_EQ(fl[1].rfind("0,bql=false rate=1Gbit,a->b,5,TCP upload BE,0,,,", 0), 0u) << fl[1];
  const std::vector<CsvTable> net = csv_tables(samples::network_sample_results());
  EXPECT_EQ(lines(table(net, "flows.csv").text)[1].rfind(
                "0,bql=false rate=1Gbit,a->b,5,TCP upload BE,0,s1,d1,", 0),
            0u);
  EXPECT_EQ(lines(table(net, "probes.csv").text)[1].substr(
                lines(table(net, "probes.csv").text)[1].size() - 6),
            ",s1,d2");

  // probes: per run ping (rtt), udp_bk (rtt), udp_ef (rtt + 2 one-way)
  const std::vector<std::string> pr = lines(table(ts, "probes.csv").text);
  ASSERT_EQ(pr.size(), 1u + 2 * 5);
  EXPECT_EQ(pr[1].rfind("0,bql=false rate=1Gbit,ping,icmp,0,rtt,5,1,0.344,", 0), 0u) << pr[1];
  EXPECT_EQ(pr[2], "0,bql=false rate=1Gbit,udp_bk,udp,8,rtt,0,3,,,,,,,,,");
  EXPECT_EQ(pr[4].rfind("0,bql=false rate=1Gbit,udp_ef,udp,46,one_way a->b,3,0,0.5,", 0), 0u);

  // samples: ping 6 (one lost), udp_ef 3 (RTT lost twice, b->a lost twice), udp_bk none
  const std::vector<std::string> smp = lines(table(ts, "probe_samples.csv").text);
  ASSERT_EQ(smp.size(), 1u + 2 * 9);
  EXPECT_EQ(smp[0], "run,label,probe,seq,send_s,rtt_ms,one_way_a_to_b_ms,one_way_b_to_a_ms");
  EXPECT_EQ(smp[3], "0,bql=false rate=1Gbit,ping,2,0.4,,,");
  EXPECT_EQ(smp[7], "0,bql=false rate=1Gbit,udp_ef,0,0,1,0.5,0.5");
  EXPECT_EQ(smp[8], "0,bql=false rate=1Gbit,udp_ef,1,0.5,,0.51,");
  const std::vector<std::string> ph = lines(table(ts, "phases.csv").text);
  ASSERT_EQ(ph.size(), 1u + 2 * 3);
  EXPECT_EQ(ph[2], "0,bql=false rate=1Gbit,load,0.5,1.5");

  const std::vector<std::string> q = lines(table(ts, "queues.csv").text);
  ASSERT_EQ(q.size(), 1u + 2 * 5);
  EXPECT_EQ(q[3], "0,bql=false rate=1Gbit,a,0.002000001,3028,2,30280,20,4542,3028,16384");
  EXPECT_EQ(q[5], "0,bql=false rate=1Gbit,b,0.5,66,,,,,,");
}

}  // namespace
}  // namespace nicsim::report

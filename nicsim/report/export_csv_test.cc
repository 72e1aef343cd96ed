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
}

TEST(Csv, TablesOfTheFullSample) {
  const Results res = samples::full_sample_results();
  const std::vector<CsvTable> ts = csv_tables(res);
  ASSERT_EQ(ts.size(), 6u);

  const std::vector<std::string> runs = lines(table(ts, "runs.csv").text);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0],
            "run,label,backend,seed,duration_s,goodput_a_to_b_bps,goodput_b_to_a_bps,retransmits,"
            "main_probe,main_p50_ms,main_p99_ms,induced_latency_ms,grade,rpm,"
            "param:hosts.a.nic.bql,param:wire.rate,param:hosts.a.nic.tx_ring,"
            "param:hosts.a.tcp.pacing_ratio");
  EXPECT_EQ(runs[2].rfind("1,bql=true rate=1Gbit,sim,42,2,", 0), 0u) << runs[2];
  EXPECT_EQ(runs[2].substr(runs[2].size() - 22), ",,,,true,1Gbit,256,1.5");

  // intervals: 2 runs x 2 intervals x 2 directions
  const std::vector<std::string> iv = lines(table(ts, "intervals.csv").text);
  ASSERT_EQ(iv.size(), 9u);
  EXPECT_EQ(iv[0],
            "run,label,start_s,end_s,direction,bytes,bits_per_second,retransmits,cwnd_bytes");
  EXPECT_EQ(iv[1], "0,bql=false rate=1Gbit,0,1,a->b,1000001,8000008,0,43440");
  // flows: x 2 flows each
  EXPECT_EQ(lines(table(ts, "flow_intervals.csv").text).size(), 17u);
  EXPECT_EQ(lines(table(ts, "flow_intervals.csv").text)[2],
            "0,bql=false rate=1Gbit,0,1,a->b,7,,500001,4000008,0,28960");
  const std::vector<std::string> lat = lines(table(ts, "interval_latency.csv").text);
  ASSERT_EQ(lat.size(), 1u + 2 * 3);
  EXPECT_EQ(lat[1], "0,bql=false rate=1Gbit,0,1,ping,0.1");

  // probes: per run ping (rtt), udp_bk (rtt), udp_ef (rtt + 2 one-way)
  const std::vector<std::string> pr = lines(table(ts, "probes.csv").text);
  ASSERT_EQ(pr.size(), 1u + 2 * 5);
  EXPECT_EQ(pr[1].rfind("0,bql=false rate=1Gbit,ping,icmp,rtt,5,1,0.344,", 0), 0u) << pr[1];
  EXPECT_EQ(pr[2], "0,bql=false rate=1Gbit,udp_bk,udp,rtt,0,3,,,,,,,");
  EXPECT_EQ(pr[4].rfind("0,bql=false rate=1Gbit,udp_ef,udp,one_way a->b,3,0,0.5,", 0), 0u);

  const std::vector<std::string> q = lines(table(ts, "queues.csv").text);
  ASSERT_EQ(q.size(), 1u + 2 * 5);
  EXPECT_EQ(q[3], "0,bql=false rate=1Gbit,a,0.002000001,3028,2,30280,20,4542,3028,16384");
  EXPECT_EQ(q[5], "0,bql=false rate=1Gbit,b,0.5,66,,,,,,");
}

}  // namespace
}  // namespace nicsim::report

#include "nicsim/report/export_flent.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <nlohmann/json.hpp>
#include <string>

#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

using Json = nlohmann::json;

std::string gunzip(const std::string& gz) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

TEST(Flent, GzipRoundTripsAndIsDeterministic) {
  const std::string text = flent_json(samples::full_sample_results(), 0);
  const std::string gz = gzip_compress(text);
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // RFC 1952 magic
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_EQ(gunzip(gz), text);
  EXPECT_EQ(gzip_compress(text), gz);
}

TEST(Flent, RrulRunUsesRrulSeriesNamesAndProbeSamples) {
  const Results res = samples::full_sample_results();
  const Json doc = Json::parse(flent_json(res, 0));
  const Json& md = doc["metadata"];
  EXPECT_EQ(md["NAME"], "rrul");
  EXPECT_EQ(md["TEST_PARAMETERS"], Json::object());
  EXPECT_EQ(md["DELAY"], 0.5);   // idle_before
  EXPECT_EQ(md["LENGTH"], 1.0);  // load
  const Json& r = doc["results"];
  for (const char* name : {"TCP upload BE", "TCP upload EF", "TCP download BE", "TCP download EF",
                           "Ping (ms) ICMP", "Ping (ms) UDP EF", "Ping (ms) UDP BK"}) {
    EXPECT_TRUE(r.contains(name)) << name;
  }
  EXPECT_EQ(r.size(), 7u);
  EXPECT_EQ(md["SERIES_META"]["TCP upload EF"]["DATA_TOS"], 46 << 2);
  // irtt-style raw samples: received {t = send + rtt, val, seq}, lost {t = send, lost, lost_dir}
  const Json& ping = doc["raw_values"]["Ping (ms) ICMP"];
  ASSERT_EQ(ping.size(), 6u);
  const double t0 = 1'714'564'800.0;
  EXPECT_EQ(ping[1], Json::parse(R"({"seq": 1, "t": )" + Json(t0 + 0.2 + 0.432 / 1000).dump() +
                                 R"(, "val": 0.432})"));
  EXPECT_EQ(ping[2], Json::parse(R"({"seq": 2, "t": )" + Json(t0 + 0.4).dump() +
                                 R"(, "lost": true, "lost_dir": null})"));
  const Json& ef = doc["raw_values"]["Ping (ms) UDP EF"];
  ASSERT_EQ(ef.size(), 3u);
  EXPECT_EQ(ef[0]["owd_up"], 0.5);
  EXPECT_EQ(ef[0]["owd_down"], 0.5);
  EXPECT_EQ(ef[1]["lost_dir"], "down");  // a->b arrived (0.51), the reply did not
  EXPECT_FALSE(doc["raw_values"].contains("Ping (ms) UDP BK"));  // no samples
}

TEST(Flent, DocumentLayoutOfAGenericRun) {
  Results res = samples::full_sample_results();
  for (Direction d : kDirections) {  // unnamed flows: not rrul's
    for (FlowTransfer& f : res.runs[1].transfer[d].flows) {
      f.name.clear();
    }
  }
  const Json doc = Json::parse(flent_json(res, 1));
  EXPECT_EQ(doc["version"], 4);
  const Json& md = doc["metadata"];
  EXPECT_EQ(md["NAME"], "rrul_be_nflows");
  EXPECT_EQ(md["TITLE"], "nicsim sim bql=true rate=1Gbit");
  EXPECT_EQ(md["TIME"], "2024-05-01T12:00:00.000000Z");
  EXPECT_EQ(md["T0"], md["TIME"]);
  EXPECT_EQ(md["STEP_SIZE"], 1.0);
  EXPECT_EQ(md["TOTAL_LENGTH"], 2.0);
  EXPECT_EQ(md["TEST_PARAMETERS"]["upload_streams"], "2");
  EXPECT_EQ(md["TEST_PARAMETERS"]["download_streams"], "2");
  EXPECT_EQ(md["NICSIM"]["params"]["hosts.a.nic.tx_ring"], 256);
  EXPECT_EQ(doc["x_values"], Json::parse("[1.0, 2.0]"));

  const Json& r = doc["results"];
  // a->b is flent's upload (host a is the client), flows numbered per direction.
  ASSERT_TRUE(r.contains("TCP upload BE::1"));
  ASSERT_TRUE(r.contains("TCP upload BE::2"));
  ASSERT_TRUE(r.contains("TCP download BE::2"));
  EXPECT_EQ(r["TCP upload BE::1"], Json::parse("[4.0, 4.008]"));
  EXPECT_EQ(r["Ping (ms) ICMP"][1].get<double>(), 0.1 + 1 / 3.0);
  EXPECT_EQ(r["Ping (ms) UDP BE"], Json::parse("[null, null]"));  // udp_bk: first UDP probe
  EXPECT_TRUE(r["Ping (ms) udp_ef"][0].is_null());
  EXPECT_EQ(r["Ping (ms) udp_ef"][1].get<double>(), 1 / 3.0);

  // netperf_demo's raw values: t (Unix s, interval end), dur, val (Mbit/s).
  const Json& raw = doc["raw_values"]["TCP download BE::1"];
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_EQ(raw[0]["t"].get<double>(), 1'714'564'800.0 + 1.0);
  EXPECT_EQ(raw[0]["dur"].get<double>(), 1.0);
  EXPECT_EQ(raw[0]["val"].get<double>(), 4.0);  // flow 5: 500 000 B in 1 s
  const Json& sm = md["SERIES_META"]["TCP download BE::1"];
  EXPECT_EQ(sm["UNITS"], "Mbits/s");
  EXPECT_DOUBLE_EQ(sm["MEAN_VALUE"].get<double>(), 2'997'000 * 8 / 2.01 / 1e6);
  EXPECT_EQ(md["SERIES_META"]["Ping (ms) ICMP"]["PACKETS_SENT"], 6);
  EXPECT_EQ(md["SERIES_META"]["Ping (ms) ICMP"]["PACKETS_RECEIVED"], 5);
}

TEST(Flent, IntervalsOutsideAFlowsLifeAreGaps) {
  Results res = samples::full_sample_results();
  report::Run& r = res.runs[0];
  r.transfer.a_to_b.flows[0].sender.start_s = 1.0;  // the flow starts in the second interval
  r.transfer.a_to_b.flows[0].receiver.start_s = 1.0;
  const Json doc = Json::parse(flent_json(res, 0));
  EXPECT_TRUE(doc["results"]["TCP upload BE"][0].is_null());
  EXPECT_EQ(doc["results"]["TCP upload BE"][1], 4.008);
  EXPECT_EQ(doc["raw_values"]["TCP upload BE"].size(), 1u);
}

TEST(Flent, RunWithoutIntervalsIsAnError) {
  const Results res = samples::minimal_sample_results();
  EXPECT_THROW((void)flent_json(res, 0), ExportError);
}

TEST(Flent, FileNamesForSeveralRuns) {
  EXPECT_EQ(flent_file_name("out.flent.gz", 0, 1, "x"), "out.flent.gz");
  EXPECT_EQ(flent_file_name("d/out.flent.gz", 1, 2, "bql=true rate=1Gbit"),
            "d/out-2-bql_true_rate_1Gbit.flent.gz");
  EXPECT_EQ(flent_file_name("out", 0, 3, ""), "out-1.flent.gz");
}

}  // namespace
}  // namespace nicsim::report

#include "nicsim/report/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "nicsim/report/sample_results.h"

namespace nicsim::report {
namespace {

using samples::full_sample_results;
using samples::minimal_sample_results;

// Returns the message of the JsonError f throws ("" if it does not throw).
template <typename F>
std::string json_error(F&& f) {
  try {
    f();
  } catch (const JsonError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Round trip of every field: the full sample sets every field (optional ones included) to a
// non-default value; reading the written document gives back an equal Results.
TEST(ResultsJson, RoundTripFullDocument) {
  const Results in = full_sample_results();
  const std::string text = to_json(in);
  const Results out = results_from_json(text);
  EXPECT_EQ(out.meta, in.meta);
  ASSERT_EQ(out.runs.size(), in.runs.size());
  for (size_t i = 0; i < in.runs.size(); ++i) {
    EXPECT_EQ(out.runs[i].params, in.runs[i].params);
    EXPECT_EQ(out.runs[i].latency_ms, in.runs[i].latency_ms);
    EXPECT_EQ(out.runs[i].transfer, in.runs[i].transfer);
    EXPECT_EQ(out.runs[i].intervals, in.runs[i].intervals);
    EXPECT_EQ(out.runs[i].queues, in.runs[i].queues);
    EXPECT_EQ(out.runs[i].stages, in.runs[i].stages);
    EXPECT_EQ(out.runs[i].comparison, in.runs[i].comparison);
    EXPECT_EQ(out.runs[i], in.runs[i]);
  }
  EXPECT_EQ(out, in);
  EXPECT_EQ(to_json(out), text);  // and writes back to the same bytes
}

// A network's results (issue 10): flows and probes name their hosts, per-pair totals and Jain's
// index are written and read back; the two-host form's documents have none of these keys.
TEST(ResultsJson, RoundTripNetworkDocument) {
  const Results in = samples::network_sample_results();
  const std::string text = to_json(in);
  EXPECT_TRUE(contains(text, "\"from\": \"s1\""));
  EXPECT_TRUE(contains(text, "\"s1->d1\": {"));
  EXPECT_TRUE(contains(text, "\"fairness\": "));
  const Results out = results_from_json(text);
  EXPECT_EQ(out, in);
  EXPECT_EQ(to_json(out), text);
  const std::string two_host = to_json(full_sample_results());
  EXPECT_FALSE(contains(two_host, "\"from\""));
  EXPECT_FALSE(contains(two_host, "\"pairs\""));
  EXPECT_FALSE(contains(two_host, "\n      \"fairness\""));
}

TEST(ResultsJson, RoundTripMinimalDocument) {
  const Results in = minimal_sample_results();
  EXPECT_EQ(results_from_json(to_json(in)), in);
}

// Each sample field really differs from its default, so the round trip above covers it.
TEST(ResultsJson, FullSampleSetsOptionalFields) {
  const Results full = full_sample_results();
  const report::Run& r = full.runs[1];
  EXPECT_TRUE(r.latency_ms.at("udp_ef").one_way.has_value());
  EXPECT_EQ(r.latency_ms.at("udp_bk").rtt.count, 0u);
  EXPECT_FALSE(r.transfer.a_to_b.flows.empty());
  EXPECT_FALSE(r.intervals.at(0).directions.b_to_a.flows.empty());
  EXPECT_FALSE(r.queues.at("a").device_fifo_bytes.empty());
  EXPECT_FALSE(r.comparison.at(2).simulated.has_value());
  EXPECT_FALSE(r.config_toml.empty());
  EXPECT_TRUE(full.meta.git_commit.has_value());
  // issue 6 (rrul) fields
  EXPECT_EQ(r.latency_ms.at("udp_ef").dscp, 46);
  EXPECT_FALSE(r.latency_ms.at("udp_ef").series.one_way_b_to_a_ms.empty());
  EXPECT_FALSE(r.latency_ms.at("ping").series.rtt_ms.at(2).has_value());
  EXPECT_EQ(r.transfer.b_to_a.flows.at(1).name, "TCP download EF");
  EXPECT_EQ(r.transfer.b_to_a.flows.at(1).dscp, 46);
  EXPECT_TRUE(r.intervals.at(1).directions.a_to_b.flows.at(0).srtt_ms.has_value());
  EXPECT_FALSE(r.intervals.at(0).directions.a_to_b.flows.at(0).srtt_ms.has_value());
  EXPECT_EQ(r.phases.size(), 3u);
  ASSERT_TRUE(r.latency_under_load.has_value());
  EXPECT_TRUE(r.latency_under_load->loaded_one_way.has_value());
  EXPECT_TRUE(r.latency_under_load->rpm_self_ms.has_value());
  EXPECT_FALSE(full.runs[0].latency_under_load->rpm_self_ms.has_value());
  EXPECT_FALSE(r.latency_under_load->per_dscp_flow_srtt.empty());
}

// The issue-6 fields' exact JSON: probe dscp and series (null = lost, one-way columns only when
// measured), flow name/dscp, srtt_ms only when known, phases, latency_under_load.
TEST(ResultsJson, RrulFieldsLayout) {
  const std::string text = to_json(full_sample_results());
  EXPECT_TRUE(contains(text,
                       "          \"dscp\": 46,\n"
                       "          \"series\": {\n"
                       "            \"time_s\": [0.0, 0.5, 1.0],\n"
                       "            \"rtt_ms\": [1.0, null, null],\n"
                       "            \"one_way_a_to_b_ms\": [0.5, 0.51, 0.7],\n"
                       "            \"one_way_b_to_a_ms\": [0.5, null, null]\n"
                       "          }\n"));
  EXPECT_TRUE(contains(text,
                       "          \"series\": {\n"
                       "            \"time_s\": [],\n"
                       "            \"rtt_ms\": []\n"
                       "          }\n"));
  EXPECT_TRUE(contains(text,
                       "              \"id\": 7,\n"
                       "              \"name\": \"TCP upload EF\",\n"
                       "              \"dscp\": 46,\n"));
  EXPECT_TRUE(contains(text,
                       "                  \"cwnd_bytes\": 14480\n"
                       "                },\n"));  // interval 0, flow 5: no srtt_ms
  EXPECT_TRUE(contains(text,
                       "                  \"cwnd_bytes\": 28960,\n"
                       "                  \"srtt_ms\": 2.25\n"));
  EXPECT_TRUE(contains(text,
                       "      \"phases\": [\n"
                       "        {\n"
                       "          \"name\": \"idle_before\",\n"
                       "          \"start_s\": 0.0,\n"
                       "          \"end_s\": 0.5\n"
                       "        },\n"));
  EXPECT_TRUE(contains(text,
                       "        \"induced_latency_ms\": 0.226,\n"
                       "        \"grade\": \"F\",\n"
                       "        \"rpm\": 100000.0,\n"
                       "        \"rpm_foreign_ms\": 0.6,\n"
                       "        \"rpm_self_ms\": null,\n"
                       "        \"fairness\": {\n"
                       "          \"a->b\": 0.99,\n"
                       "          \"b->a\": 0.5\n"
                       "        },\n"
                       "        \"fairness_all\": 0.75,\n"));
  EXPECT_TRUE(contains(text, "        \"rpm_self_ms\": 2.25,\n"));
}

// Documents written before issue 6 (no dscp, series, flow names, srtt_ms, phases,
// latency_under_load) still read, with those fields at their defaults.
TEST(ResultsJson, LegacyDocumentReads) {
  const std::string legacy = samples::legacy_sample_json();
  EXPECT_FALSE(contains(legacy, "\"series\""));
  EXPECT_FALSE(contains(legacy, "\"phases\""));
  EXPECT_FALSE(contains(legacy, "\"dscp\""));
  EXPECT_EQ(results_from_json(legacy), samples::legacy_sample_results());
  EXPECT_NE(samples::legacy_sample_results(), full_sample_results());
}

// Determinism: the same Results give the same bytes; Results that differ only in meta give
// byte-identical documents outside meta.
TEST(ResultsJson, DeterministicOutsideMeta) {
  const Results a = full_sample_results();
  Results b = full_sample_results();
  EXPECT_EQ(to_json(a), to_json(b));
  b.meta.wall_s = 99.5;
  b.meta.start_time = iso8601_utc(1'800'000'000);
  b.meta.host = "other";
  b.meta.events_per_s = 1.0 / 7.0;
  b.meta.git_commit.reset();
  EXPECT_NE(to_json(a), to_json(b));
  const std::string a_runs = to_json(a, {.include_meta = false});
  EXPECT_EQ(a_runs, to_json(b, {.include_meta = false}));
  EXPECT_FALSE(contains(a_runs, "\"meta\""));
  EXPECT_FALSE(contains(a_runs, "wall_s"));
  // The full document is the meta-less one with the meta object inserted.
  const std::string full = to_json(a);
  const size_t meta_begin = full.find("  \"meta\": {");
  const size_t meta_end = full.find("\n  },\n", meta_begin);
  ASSERT_NE(meta_begin, std::string::npos);
  ASSERT_NE(meta_end, std::string::npos);
  EXPECT_EQ(full.substr(0, meta_begin) + full.substr(meta_end + 6), a_runs);
}

std::string written_duration(double v) {
  Results r = minimal_sample_results();
  r.runs[0].duration_s = v;
  const std::string text = to_json(r);
  const size_t at = text.find("\"duration_s\": ");
  return text.substr(at + 14, text.find(',', at) - at - 14);
}

// Numbers: shortest text that reads back to the same double; integral doubles keep ".0";
// -0.0 is written as 0.0.
TEST(ResultsJson, NumberFormatting) {
  EXPECT_EQ(written_duration(30.0), "30.0");
  EXPECT_EQ(written_duration(0.1), "0.1");
  EXPECT_EQ(written_duration(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(written_duration(0.432), "0.432");
  EXPECT_EQ(written_duration(1e-9), "1e-09");
  EXPECT_EQ(written_duration(1e21), "1e+21");
  EXPECT_EQ(written_duration(123456789.125), "123456789.125");
  EXPECT_EQ(written_duration(-0.0), "0.0");
  EXPECT_EQ(written_duration(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(written_duration(std::numeric_limits<double>::denorm_min()), "5e-324");
  // uint64 counters keep every digit.
  Results r = minimal_sample_results();
  r.runs[0].seed = std::numeric_limits<uint64_t>::max();
  EXPECT_TRUE(contains(to_json(r), "\"seed\": 18446744073709551615,"));
  EXPECT_EQ(results_from_json(to_json(r)).runs[0].seed, std::numeric_limits<uint64_t>::max());
}

TEST(ResultsJson, NonFiniteNumbersAreRejectedWithTheirPath) {
  Results r = minimal_sample_results();
  r.runs[0].duration_s = NAN;
  EXPECT_EQ(json_error([&] { to_json(r); }), "to_json: runs[0].duration_s: not a finite number");
  Results f = full_sample_results();
  f.runs[1].intervals[0].latency_ms["ping"] = INFINITY;
  EXPECT_EQ(json_error([&] { to_json(f); }),
            "to_json: runs[1].intervals[0].latency_ms.ping: not a finite number");
}

// Params keep the scenario's order and their JSON types (2.0 stays a float, 3 an integer).
TEST(ResultsJson, ParamsKeepOrderAndType) {
  Results r = minimal_sample_results();
  r.runs[0].params = {{"z.rate", 2.0},
                      {"a.ring", int64_t{-3}},
                      {"m.bql", true},
                      {"b.qdisc", std::string("fq_codel")}};
  const std::string text = to_json(r);
  EXPECT_TRUE(contains(text,
                       "      \"params\": {\n"
                       "        \"z.rate\": 2.0,\n"
                       "        \"a.ring\": -3,\n"
                       "        \"m.bql\": true,\n"
                       "        \"b.qdisc\": \"fq_codel\"\n"
                       "      },\n"));
  const Results back = results_from_json(text);
  EXPECT_EQ(back.runs[0].params, r.runs[0].params);
  EXPECT_TRUE(std::holds_alternative<double>(back.runs[0].params[0].value));
  EXPECT_TRUE(std::holds_alternative<int64_t>(back.runs[0].params[1].value));
}

// Statistics without samples are null; queue columns that do not apply are left out; scalar
// arrays stay on one line.
TEST(ResultsJson, NullStatisticsOmittedColumnsInlineArrays) {
  const std::string text = to_json(full_sample_results());
  EXPECT_TRUE(contains(text,
                       "        \"udp_bk\": {\n"
                       "          \"kind\": \"udp\",\n"
                       "          \"min\": null,\n"
                       "          \"mean\": null,\n"
                       "          \"p50\": null,\n"
                       "          \"p90\": null,\n"
                       "          \"p99\": null,\n"
                       "          \"max\": null,\n"
                       "          \"mdev\": null,\n"
                       "          \"count\": 0,\n"
                       "          \"lost\": 3,\n"
                       "          \"dscp\": 8,\n"));
  EXPECT_TRUE(contains(text,
                       "        \"b\": {\n"
                       "          \"time_s\": [0.0, 0.5],\n"
                       "          \"qdisc_bytes\": [0, 66]\n"
                       "        }\n"));
  EXPECT_TRUE(contains(text, "\"time_s\": [0.0, 0.001, 0.002000001],"));
}

// The layout is fixed (two-space indentation, one key per line): pinned on the minimal document.
TEST(ResultsJson, MinimalDocumentLayout) {
  EXPECT_EQ(to_json(minimal_sample_results()), R"({
  "format": "nicsim-results",
  "version": 1,
  "meta": {
    "nicsim_version": "0.1.0",
    "git_commit": null,
    "start_time": "1970-01-01T00:00:00Z",
    "wall_s": 0.0,
    "host": "",
    "events": 0,
    "events_per_s": 0.0,
    "command_line": [],
    "runs": []
  },
  "runs": [
    {
      "label": "",
      "params": {},
      "backend": "sim",
      "seed": 0,
      "duration_s": 0.0,
      "goodput_bps": {
        "a->b": 0.0,
        "b->a": 0.0
      },
      "retransmits": 0,
      "latency_ms": {},
      "transfer": {
        "a->b": {
          "sender": {
            "start_s": 0.0,
            "end_s": 0.0,
            "bytes": 0,
            "bits_per_second": 0.0,
            "retransmits": 0
          },
          "receiver": {
            "start_s": 0.0,
            "end_s": 0.0,
            "bytes": 0,
            "bits_per_second": 0.0
          },
          "flows": []
        },
        "b->a": {
          "sender": {
            "start_s": 0.0,
            "end_s": 0.0,
            "bytes": 0,
            "bits_per_second": 0.0,
            "retransmits": 0
          },
          "receiver": {
            "start_s": 0.0,
            "end_s": 0.0,
            "bytes": 0,
            "bits_per_second": 0.0
          },
          "flows": []
        }
      },
      "stages": {
        "a->b": [],
        "b->a": []
      },
      "comparison": [],
      "intervals": [],
      "queues": {},
      "phases": [],
      "config_toml": ""
    }
  ]
}
)");
}

TEST(ResultsJson, StrictReader) {
  const std::string good = to_json(minimal_sample_results());
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    s.replace(at, from.size(), to);
    return json_error([&] { results_from_json(s); });
  };
  EXPECT_EQ(with("\"seed\": 0,", "\"seed\": 0, \"speed\": 1,"),
            "results JSON: runs[0]: unknown key \"speed\"");
  EXPECT_EQ(with("\"seed\": 0,", "\"seed\": \"0\","),
            "results JSON: runs[0].seed: expected a non-negative integer, got string");
  EXPECT_EQ(with("\"seed\": 0,", "\"seed\": -1,"),
            "results JSON: runs[0].seed: expected a non-negative integer, got -1");
  EXPECT_EQ(with("\"seed\": 0,", ""), "results JSON: runs[0]: missing key \"seed\"");
  EXPECT_EQ(with("\"version\": 1", "\"version\": 2"),
            "results JSON: version: this nicsim reads version 1, got 2");
  EXPECT_EQ(with("\"nicsim-results\"", "\"flent\""),
            "results JSON: format: expected \"nicsim-results\", got \"flent\"");
  EXPECT_EQ(with("\"b->a\": 0.0", "\"b-a\": 0.0"),
            "results JSON: runs[0].goodput_bps: missing key \"b->a\"");
  EXPECT_EQ(with("\"params\": {}", "\"params\": {\"x\": [1]}"),
            "results JSON: runs[0].params.x: expected a string, boolean or number, got array");
  EXPECT_TRUE(contains(json_error([] { results_from_json("{\"runs\": ["); }),
                       "results JSON: [json.exception.parse_error"));
  // Statistics must be null exactly when there is no sample.
  Results r = full_sample_results();
  std::string s = to_json(r);
  s.replace(s.find("\"min\": null"), 11, "\"min\": 1.0");
  EXPECT_EQ(json_error([&] { results_from_json(s); }),
            "results JSON: runs[0].latency_ms.udp_bk.min: must be null when count is 0");
  // issue-6 fields: DSCP range, series values, phases, latency_under_load keys.
  const std::string full = to_json(full_sample_results());
  const auto full_with = [&](const std::string& from, const std::string& to) {
    std::string t = full;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return json_error([&] { results_from_json(t); });
  };
  EXPECT_EQ(full_with("\"dscp\": 46", "\"dscp\": 64"),
            "results JSON: runs[0].latency_ms.udp_ef.dscp: DSCP must be 0..63, got 64");
  EXPECT_EQ(full_with("\"rtt_ms\": [1.0, null", "\"rtt_ms\": [1.0, \"x\""),
            "results JSON: runs[0].latency_ms.udp_ef.series.rtt_ms[1]: expected a number, got "
            "string");
  EXPECT_EQ(full_with("\"name\": \"idle_before\",", ""),
            "results JSON: runs[0].phases[0]: missing key \"name\"");
  EXPECT_EQ(full_with("\"grade\": \"F\",", ""),
            "results JSON: runs[0].latency_under_load: missing key \"grade\"");
  EXPECT_EQ(full_with("\"fairness_all\": 0.75,", "\"fairness_all\": 0.75, \"jain\": 1,"),
            "results JSON: runs[0].latency_under_load: unknown key \"jain\"");
}

TEST(ResultsJson, DocumentWithoutMetaReads) {
  const Results in = full_sample_results();
  const Results out = results_from_json(to_json(in, {.include_meta = false}));
  EXPECT_EQ(out.runs, in.runs);
  EXPECT_EQ(out.meta, Meta{});
}

}  // namespace
}  // namespace nicsim::report

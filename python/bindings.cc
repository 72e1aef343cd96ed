// nicsim._nicsim: the C++ side of the Python module (python/nicsim/). Two things cross here:
//   * run_json(): load a scenario, simulate every run, return the results as the JSON document
//     `nicsim run --json` writes (docs/results.md), which python/nicsim/results.py turns into
//     plain Python objects and DataFrames: one schema, one writer (nicsim/report/json.cc);
//   * the queueing elements and BQL, stepped by the caller's clock (FqCodel, Dql), with times
//     in seconds as Python floats (rounded to the nanosecond, nicsim's time unit).
// pybind11 from Debian (pybind11-dev); docs/python.md.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include "nicsim/algo/dql.h"
#include "nicsim/algo/fq_codel.h"
#include "nicsim/config/error.h"
#include "nicsim/config/scenario.h"
#include "nicsim/core/param_error.h"
#include "nicsim/report/json.h"
#include "nicsim/report/results.h"
#include "nicsim/sim/simulation.h"

namespace py = pybind11;

namespace nicsim::python {
namespace {

Time time_from_s(double s) {
  if (!std::isfinite(s) || s < 0) {
    throw py::value_error("time must be a finite number of seconds >= 0, got " + std::to_string(s));
  }
  return Time::zero() + Duration::ns(static_cast<int64_t>(std::llround(s * 1e9)));
}

Duration duration_from_s(double s, const char* name) {
  if (!std::isfinite(s) || s < 0) {
    throw py::value_error(std::string(name) + ": expected seconds >= 0, got " + std::to_string(s));
  }
  return Duration::ns(static_cast<int64_t>(std::llround(s * 1e9)));
}

// Every run of the scenario file, simulated in order (the GIL released meanwhile); the results
// document as JSON. Errors: ValueError with the one-line message naming file, line and key.
std::string run_json(const std::string& path, std::optional<uint64_t> seed) {
  config::LoadedScenario loaded;
  try {
    loaded = config::load_scenario_file(path);
  } catch (const config::ConfigError& e) {
    throw py::value_error(e.what());
  }
  report::Results results;
  results.meta.nicsim_version = NICSIM_VERSION;
  results.meta.command_line = {"python3", "nicsim.run", path};
  const auto wall_start = std::chrono::steady_clock::now();
  {
    py::gil_scoped_release unlocked;
    for (config::Run run : loaded.runs) {
      if (seed) {
        run.scenario.seed = *seed;
      }
      try {
        sim::Simulation simulation(run);
        results.runs.push_back(simulation.run());
        results.meta.events += simulation.events();
        results.meta.runs.push_back(report::RunMeta{run.label, 0, simulation.events(), 0});
      } catch (const std::invalid_argument& e) {  // InvalidParams too
        py::gil_scoped_acquire locked;
        throw py::value_error(path + ": run '" + run.label + "': " + e.what());
      }
    }
  }
  results.meta.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return report::to_json(results);
}

// A packet leaving a queue, as a dict: what the caller put in, and its sojourn.
py::dict packet_dict(const Packet& p, Time now) {
  py::dict d;
  d["id"] = p.id;
  d["len"] = p.len;
  d["flow_hash"] = p.flow_hash;
  d["flow_id"] = p.flow_id;
  d["tos"] = p.tos;
  d["sojourn_s"] = (now - p.enqueue_ts).to_seconds();
  return d;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kQueued:
      return "queued";
    case Verdict::kDropped:
      return "dropped";
    case Verdict::kCongested:
      return "congested";
  }
  return "unknown";
}

Packet make_packet(uint64_t id, uint32_t len, uint32_t flow_hash, uint32_t flow_id, uint8_t tos) {
  Packet p;
  p.id = id;
  p.len = len;
  p.flow_hash = flow_hash;
  p.flow_id = flow_id;
  p.tos = tos;
  return p;
}

algo::FqCodel make_fq_codel(int64_t limit, int64_t flows, int64_t memory_limit, int64_t quantum,
                            double target, double interval, bool ecn, int64_t drop_batch) {
  algo::FqCodel::Params p;
  p.limit = limit;
  p.flows = flows;
  p.memory_limit = memory_limit;
  p.quantum = quantum;
  p.target = duration_from_s(target, "target");
  p.interval = duration_from_s(interval, "interval");
  p.ecn = ecn;
  p.drop_batch = drop_batch;
  if (const Validation v = p.validate()) {
    throw py::value_error("FqCodel: " + v->to_string());
  }
  return algo::FqCodel(p);
}

py::dict fq_codel_stats(const algo::FqCodel& q) {
  const algo::FqCodel::Stats& s = q.stats();
  py::dict d;
  d["enqueued_packets"] = s.enqueued_packets;
  d["dequeued_packets"] = s.dequeued_packets;
  d["dropped_packets"] = s.dropped_packets;
  d["ecn_marked"] = s.ecn_marked;
  d["drop_overlimit"] = s.drop_overlimit;
  d["drop_overmemory"] = s.drop_overmemory;
  d["new_flow_count"] = s.new_flow_count;
  d["codel_drop_count"] = s.codel.drop_count;
  return d;
}

}  // namespace
}  // namespace nicsim::python

PYBIND11_MODULE(_nicsim, m) {
  using namespace nicsim;
  using namespace nicsim::python;
  m.doc() = "nicsim's C++ core (use the nicsim package: nicsim.run, nicsim.algo)";
  m.attr("__version__") = NICSIM_VERSION;
  m.def("run_json", &run_json, py::arg("path"), py::arg("seed") = py::none(),
        "Simulate every run of a scenario file; the results document as JSON (docs/results.md).");

  py::module_ algo = m.def_submodule("algo", "queueing elements and BQL, stepped by your clock");
  py::class_<algo::FqCodel>(algo, "FqCodel",
                            "fq_codel (RFC 8290, Linux sch_fq_codel.c); times in seconds")
      .def(py::init(&make_fq_codel), py::arg("limit") = 10240, py::arg("flows") = 1024,
           py::arg("memory_limit") = 32 << 20, py::arg("quantum") = 1514, py::arg("target") = 0.005,
           py::arg("interval") = 0.1, py::arg("ecn") = true, py::arg("drop_batch") = 64)
      .def(
          "enqueue",
          [](algo::FqCodel& q, double now, uint32_t len, uint32_t flow_hash, uint32_t flow_id,
             uint8_t tos, uint64_t id) {
            return verdict_name(
                q.enqueue(make_packet(id, len, flow_hash, flow_id, tos), time_from_s(now)));
          },
          py::arg("now"), py::arg("len"), py::arg("flow_hash"), py::arg("flow_id") = 0,
          py::arg("tos") = 0, py::arg("id") = 0,
          "Offer a packet at time `now`: 'queued', 'dropped' or 'congested'.")
      .def(
          "dequeue",
          [](algo::FqCodel& q, double now) -> py::object {
            const Time t = time_from_s(now);
            std::optional<Packet> p = q.dequeue(t);
            return p ? py::object(packet_dict(*p, t)) : py::object(py::none());
          },
          py::arg("now"), "The next packet (a dict with its sojourn_s) or None when empty.")
      .def_property_readonly("backlog_packets", &algo::FqCodel::backlog_packets)
      .def_property_readonly("backlog_bytes", &algo::FqCodel::backlog_bytes)
      .def_property_readonly("stats", &fq_codel_stats)
      .def("classify", &algo::FqCodel::classify, py::arg("flow_hash"),
           "The flow queue a hash maps to.");

  py::class_<algo::Dql>(algo, "Dql", "BQL (Linux lib/dynamic_queue_limits.c); times in seconds")
      .def(py::init([](int64_t min_limit, int64_t max_limit, double hold_time, int64_t hz) {
             algo::Dql::Params p;
             p.min_limit = min_limit;
             p.max_limit = max_limit;
             p.hold_time = duration_from_s(hold_time, "hold_time");
             p.hz = hz;
             if (const Validation v = p.validate()) {
               throw py::value_error("Dql: " + v->to_string());
             }
             return algo::Dql(p);
           }),
           py::arg("min_limit") = 0, py::arg("max_limit") = algo::kDqlMaxLimit,
           py::arg("hold_time") = 1.0, py::arg("hz") = 250)
      .def("queued", &algo::Dql::queued, py::arg("bytes"), "netdev_tx_sent_queue")
      .def(
          "completed",
          [](algo::Dql& d, uint32_t bytes, double now) { d.completed(bytes, time_from_s(now)); },
          py::arg("bytes"), py::arg("now"), "netdev_tx_completed_queue")
      .def_property_readonly("avail", &algo::Dql::avail)
      .def_property_readonly("limit", &algo::Dql::limit)
      .def_property_readonly("inflight", &algo::Dql::inflight);
}

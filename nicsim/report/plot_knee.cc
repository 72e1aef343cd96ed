// gnuplot 5.4 (Debian 12 gnuplot-nox): `linespoints`, `with labels`, one data block per series.
#include "nicsim/report/plot_knee.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "nicsim/report/export_csv.h"
#include "nicsim/report/export_flent.h"
#include "nicsim/report/plot_campaign.h"
#include "nicsim/report/run_statistics.h"

namespace nicsim::report {
namespace {

// Keys that move a point along its curve (fixed coalescing) or choose its mode.
// (Also a brace group: "hosts.b.nic.{rx_coalesce,tx_coalesce}.usecs".)
bool is_coalescing_key(const std::string& key) {
  return key.find("rx_coalesce") != std::string::npos;
}
bool ends_in(const std::string& key, const std::string& last) {
  return key == last || key.ends_with("." + last);
}
bool is_mode_key(const std::string& key) {
  return ends_in(key, "gro") || ends_in(key, "adaptive_rx");
}

// A key's last part ("hosts.b.nic.rx_coalesce.usecs" -> "usecs").
std::string short_key(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

// The host whose receive side the point shows: the named one, else the most frames received.
const RxBatching* knee_host(const Run& r, const KneeSpec& spec, std::string* name) {
  const RxBatching* best = nullptr;
  for (const auto& [host, b] : r.rx_batching) {
    if (spec.host.empty() ? (best == nullptr || b.frames > best->frames) : host == spec.host) {
      best = &b;
      *name = host;
    }
  }
  return best;
}

std::string run_name(const PlotRun& p) {
  return p.file + (p.run->label.empty() ? "" : " run '" + p.run->label + "'");
}

double metric_value(const PlotRun& p, const std::string& metric) {
  for (const MetricValue& m : run_metrics(*p.run)) {
    if (m.name == metric) {
      return m.value;
    }
  }
  throw ExportError(run_name(p) + " has no metric " + metric);
}

double goodput_mbit(const Run& r) {
  double bps = r.goodput_bps[Direction::kAtoB] + r.goodput_bps[Direction::kBtoA];
  for (const auto& [name, f] : r.udp_flood) {
    bps += f.received_bps;
  }
  return bps / 1e6;
}

std::string num(double v) { return csv_number(v); }

// Goodput in a point's label: "9.27G" (Gbit/s, 3 significant digits).
std::string gbit_text(double mbit) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3gG", mbit / 1e3);
  return buf;
}

}  // namespace

std::string knee_y_title(const KneeSpec& spec) {
  if (spec.y == "mean" || spec.y.empty()) {
    return "latency added by the receive path, mean (us)";
  }
  if (spec.y == "p99") {
    return "latency added by the receive path, p99 (us)";
  }
  return spec.y;
}

std::vector<KneePoint> knee_points(const std::vector<PlotRun>& runs, const KneeSpec& spec) {
  std::vector<KneePoint> out;
  for (const PlotRun& p : runs) {
    std::string host;
    const RxBatching* b = knee_host(*p.run, spec, &host);
    if (b == nullptr) {
      throw ExportError(run_name(p) + " has no rx_batching" +
                        (spec.host.empty() ? "" : " for host " + spec.host) +
                        " (written when a run varies gro, adaptive_rx or rx_coalesce; "
                        "docs/rx-batching.md)");
    }
    if (b->frames == 0 || b->rx_latency_ms.count == 0) {
      throw ExportError(run_name(p) + ": host " + host +
                        " received no frames, or the file predates the knee's fields "
                        "(rx_latency_ms, cpu_ns_per_frame)");
    }
    KneePoint k;
    k.series =
        std::string("GRO ") + (b->gro ? "on" : "off") + (b->adaptive_rx ? ", DIM" : ", fixed");
    for (const RunParam& param : p.run->params) {
      if (is_mode_key(param.key)) {
        continue;
      }
      // The curve's points are labelled with their coalescing value alone ("50us").
      const std::string value = param_value_text(param.value);
      if (is_coalescing_key(param.key)) {
        k.label += (k.label.empty() ? "" : " ") + value;
      } else {
        k.series += ", " + short_key(param.key) + "=" + value;
      }
    }
    if (k.label.empty()) {
      k.label = b->adaptive_rx ? "DIM" : "";
    }
    k.cpu_ns_per_frame = b->cpu_ns_per_frame;
    k.y = spec.y == "mean" || spec.y.empty() ? b->rx_latency_ms.mean * 1e3
          : spec.y == "p99"                  ? b->rx_latency_ms.p99 * 1e3
                                             : metric_value(p, spec.y);
    k.goodput_mbit = goodput_mbit(*p.run);
    k.irqs_per_s = b->irqs_per_s;
    k.frames_per_packet = b->frames_per_packet;
    out.push_back(std::move(k));
  }
  return out;
}

GnuplotJob knee_job(const std::vector<PlotRun>& runs, const KneeSpec& spec, const PlotStyle& style,
                    const std::string& output, const std::string& data_dir) {
  const std::vector<KneePoint> points = knee_points(runs, spec);
  if (points.empty()) {
    throw ExportError("no runs to plot");
  }
  // One block per series (first-seen order), its points in order of x: the curve.
  std::vector<std::string> series;
  std::map<std::string, std::vector<const KneePoint*>> members;
  for (const KneePoint& k : points) {
    if (!members.contains(k.series)) {
      series.push_back(k.series);
    }
    members[k.series].push_back(&k);
  }
  const std::string file = gnuplot_quote(data_dir.empty() ? "knee.dat" : data_dir + "/knee.dat");
  std::string data = "# cpu_ns_per_frame y goodput_mbit irqs_per_s frames_per_packet label (" +
                     knee_y_title(spec) + "; one block per series, one row per run)\n";
  std::string plot;
  for (size_t i = 0; i < series.size(); ++i) {
    auto& m = members[series[i]];
    std::stable_sort(m.begin(), m.end(), [](const KneePoint* a, const KneePoint* b) {
      return a->cpu_ns_per_frame < b->cpu_ns_per_frame;
    });
    data += "# series " + series[i] + "\n";
    for (const KneePoint* k : m) {
      data += num(k->cpu_ns_per_frame) + " " + num(k->y) + " " + num(k->goodput_mbit) + " " +
              num(k->irqs_per_s) + " " + num(k->frames_per_packet) + " " +
              gnuplot_data_string(k->label + " " + gbit_text(k->goodput_mbit)) + "\n";
    }
    data += "\n\n";  // gnuplot: a new index
    const std::string idx = " index " + std::to_string(i);
    plot += std::string(plot.empty() ? "plot " : ", ") + file + idx +
            " using 1:2 with linespoints lw 1.5 pt 7 ps 1.1 lt " + std::to_string(i + 1) +
            " title " + gnuplot_quote(series[i]) + ", " + file + idx +
            " using 1:2:6 with labels offset 0.8,0.6 left font ',7' tc lt " +
            std::to_string(i + 1) + " notitle";
  }
  std::string s = gnuplot_terminal(style, series.size());
  s += "set output " + gnuplot_quote(output) + "\n";
  s += gnuplot_title(style, "Receive batching: latency added vs CPU per frame, one point per run");
  s += "set xlabel 'receiving core busy time per received frame (ns)'\n";
  s += "set ylabel " + gnuplot_quote(knee_y_title(spec)) + "\n";
  // Log y: the curve spans microseconds (no coalescing) to a saturated ring's milliseconds.
  s += spec.y.empty() || spec.y == "mean" || spec.y == "p99" ? "set logscale y\nset yrange [1:*]\n"
                                                             : "";
  s += "set offsets graph 0.05, graph 0.2, graph 0.1, graph 0.05\nset grid\n"
       "set key outside bottom center horizontal\n";
  return {s + plot + "\n", {{"knee.dat", data}}};
}

}  // namespace nicsim::report

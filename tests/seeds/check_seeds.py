#!/usr/bin/python3
"""Checks the three seed runs against tests/seeds/expected.toml and docs/seeds.md.

Usage: check_seeds.py WORK SOURCE_DIR [--write-docs]
WORK holds <scenario>.json (`nicsim run --json`) and <scenario>.txt (`nicsim run --quiet`) for
each seed scenario (tests/seeds/seeds_test.sh makes them). Checks, each printed ok/FAIL:
  1. every metric of expected.toml, run by run, exactly (4 significant digits, counts exact);
  2. the published directions and bands of docs/seeds.md ("Asserted" under each seed);
  3. the published comparison: each JSON `comparison` row's simulated value is the run's own
     metric (goodput, retransmits, ping mean/min/max/mdev) and its error (sim - pub) / pub; the
     printed table (--quiet) shows the same rows, the pinned values and each run's summary line;
  4. docs/seeds.md's result tables are the ones rendered from expected.toml (--write-docs
     rewrites them instead).
"""
import json
import math
import re
import sys
import tomllib

work, src = sys.argv[1], sys.argv[2]
write_docs = "--write-docs" in sys.argv[3:]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def fmt4(v):
    """nicsim's %.4g, the precision of the comparison table and of expected.toml."""
    return f"{v:.4g}"


# --- the runs' metrics ---------------------------------------------------------------------
def scenarios_of(spec):
    """A seed's scenario files (names under scenarios/: "stmmac-bql" is scenarios/seeds/)."""
    return spec["scenario"] if isinstance(spec["scenario"], list) else [spec["scenario"]]


def run_key(spec, scenario, label):
    """A run's key in expected.toml: its label, or "<scenario> <label>" for a seed with several
    scenario files (S4: the cable modem alone and behind the home router)."""
    if not isinstance(spec["scenario"], list):
        return label
    return f"{scenario} {label}".strip()


def load_runs(spec):
    runs = {}
    for scenario in scenarios_of(spec):
        with open(f"{work}/{scenario}.json") as f:
            runs.update({run_key(spec, scenario, r["label"]): r for r in json.load(f)["runs"]})
    return runs


def metrics_of(run):
    """Every metric expected.toml may name, from one run of the results JSON."""
    m = {"goodput_mbit": sum(run["goodput_bps"].values()) / 1e6,
         "retransmits": run["retransmits"]}
    ping = run["latency_ms"].get("ping")
    if ping is not None:
        m.update(ping_ms=ping["mean"], ping_min_ms=ping["min"], ping_max_ms=ping["max"],
                 ping_mdev_ms=ping["mdev"])
    lul = run.get("latency_under_load")
    if lul is not None:  # rrul runs: the load phase (docs/rrul.md)
        m.update(idle_latency_ms=lul["idle_rtt"]["mean"], loaded_latency_ms=lul["loaded_rtt"]["mean"])
        for direction, bps in lul["goodput_bps"].items():
            m[f"load_goodput_{direction.replace('->', '_to_')}_mbit"] = bps / 1e6
    for direction, stages in run["stages"].items():
        for s in stages:
            m[f"{s['stage']}_{direction.replace('->', '_to_')}_ms"] = s["mean_ms"]
    return m


def same_at_4_digits(got, want):
    if isinstance(want, int) and not isinstance(want, bool):
        return got == want
    return float(fmt4(got)) == float(want)


with open(f"{src}/tests/seeds/expected.toml", "rb") as f:
    expected = tomllib.load(f)
runs = {seed: load_runs(spec) for seed, spec in expected.items()}
measured = {seed: {label: metrics_of(r) for label, r in rs.items()} for seed, rs in runs.items()}

# --- 1. pinned values ----------------------------------------------------------------------
for seed, spec in expected.items():
    check(sorted(runs[seed]) == sorted(spec["runs"]),
          f"{seed} runs {sorted(runs[seed])} are expected.toml's {sorted(spec['runs'])}")
    for label, want in spec["runs"].items():
        got = measured[seed].get(label, {})
        for metric in spec["metrics"]:
            if metric not in got:
                check(False, f"{seed} [{label}] {metric}: not in the results")
                continue
            check(same_at_4_digits(got[metric], want[metric]),
                  f"{seed} [{label}] {metric} = {fmt4(got[metric])}, expected {want[metric]}")


# --- 2. published directions and bands (docs/seeds.md) -------------------------------------
def within(value, target, frac):
    return abs(value - target) <= frac * target


s1 = measured["S1"]
off, on = s1["turbo_mode=false"], s1["turbo_mode=true"]
ping_counts = [runs["S1"][k]["latency_ms"]["ping"] for k in ("turbo_mode=false", "turbo_mode=true")]
check(on["goodput_mbit"] > 2 * off["goodput_mbit"],
      f"S1 turbo on goodput {on['goodput_mbit']:.1f} > 2 x turbo off {off['goodput_mbit']:.1f}")
check(all(p["count"] == 21 and p["lost"] == 0 for p in ping_counts),
      "S1 21 idle pings answered in both runs")
check(on["ping_ms"] > off["ping_ms"] and on["ping_min_ms"] > off["ping_min_ms"],
      "S1 idle RTT mean and min higher with turbo")
check(on["ping_ms"] - off["ping_ms"] < 0.3,
      "S1 turbo adds less than 0.3 ms idle RTT (one bulk-in delay + a microframe)")

g = [measured["S2"][f"rx_burst={k}KiB"]["goodput_mbit"] for k in (2, 4, 8, 16)]
check(g[0] < g[1] < g[2] < g[3], "S2 goodput rises with the burst: " +
      " < ".join(f"{x:.1f}" for x in g))
check(g[3] > 3 * g[0], f"S2 16K goodput {g[3]:.1f} > 3 x 2K {g[0]:.1f} Mbit/s")
check(within(g[0], 50, 0.3), f"S2 2K goodput {g[0]:.1f} within 50 Mbit/s +-30 %")
check(within(g[3], 220, 0.3), f"S2 16K goodput {g[3]:.1f} within 220 Mbit/s +-30 %")

s3 = measured["S3"]
n_off, n_on = s3["bql=false rate=100Mbit"], s3["bql=true rate=100Mbit"]
g_off, g_on = s3["bql=false rate=1Gbit"], s3["bql=true rate=1Gbit"]
check(n_off["goodput_mbit"] > 90 and n_on["goodput_mbit"] > 90,
      "S3 100 Mbit/s: the link is saturated with and without BQL")
check(within(n_off["ping_ms"], 10.0, 0.4),
      f"S3 100 Mbit/s ping without BQL {n_off['ping_ms']:.2f} ms within 10 ms +-40 %")
check(n_on["ring_a_to_b_ms"] * 3 < n_off["ring_a_to_b_ms"],
      "S3 100 Mbit/s BQL cuts the driver-ring wait more than 3x")
check(n_on["ping_ms"] <= n_off["ping_ms"], "S3 100 Mbit/s BQL does not raise the ping")
check(within(g_off["goodput_mbit"], 600, 0.2) and within(g_on["goodput_mbit"], 600, 0.2),
      "S3 1 Gbit/s: CPU-bound TX within 600 Mbit/s +-20 % with and without BQL")
check(within(g_on["ping_ms"], g_off["ping_ms"], 0.3),
      "S3 1 Gbit/s BQL changes the ping by less than 30 %")

# --- 3. the published comparison, in the JSON and as printed -------------------------------
# Which run metric each published metric maps to (docs/scenarios.md, [published]).
published_metrics = ("goodput_mbit", "retransmits", "ping_ms", "ping_min_ms", "ping_max_ms",
                     "ping_mdev_ms", "loaded_latency_ms")


def printed_blocks(spec):
    """run key -> (summary line, {metric: (published, simulated, error)}) from --quiet."""
    blocks = {}
    for scenario in scenarios_of(spec):
        label = None
        with open(f"{work}/{scenario}.txt") as f:
            for line in f:
                head = re.match(r"run (.*?): (.*)$", line.rstrip("\n"))
                if head:
                    # `nicsim run` prints an unlabelled run (no [vary]) as "(single)".
                    printed_label = "" if head.group(1) == "(single)" else head.group(1)
                    label = run_key(spec, scenario, printed_label)
                    blocks[label] = (head.group(2), {})
                    continue
                row = re.match(r"(\w+)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*$", line)
                if label is not None and row and row.group(1) != "metric":
                    blocks[label][1][row.group(1)] = row.group(2, 3, 4)
    return blocks


published = {}  # seed -> label -> metric -> published value (for the docs tables)
for seed, spec in expected.items():
    printed = printed_blocks(spec)
    published[seed] = {}
    for label, run in runs[seed].items():
        own = measured[seed][label]
        rows = {c["metric"]: c for c in run["comparison"]}
        published[seed][label] = {m: c["published"] for m, c in rows.items()}
        summary, table = printed.get(label, ("", {}))
        want_summary = f"goodput {fmt4(own['goodput_mbit'])} Mbit/s"
        check(f" {fmt4(own['goodput_mbit'])} Mbit/s, retransmits {own['retransmits']}" in summary,
              f"{seed} [{label}] printed summary '{summary}' has {want_summary} and the "
              f"retransmits")
        check(sorted(table) == sorted(rows),
              f"{seed} [{label}] printed comparison rows {sorted(table)} = JSON {sorted(rows)}")
        for metric, c in rows.items():
            check(metric in published_metrics and math.isclose(c["simulated"], own[metric],
                                                                rel_tol=1e-9),
                  f"{seed} [{label}] comparison {metric}: simulated {c['simulated']} is the "
                  f"run's own {metric} {own[metric]}")
            err = (c["simulated"] - c["published"]) / c["published"]
            check(math.isclose(c["relative_error"], err, rel_tol=1e-9, abs_tol=1e-12),
                  f"{seed} [{label}] comparison {metric}: error {c['relative_error']:+.4f}")
            pub, sim, perr = table.get(metric, ("?", "?", "?"))
            want = spec["runs"][label].get(metric)
            check(float(pub) == float(fmt4(c["published"])) if pub != "?" else False,
                  f"{seed} [{label}] printed {metric} published {pub}")
            check(want is not None and sim != "?" and float(sim) == float(want),
                  f"{seed} [{label}] printed {metric} simulated {sim}, expected {want}")
            check(perr == f"{err * 100:+.1f}%", f"{seed} [{label}] printed {metric} error {perr}")

# --- 4. docs/seeds.md tables, rendered from expected.toml ----------------------------------
LABELS = {
    "goodput_mbit": "goodput (Mbit/s)",
    "retransmits": "retransmits",
    "ping_ms": "ping avg (ms)",
    "ping_min_ms": "ping min (ms)",
    "ping_max_ms": "ping max (ms)",
    "ping_mdev_ms": "ping mdev (ms)",
    "qdisc_a_to_b_ms": "qdisc wait a→b (ms)",
    "ring_a_to_b_ms": "driver ring wait a→b (ms)",
    "rx_b_to_a_ms": "rx wait b→a (ms)",
}


def number(v):
    return str(v) if isinstance(v, int) else fmt4(v)


def error(sim, pub):
    e = (sim - pub) / pub * 100
    return (f"{e:+.1f} %" if abs(e) < 10 else f"{e:+.0f} %").replace("-", "−")


def cells(seed, label, metric):
    """published | simulated | error for one metric of one run."""
    sim = expected[seed]["runs"][label][metric]
    pub = published[seed].get(label, {}).get(metric)
    if pub is None:
        return ["—", number(sim), ""]
    return [f"{pub:g}", number(sim), error(sim, pub)]


def render(seed):
    spec = expected[seed]
    labels = list(spec["runs"])
    name = {label: spec["runs"][label]["name"] for label in labels}
    if spec["layout"] == "metric-rows":
        head = ["metric"]
        for label in labels:
            head += [f"{name[label]}: published", "simulated", "error"]
        body = [[LABELS[m]] + sum((cells(seed, label, m) for label in labels), [])
                for m in spec["metrics"]]
    else:
        with_pub = [m for m in spec["metrics"]
                    if any(m in published[seed].get(label, {}) for label in labels)]
        head = ["run"]
        for m in spec["metrics"]:
            head += [f"{LABELS[m]}, published", "simulated", "error"] if m in with_pub else [
                LABELS[m]]
        body = []
        for label in labels:
            row = [name[label]]
            for m in spec["metrics"]:
                row += cells(seed, label, m) if m in with_pub else [number(
                    spec["runs"][label][m])]
            body.append(row)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(lines)


docs_path = f"{src}/docs/seeds.md"
with open(docs_path) as f:
    docs = f.read()
for seed in expected:
    begin = f"<!-- {seed} table: generated from tests/seeds/expected.toml by check_seeds.py -->\n"
    end = f"\n<!-- end of {seed} table -->"
    pattern = re.compile(re.escape(begin) + r"(.*?)" + re.escape(end), re.S)
    found = pattern.search(docs)
    table = render(seed)
    if write_docs and found:
        docs = docs[:found.start(1)] + table + docs[found.end(1):]
        continue
    check(found is not None and found.group(1) == table,
          f"{seed} docs/seeds.md table is the one rendered from expected.toml" +
          ("" if found else " (markers missing)") +
          ("" if not found or found.group(1) == table else ":\n" + table))
if write_docs:
    with open(docs_path, "w") as f:
        f.write(docs)
    print(f"wrote the tables into {docs_path}")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)

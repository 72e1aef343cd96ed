#!/usr/bin/python3
"""Checks that flent's statistics of a nicsim .flent.gz equal nicsim's own numbers.

Usage: check_flent_stats.py RESULTS.json RUN_INDEX FLENT_STATS.txt FILE.flent.gz N_SERIES
  FLENT_STATS.txt is the output of `flent -i FILE.flent.gz -f stats`. Each series of the
  flent file is mapped back to its flow or probe through SERIES_META (NICSIM_DIRECTION +
  NICSIM_FLOW_ID, NICSIM_PROBE); N_SERIES is how many series must have been checked.
  TCP flows: mean = the flow's goodput, total = bytes delivered in the intervals of the
  flow's life, min/max/median of those intervals' rates. Probes with per-sample series: count, min, p50, p99, max, mean, mdev equal
  the probe's statistics; without samples: mean/median of the per-interval means.
Exit status 1 with one line per difference.
"""
import gzip
import json
import re
import sys

import numpy as np

results, run_index, stats_txt, flent_file, n_series = sys.argv[1:6]
run = json.load(open(results))["runs"][int(run_index)]
doc = json.load(gzip.open(flent_file, "rt"))
meta = doc["metadata"]["SERIES_META"]

stats, cur = {}, None
for line in open(stats_txt):
    m = re.match(r"^ (\S.*):$", line.rstrip("\n"))
    if m:
        cur = stats.setdefault(m.group(1), {})
        continue
    m = re.match(r"^  ([^:]+):\s+(-?[0-9.]+)", line)
    if m and cur is not None:
        cur[m.group(1).strip()] = float(m.group(2))

problems = []


def same(what, got, want, tol=2e-6):
    # flent prints 6 decimals
    if abs(got - want) > tol * max(1.0, abs(want)):
        problems.append("%s: flent %r, nicsim %r" % (what, got, want))


checked = 0
for name, sm in meta.items():
    s = stats.get(name)
    if s is None:
        problems.append("flent printed no statistics for %s" % name)
        continue
    if "NICSIM_FLOW_ID" in sm:
        d, fid = sm["NICSIM_DIRECTION"], sm["NICSIM_FLOW_ID"]
        flow = [f for f in run["transfer"][d]["flows"] if f["id"] == fid][0]
        # the flow's life (documented in docs/exports.md): outside it flent has no sample
        life = (min(flow["sender"]["start_s"], flow["receiver"]["start_s"]),
                max(flow["sender"]["end_s"], flow["receiver"]["end_s"]))
        samples = [f for iv in run["intervals"] for f in iv["directions"][d]["flows"]
                   if f["id"] == fid and iv["end_s"] > life[0] and iv["start_s"] < life[1]]
        rates = [f["bits_per_second"] / 1e6 for f in samples]
        if not s:  # flent prints "No data." when the mean is 0 or absent
            if any(rates):
                problems.append("%s: flent has no data, nicsim rates %r" % (name, rates))
            checked += 1
            continue
        if flow["receiver"]["bits_per_second"] > 0:
            same(name + " mean = goodput", s["Mean"], flow["receiver"]["bits_per_second"] / 1e6)
        same(name + " total = bytes delivered in the intervals", s["Total"],
             sum(f["bytes"] for f in samples) * 8 / 1e6)
        same(name + " min", s["Min"], min(rates))
        same(name + " max", s["Max"], max(rates))
        same(name + " median", s["Median"], float(np.median(rates)))
        checked += 1
    elif "NICSIM_PROBE" in sm:
        probe = sm["NICSIM_PROBE"]
        p = run["latency_ms"][probe]
        if not s:  # "No data.": no sample received
            if p["count"] != 0:
                problems.append("%s: flent has no data, nicsim %d samples" % (name, p["count"]))
            checked += 1
            continue
        if p.get("series", {}).get("time_s"):
            same(name + " count", s["Data points"], p["count"])
            for key, fk in (("min", "Min"), ("p50", "Median"), ("p99", "99th %"),
                            ("max", "Max"), ("mean", "Mean"), ("mdev", "Std dev")):
                same(name + " " + key, s[fk], p[key])
        else:
            means = [iv["latency_ms"][probe] for iv in run["intervals"]
                     if probe in iv["latency_ms"]]
            same(name + " mean", s["Mean"], float(np.mean(means)))
            same(name + " median", s["Median"], float(np.median(means)))
            same(name + " data points", s["Data points"], len(means))
        checked += 1
if checked != int(n_series):
    problems.append("checked %d series, want %s" % (checked, n_series))
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)

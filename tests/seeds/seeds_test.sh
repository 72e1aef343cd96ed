#!/usr/bin/env bash
# Scenario test (CTest: seeds): runs the three shipped seed scenarios with `nicsim run --json`
# and checks the DIRECTIONS and BANDS the seeds report (docs/seeds.md), never exact floats and
# never wall-clock times:
#  S1 smsc95xx-turbo: turbo on gives more than 2x the TCP goodput of turbo off and a higher idle
#     RTT (mean and min), by less than 0.3 ms (the bulk-in delay is 136.5 us).
#  S2 ax88178-burst: goodput rises with the RX burst (2K < 4K < 8K < 16K); 16K gives more than
#     3x 2K; 2K within 50 Mbit/s +-30 %, 16K within 220 Mbit/s +-30 %.
#  S3 stmmac-bql: at 100 Mbit/s the link is saturated either way, the ping without BQL is near
#     the published ~10 ms (+-40 %), BQL cuts the time frames wait in the driver ring at least 3x
#     and does not raise the ping; at 1 Gbit/s the board is CPU-bound near 600 Mbit/s (+-20 %)
#     and BQL changes the ping by less than 30 %.
#     (The published ~10 -> ~3 ms ping drop is NOT reproduced - docs/seeds.md explains why - so
#     it is not asserted.)
# Usage: seeds_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export NICSIM_PRESETS="$src/presets"
for s in smsc95xx-turbo ax88178-burst stmmac-bql; do
  "$nicsim" run "$src/scenarios/seeds/$s.toml" --quiet --json "$work/$s.json" > "$work/$s.txt"
done

python3 - "$work" <<'PY'
import json
import sys

work = sys.argv[1]
failures = []


def runs(name):
    with open(f"{work}/{name}.json") as f:
        return {r["label"]: r for r in json.load(f)["runs"]}


def goodput(run):
    return sum(run["goodput_bps"].values()) / 1e6


def ping(run):
    return run["latency_ms"]["ping"]


def stage(run, direction, name):
    for s in run["stages"][direction]:
        if s["stage"] == name:
            return s["mean_ms"]
    raise KeyError(name)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def within(value, target, frac):
    return abs(value - target) <= frac * target


# --- S1: turbo mode ------------------------------------------------------------------------
s1 = runs("smsc95xx-turbo")
off, on = s1["turbo_mode=false"], s1["turbo_mode=true"]
check(goodput(on) > 2 * goodput(off),
      f"S1 turbo on goodput {goodput(on):.1f} > 2 x turbo off {goodput(off):.1f} Mbit/s")
check(ping(off)["count"] == 21 and ping(on)["count"] == 21 and ping(on)["lost"] == 0,
      "S1 21 idle pings answered in both runs")
check(ping(on)["mean"] > ping(off)["mean"],
      f"S1 idle RTT turbo on {ping(on)['mean']:.3f} > off {ping(off)['mean']:.3f} ms")
check(ping(on)["min"] > ping(off)["min"],
      f"S1 min idle RTT turbo on {ping(on)['min']:.3f} > off {ping(off)['min']:.3f} ms")
check(ping(on)["mean"] - ping(off)["mean"] < 0.3,
      "S1 turbo adds less than 0.3 ms idle RTT (one bulk-in delay + a microframe)")

# --- S2: ASIX RX burst ---------------------------------------------------------------------
s2 = runs("ax88178-burst")
g = [goodput(s2[f"rx_burst={k}KiB"]) for k in (2, 4, 8, 16)]
check(g[0] < g[1] < g[2] < g[3],
      "S2 goodput rises with the burst: " + " < ".join(f"{x:.1f}" for x in g))
check(g[3] > 3 * g[0], f"S2 16K goodput {g[3]:.1f} > 3 x 2K {g[0]:.1f} Mbit/s")
check(within(g[0], 50, 0.3), f"S2 2K goodput {g[0]:.1f} within 50 Mbit/s +-30 %")
check(within(g[3], 220, 0.3), f"S2 16K goodput {g[3]:.1f} within 220 Mbit/s +-30 %")

# --- S3: stmmac BQL ------------------------------------------------------------------------
s3 = runs("stmmac-bql")
n_off, n_on = s3["bql=false rate=100Mbit"], s3["bql=true rate=100Mbit"]
g_off, g_on = s3["bql=false rate=1Gbit"], s3["bql=true rate=1Gbit"]
for label, r in (("off", n_off), ("on", n_on)):
    check(goodput(r) > 90, f"S3 100 Mbit/s BQL {label}: link saturated ({goodput(r):.1f} Mbit/s)")
check(within(ping(n_off)["mean"], 10.0, 0.4),
      f"S3 100 Mbit/s ping without BQL {ping(n_off)['mean']:.2f} ms within 10 ms +-40 %")
ring_off, ring_on = stage(n_off, "a->b", "ring"), stage(n_on, "a->b", "ring")
check(ring_on * 3 < ring_off,
      f"S3 100 Mbit/s BQL cuts the driver-ring wait {ring_off:.2f} -> {ring_on:.2f} ms (> 3x)")
check(ping(n_on)["mean"] <= ping(n_off)["mean"],
      f"S3 100 Mbit/s BQL does not raise the ping ({ping(n_off)['mean']:.2f} -> "
      f"{ping(n_on)['mean']:.2f} ms)")
for label, r in (("off", g_off), ("on", g_on)):
    check(within(goodput(r), 600, 0.2),
          f"S3 1 Gbit/s BQL {label}: CPU-bound TX {goodput(r):.0f} Mbit/s within 600 +-20 %")
check(within(ping(g_on)["mean"], ping(g_off)["mean"], 0.3),
      f"S3 1 Gbit/s BQL changes the ping little ({ping(g_off)['mean']:.2f} -> "
      f"{ping(g_on)['mean']:.2f} ms, within 30 %)")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
PY

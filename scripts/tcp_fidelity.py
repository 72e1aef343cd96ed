#!/usr/bin/env python3
"""The simulator's TCP against this machine's Linux TCP through the same bottleneck.

Usage: sudo scripts/tcp_fidelity.py [NICSIM] [--out DIR] [--band PCT] [--reuse]

Runs scenarios/transport/tcp-fidelity.toml (one CUBIC or BBR flow) and
tcp-fidelity-duel.toml (one CUBIC and one BBR flow) through `nicsim run` (the simulator's TCP)
and `nicsim emulate` (the kernel's TCP on real sockets, the router and its qdisc emulated by
the same models), then prints one Markdown table per file: goodput per flow, retransmits,
the loaded ping's p50 and p99, BBR's share in the duel, and for each the simulator's
difference from the kernel. A difference outside +-PCT % (default 20) is marked "**out**";
retransmits and shares are compared by absolute difference where the kernel's count is small
(see docs/fidelity.md "TCP: simulator against the kernel").

A run whose emulator lost real time (release lateness p99 > 100 us or a release > 5 ms late,
from its own summary) is named in a warning on stderr: such stalls bunch frames and ACKs and
make the kernel's column unfaithful (docs/fidelity.md); rerun on a quiet machine.

NICSIM defaults to build/tools/nicsim. Results go to DIR (default build/tcp-fidelity);
--reuse prints the table from the JSON files already there. Emulation needs root, takes
~5 minutes and holds /tmp/nicsim-emu.lock while it runs (as the emu tests do). Exit status:
0 when the table was printed (misses are reported, not failed), 2 on usage errors, 1 when a
run failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = [("single", "scenarios/transport/tcp-fidelity.toml"),
         ("duel", "scenarios/transport/tcp-fidelity-duel.toml")]


def run(cmd, log):
    with open(log, "w") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    if rc != 0:
        sys.exit(f"tcp_fidelity: {' '.join(cmd)} failed (exit {rc}); log: {log}")


def produce(nicsim, out, name, scenario):
    sim = os.path.join(out, f"{name}-sim.json")
    emu = os.path.join(out, f"{name}-emu.json")
    path = os.path.join(ROOT, scenario)
    run([nicsim, "run", path, "--quiet", "--json", sim], os.path.join(out, f"{name}-sim.log"))
    run(["flock", "/tmp/nicsim-emu.lock", nicsim, "emulate", path, "--json", emu],
        os.path.join(out, f"{name}-emu.log"))
    return sim, emu


LATENESS = re.compile(r"release lateness .*: p50 [0-9.]+ us, p99 ([0-9.]+) us, max ([0-9.]+) us")


def lateness_warnings(log, p99_limit_us=100.0, max_limit_us=5000.0):
    """The emulator's own report of lost real time, run by run (docs/fidelity.md: stalls bunch
    frames and ACKs, and the kernel's TCP then bursts into shallow queues). One line per run
    whose release lateness p99 or worst case exceeds the limits."""
    out = []
    try:
        with open(log) as f:
            text = f.read()
    except OSError:
        return out
    for n, (p99, worst) in enumerate(LATENESS.findall(text), 1):
        if float(p99) > p99_limit_us or float(worst) > max_limit_us:
            out.append(f"run {n}: release lateness p99 {p99} us, max {worst} us")
    return out


def runs_by_label(path):
    with open(path) as f:
        return {r["label"]: r for r in json.load(f)["runs"]}


def flows(run):
    """Per flow, in start order (the scenario's order: CUBIC first in the duel): (Mbit/s, retx)."""
    fl = sorted(run["transfer"]["a->b"]["flows"], key=lambda f: f["sender"]["start_s"])
    return [(f["receiver"]["bits_per_second"] / 1e6, f["sender"].get("retransmits", 0)) for f in fl]


def ping(run):
    p = run["latency_ms"]["ping"]
    return p["p50"], p["p99"]


def diff(sim, kernel, band, floor=0.0):
    """Relative difference of sim from kernel in %, marked when outside the band. `floor`: below
    it (absolute), a difference is compared against the floor instead (small counts)."""
    base = max(abs(kernel), floor)
    if base == 0:
        return "0 %" if sim == 0 else "n/a"
    d = 100.0 * (sim - kernel) / base
    mark = "" if abs(d) <= band else " **out**"
    return f"{d:+.0f} %{mark}"


def single_table(sim, emu, band):
    rows = ["| run | goodput sim / kernel (Mbit/s) | diff | retransmits sim / kernel | "
            "ping p50 sim / kernel (ms) | diff | ping p99 sim / kernel (ms) | diff |",
            "|---|---|---|---|---|---|---|---|"]
    for label, s in sim.items():
        k = emu.get(label)
        if k is None:
            continue
        (sg, sr), (kg, kr) = flows(s)[0], flows(k)[0]
        (s50, s99), (k50, k99) = ping(s), ping(k)
        rows.append(f"| {label} | {sg:.1f} / {kg:.1f} | {diff(sg, kg, band)} | {sr} / {kr} | "
                    f"{s50:.1f} / {k50:.1f} | {diff(s50, k50, band)} | {s99:.1f} / {k99:.1f} | "
                    f"{diff(s99, k99, band)} |")
    return "\n".join(rows)


def duel_table(sim, emu, band):
    rows = ["| run | CUBIC sim / kernel (Mbit/s) | BBR sim / kernel (Mbit/s) | BBR share sim / kernel "
            "| diff (points) | retransmits CUBIC+BBR sim / kernel | ping p50 sim / kernel (ms) | diff |",
            "|---|---|---|---|---|---|---|---|"]
    for label, s in sim.items():
        k = emu.get(label)
        if k is None:
            continue
        sf, kf = flows(s), flows(k)
        s_share = sf[1][0] / (sf[0][0] + sf[1][0])
        k_share = kf[1][0] / (kf[0][0] + kf[1][0])
        points = 100 * (s_share - k_share)
        mark = "" if abs(points) <= band else " **out**"
        (s50, _), (k50, _) = ping(s), ping(k)
        rows.append(f"| {label} | {sf[0][0]:.1f} / {kf[0][0]:.1f} | {sf[1][0]:.1f} / {kf[1][0]:.1f} | "
                    f"{s_share:.2f} / {k_share:.2f} | {points:+.0f}{mark} | "
                    f"{sf[0][1]}+{sf[1][1]} / {kf[0][1]}+{kf[1][1]} | {s50:.1f} / {k50:.1f} | "
                    f"{diff(s50, k50, band)} |")
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("nicsim", nargs="?", default=os.path.join(ROOT, "build/tools/nicsim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build/tcp-fidelity"))
    ap.add_argument("--band", type=float, default=20.0, help="allowed difference in %% (20)")
    ap.add_argument("--reuse", action="store_true", help="print from the JSON files in --out")
    a = ap.parse_args()
    if not a.reuse and not os.access(a.nicsim, os.X_OK):
        ap.error(f"{a.nicsim}: not an executable nicsim (build it first)")
    os.makedirs(a.out, exist_ok=True)
    for name, scenario in FILES:
        if a.reuse:
            sim, emu = (os.path.join(a.out, f"{name}-{b}.json") for b in ("sim", "emu"))
        else:
            sim, emu = produce(a.nicsim, a.out, name, scenario)
        table = single_table if name == "single" else duel_table
        print(f"\n{scenario} (simulator = nicsim run, kernel = nicsim emulate with Linux TCP)\n")
        print(table(runs_by_label(sim), runs_by_label(emu), a.band))
        late = lateness_warnings(os.path.join(a.out, f"{name}-emu.log"))
        if late:
            print(f"\nwarning: the emulator lost real time ({'; '.join(late)}): the kernel's "
                  "column is not trustworthy on this machine now; rerun on a quiet machine",
                  file=sys.stderr)


if __name__ == "__main__":
    main()

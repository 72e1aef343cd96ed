#!/usr/bin/env bash
# CTest emu_kernel_router (issue 10 item 6): the real kernel as the oracle for nicsim's router.
# scripts/kernel_router.sh builds a - r - b out of network namespaces (veth, r forwarding, HTB
# 100 Mbit/s with a pfifo child on r's egress towards b) and runs 4 CUBIC iperf3 flows a -> b
# for 10 s with a ping a -> b every 100 ms from 3 s to 9 s, for pfifo limits 1000 and 100.
# The same network as a scenario (scenarios/networks/kernel-router.toml, one run per limit)
# must match the kernel's loaded ping mean and goodput within +-10 % in `nicsim emulate` and
# +-20 % in `nicsim run` (docs/fidelity.md "Kernel router" has the table and the commands).
# The kernel repeats to within ~±6 % (ping mean) and ~±3 % (goodput) on this 2-core machine
# even at load 16 (docs/fidelity.md); the emulation's limit-100 ping scatters more on a loaded
# machine (the senders' stalls: 2 of 6 single runs missed at load 11-19, none of 3 at load
# 1-3). So a miss of the emulation alone, with the simulator inside its band, is the documented
# outlier signature: the kernel and the emulation are measured once more (emu_retry_once), and a
# second miss fails. A simulator miss, or any miss twice, fails at once.
# Bounded: two kernel runs and two emulations of ~10 s each, plus two simulated runs: ~60 s
# (the two kernel runs alone took 31 s at load 24), so CTest's TIMEOUT must be above 60.
# Usage: kernel_router_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools iperf3 ping tc ethtool ss
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
export NICSIM_PRESETS="$src/presets"
scenario=$src/scenarios/networks/kernel-router.toml

# The oracle needs HTB and pfifo in this kernel (no modules are loaded here).
probe=nicsim-kr-probe-$$
ip netns add "$probe"
if ! ip netns exec "$probe" tc qdisc add dev lo root handle 1: htb default 10 2>/dev/null ||
   ! ip netns exec "$probe" tc class add dev lo parent 1: classid 1:10 htb rate 1mbit 2>/dev/null ||
   ! ip netns exec "$probe" tc qdisc add dev lo parent 1:10 handle 10: pfifo limit 10 2>/dev/null; then
  ip netns del "$probe"
  emu_skip "this kernel lacks sch_htb or sch_pfifo"
fi
ip netns del "$probe"

limits=(1000 100)
# measure: the kernel for both limits, the emulation and the simulation, then the table and the
# bands. Status 0 inside, 2 when only the emulation missed (the outlier signature), 1 otherwise.
measure() {
for limit in "${limits[@]}"; do
  "$src/scripts/kernel_router.sh" --limit "$limit" --time 10 > "$work/kernel-$limit.txt" \
    || fail "kernel router (limit $limit) failed: $(cat "$work/kernel-$limit.txt")"
  cat "$work/kernel-$limit.txt"
done
# --spin 0us: the emulator sleeps to each deadline instead of polling up to 2 ms before it (as
# SCHED_FIFO, up to half of every 10 ms). Here the system under test is the namespaces' own TCP
# and iperf3 on the same two cores, and a polling emulator starves them now and then: with the
# default the 12 ms pfifo of limit 100 drains in those stalls (ping 8.6-9.6 ms, min 0.5 ms,
# kernel 10.1 ms); without polling 10.8 ms, min 7.8 ms (docs/fidelity.md "Kernel router"). A
# 100 Mbit/s HTB sends a frame every 121 us; sleeping's timer error (p99 ~0.1-0.2 ms, docs/emu.md)
# is small against the 12-121 ms queues measured.
"$nicsim" emulate "$scenario" --spin 0us --json "$work/emu.json" > "$work/emu.txt" 2>&1 \
  || fail "nicsim emulate $scenario exited $?: $(tail -5 "$work/emu.txt")"
"$nicsim" run "$scenario" --json "$work/sim.json" > "$work/sim.txt" 2>&1 \
  || fail "nicsim run $scenario exited $?: $(tail -5 "$work/sim.txt")"

# Three-way table, then the bands (each miss is printed with its numbers).
/usr/bin/python3 - "$work" "${limits[@]}" <<'EOF'
import json, re, sys
work, limits = sys.argv[1], sys.argv[2:]

def kernel(limit):
    line = open(f"{work}/kernel-{limit}.txt").read()
    kv = dict(re.findall(r"(\w+)=([\d.]+|nan)", line))
    return float(kv["ping_mean_ms"]), float(kv["goodput_mbit"])

def nicsim(backend):
    runs = {r["label"]: r for r in json.load(open(f"{work}/{backend}.json"))["runs"]}
    out = {}
    for limit in limits:
        r = runs.get(f"limit={limit}")
        if r is None:
            sys.exit(f"{backend}: no run labelled limit={limit} (runs: {sorted(runs)})")
        ping = r["latency_ms"].get("ping")
        goodput = r["goodput_bps"]  # per direction; a network's runs may name more pairs
        out[limit] = (ping["mean"] if ping else float("nan"),
                      goodput.get("a->b", sum(goodput.values())) / 1e6)
    return out

emu, sim = nicsim("emu"), nicsim("sim")
bands = {"emu": 0.10, "sim": 0.20}
misses = []
print("limit | metric | kernel | emulate (err) | run (err)")
for limit in limits:
    k = kernel(limit)
    for i, metric in enumerate(("loaded ping mean (ms)", "goodput a->b (Mbit/s)")):
        cells = []
        for name, got in (("emu", emu[limit][i]), ("sim", sim[limit][i])):
            err = (got - k[i]) / k[i]
            cells.append(f"{got:.2f} ({err * 100:+.1f} %)")
            if not abs(err) <= bands[name]:
                misses.append(f"{name} limit={limit} {metric}: {got:.2f} vs kernel {k[i]:.2f} "
                              f"({err * 100:+.1f} %, band +-{bands[name] * 100:.0f} %)")
        print(f"{limit} | {metric} | {k[i]:.2f} | {cells[0]} | {cells[1]}")
for m in misses:
    print("MISS " + m)
only_emulation = bool(misses) and all(m.startswith("emu ") for m in misses)
sys.exit(0 if not misses else 2 if only_emulation else 1)
EOF
}
emu_retry_once "kernel router: nicsim outside the kernel's bands" measure
echo "ok: nicsim emulate within +-10 % and nicsim run within +-20 % of the kernel router"

#!/usr/bin/env bash
# A real Linux router out of three network namespaces, as the oracle for nicsim's router model
# (issue 10 item 6; docs/fidelity.md "Kernel router"):
#
#   a (198.18.1.1) --veth-- r (198.18.1.2 | 198.18.2.1, ip_forward=1) --veth-- b (198.18.2.2)
#
# r's egress towards b: HTB, one class at RATE (default 100mbit, the root's default class) with
# a pfifo child of LIMIT packets. Everything else keeps veth's default `noqueue`. Offloads:
# a and b segment in software before their veth (`tso off gso off`: TCP still builds GSO skbs,
# validate_xmit_skb cuts them to MTU frames before veth_xmit), as a TSO NIC puts MTU frames on
# a wire; r has GRO off (veth's default without XDP/NAPI), so r's qdisc holds one skb per
# 1514-byte frame and `limit` counts frames, as a router forwarding frame by frame (the
# model's router). With veth's defaults (TSO/GSO on) a 64 KB super-packet would cross the
# namespaces unsegmented and a pfifo of 100 "packets" would hold up to 6.4 MB.
#
# Load: FLOWS (4) CUBIC iperf3 flows a -> b (`-C cubic`: a namespace's default here may be BBR)
# for TIME (10) seconds; ping a -> b every 100 ms from 3 s to TIME - 1 s. Prints one line:
#
#   kernel-router limit=1000 rate=100mbit: ping_mean_ms=107.02 ping_count=60 ping_lost=0 goodput_mbit=92.84 retransmits=63 pfifo_drops=63
#
# goodput: iperf3's receiver sum (end.sum_received); ping mean: iputils' rtt avg; pfifo_drops:
# the bottleneck pfifo's drop counter (tc -s).
# Root; needs ip, tc, iperf3, ping, ethtool, python3. It measures real time, so run it alone:
#
#   flock /tmp/nicsim-emu.lock scripts/kernel_router.sh --limit 1000
#
# --trace FILE: sample the trajectory every 50 ms while iperf3 runs and write it as CSV:
#
#   t_s,kind,id,backlog_pkts,drops,cwnd,ssthresh,rtt_ms
#
# kind "qdisc": r's pfifo backlog (packets) and drop counter (tc -s qdisc show dev r1); kind
# "flow": one line per connection of a towards b:5201 (ss -tin: cwnd and ssthresh in segments,
# "-" while ssthresh is still infinite; rtt = the kernel's SRTT in ms); id = a's local port.
# t_s is seconds since iperf3 started. The samplers are two shell loops in r and a, so a
# sample's spacing stretches on a loaded machine (t_s is each sample's own clock).
#
# Usage: kernel_router.sh [--limit PACKETS] [--rate TC_RATE] [--time SECONDS] [--flows N]
#                         [--keep-json DIR] [--trace FILE]
set -euo pipefail

limit=1000
rate=100mbit
time_s=10
flows=4
keep=""
trace=""
while [ $# -gt 0 ]; do
  case $1 in
    --limit) limit=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --time) time_s=$2; shift 2 ;;
    --flows) flows=$2; shift 2 ;;
    --keep-json) keep=$2; shift 2 ;;
    --trace) trace=$2; shift 2 ;;
    -h | --help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "kernel_router.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$time_s" -ge 6 ] || { echo "kernel_router.sh: --time must be >= 6 (ping runs from 3 s to TIME - 1 s)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "kernel_router.sh: needs root (network namespaces)" >&2; exit 2; }

ns_a=nicsim-kr-$$-a
ns_r=nicsim-kr-$$-r
ns_b=nicsim-kr-$$-b
work=$(mktemp -d)
cleanup() {
  for ns in "$ns_a" "$ns_r" "$ns_b"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

in_a() { ip netns exec "$ns_a" "$@"; }
in_r() { ip netns exec "$ns_r" "$@"; }
in_b() { ip netns exec "$ns_b" "$@"; }

for ns in "$ns_a" "$ns_r" "$ns_b"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
ip link add a0 netns "$ns_a" type veth peer name r0 netns "$ns_r"
ip link add r1 netns "$ns_r" type veth peer name b0 netns "$ns_b"
ip -n "$ns_a" addr add 198.18.1.1/24 dev a0
ip -n "$ns_r" addr add 198.18.1.2/24 dev r0
ip -n "$ns_r" addr add 198.18.2.1/24 dev r1
ip -n "$ns_b" addr add 198.18.2.2/24 dev b0
for l in "$ns_a a0" "$ns_r r0" "$ns_r r1" "$ns_b b0"; do
  set -- $l
  ip -n "$1" link set "$2" up
done
ip -n "$ns_a" route add default via 198.18.1.2
ip -n "$ns_b" route add default via 198.18.2.1
in_r sysctl -qw net.ipv4.ip_forward=1
# Offloads (see the header): the hosts segment before their veth, the router does not GRO.
in_a ethtool -K a0 tso off gso off >/dev/null
in_b ethtool -K b0 tso off gso off >/dev/null
in_r ethtool -K r0 gro off >/dev/null
in_r ethtool -K r1 gro off >/dev/null

# The bottleneck: r's egress towards b.
in_r tc qdisc add dev r1 root handle 1: htb default 10
in_r tc class add dev r1 parent 1: classid 1:10 htb rate "$rate" quantum 1514
in_r tc qdisc add dev r1 parent 1:10 handle 10: pfifo limit "$limit"

# Both hosts reach each other through r.
in_a ping -c 1 -W 2 198.18.2.2 >/dev/null || { echo "kernel_router.sh: a cannot reach b through r" >&2; exit 1; }

in_b iperf3 -s -1 >/dev/null 2>&1 &
for _ in $(seq 1 50); do
  in_b ss -ltn 2>/dev/null | grep -q ':5201 ' && break
  sleep 0.1
done
pings=$(( (time_s - 4) * 10 ))
# The trajectory samplers (--trace): one loop per namespace, each sample stamped with its clock.
samplers=()
if [ -n "$trace" ]; then
  in_r bash -c 'while :; do echo "T $(date +%s.%N)"; tc -s qdisc show dev r1; sleep 0.05; done' \
    > "$work/trace_r.txt" 2>/dev/null &
  samplers+=($!)
  in_a bash -c 'while :; do echo "T $(date +%s.%N)"; ss -tinH dst 198.18.2.2 dport = :5201; sleep 0.05; done' \
    > "$work/trace_a.txt" 2>/dev/null &
  samplers+=($!)
fi
date +%s.%N > "$work/start.txt"
in_a iperf3 -c 198.18.2.2 -P "$flows" -C cubic -t "$time_s" -J > "$work/iperf3.json" &
iperf=$!
sleep 3
in_a ping -i 0.1 -c "$pings" -q 198.18.2.2 > "$work/ping.txt" || true
wait "$iperf" || { echo "kernel_router.sh: iperf3 failed: $(head -c 500 "$work/iperf3.json")" >&2; exit 1; }
in_r tc -s qdisc show dev r1 > "$work/qdisc.txt"
for pid in "${samplers[@]}"; do kill "$pid" 2>/dev/null || true; done
for pid in "${samplers[@]}"; do wait "$pid" 2>/dev/null || true; done
[ -z "$keep" ] || cp "$work"/* "$keep"/

/usr/bin/python3 - "$work" "$limit" "$rate" "$trace" <<'EOF'
import json, re, sys
work, limit, rate, trace = sys.argv[1:5]
if trace:
    start = float(open(f"{work}/start.txt").read())
    rows = []
    def samples(name):
        t, lines = None, []
        for line in open(f"{work}/{name}").read().splitlines() + ["T end"]:
            if line.startswith("T "):
                if t is not None:
                    yield t - start, "\n".join(lines)
                t = None if line == "T end" else float(line[2:])
                lines = []
            else:
                lines.append(line)
    for t, text in samples("trace_r.txt"):
        m = re.search(r"qdisc pfifo 10:.*?dropped (\d+).*?backlog \S+ (\d+)p", text, re.S)
        if m:
            rows.append(f"{t:.3f},qdisc,r1,{m.group(2)},{m.group(1)},,,")
    for t, text in samples("trace_a.txt"):
        # ss -tinH: a socket line (state, queues, local:port, peer:port), then its info line.
        lines = text.splitlines()
        for sock, info in zip(lines[::2], lines[1::2]):
            port = sock.split()[3].rsplit(":", 1)[1]
            def val(key):
                m = re.search(rf"\b{key}:([\d.]+)", info)
                return m.group(1) if m else "-"
            rtt = re.search(r"\brtt:([\d.]+)/", info)
            rows.append(f"{t:.3f},flow,{port},,,{val('cwnd')},{val('ssthresh')},"
                        f"{rtt.group(1) if rtt else '-'}")
    rows.sort(key=lambda r: float(r.split(",", 1)[0]))
    with open(trace, "w") as f:
        f.write("t_s,kind,id,backlog_pkts,drops,cwnd,ssthresh,rtt_ms\n")
        f.write("\n".join(rows) + "\n")
end = json.load(open(f"{work}/iperf3.json"))["end"]
goodput = end["sum_received"]["bits_per_second"] / 1e6
retrans = end["sum_sent"].get("retransmits", 0)
ping = open(f"{work}/ping.txt").read()
# The pfifo's drops (tc -s: "qdisc pfifo 10: ... (dropped N, ...").
pfifo = re.search(r"qdisc pfifo 10:.*?dropped (\d+)", open(f"{work}/qdisc.txt").read(), re.S)
sent, recv = map(int, re.search(r"(\d+) packets transmitted, (\d+) received", ping).groups())
avg = re.search(r"= [\d.]+/([\d.]+)/", ping)
mean = f"{float(avg.group(1)):.2f}" if avg else "nan"
print(f"kernel-router limit={limit} rate={rate}: ping_mean_ms={mean} ping_count={recv} "
      f"ping_lost={sent - recv} goodput_mbit={goodput:.2f} retransmits={retrans} "
      f"pfifo_drops={pfifo.group(1) if pfifo else 'nan'}")
EOF

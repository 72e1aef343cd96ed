#!/usr/bin/env bash
# Emulator benchmarks (root; docs/emu.md "Measurements", docs/benchmarks.md), in one run:
#   1. forwarding throughput, one iperf3 TCP flow for SECONDS:
#      - straight over a bare veth pair between two namespaces with the emulator's offload
#        settings (tx checksum, sg, tso, gso, gro off) — the baseline;
#      - through the emulator with the NIC models (generic-10g both sides) and a 10 Gbit/s wire
#        with 20 µs one-way delay (the emulator, not the wire, is the limit);
#      - the same with --nic fifo (no NIC models: what the models cost);
#   2. timer error, release lateness and loop work with the NIC models in the path, under one
#      iperf3 TCP flow, at 100 Mbit/s 5 ms (scenarios/examples/100mbit-5ms, generic-1g) and at
#      1 Gbit/s 5 ms (same NICs);
# for each frame-I/O choice given (default: packet), with the emulator's own CPU time.
# Never run by CTest: speed is measured, not asserted. Needs iperf3 and ethtool.
# Usage: bench/emu/forwarding.sh NICSIM [SECONDS] [IO...]     (IO: packet tap; default packet)
set -euo pipefail
nicsim=${1:?usage: forwarding.sh NICSIM [SECONDS] [IO...]}
secs=${2:-5}
shift 2 || shift $#
ios=("$@")
[ ${#ios[@]} -gt 0 ] || ios=(packet)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
ns_a="nsbench-$$-a"
ns_b="nsbench-$$-b"
cleanup() {
  # The baseline's iperf3 server (-1: it exits after one test, but not if the client failed).
  [ -s "$work/iperf3.pid" ] && kill "$(cat "$work/iperf3.pid")" 2>/dev/null || true
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
scenario() {  # name rate delay nic
  cat > "$work/$1.toml" <<TOML
[scenario]
name = "benchmark: $2, $3"
duration = "10s"
[hosts.a]
cpu = "x86-desktop"
nic = "$4"
[hosts.b]
cpu = "x86-desktop"
nic = "$4"
[wire]
rate = "$2"
delay = "$3"
TOML
}
scenario fast 10Gbit 20us generic-10g
scenario gbit 1Gbit 5ms generic-1g
cp -r "$src/presets" "$work/presets"

echo "machine: $(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), kernel $(uname -r)"
echo "date: $(date -u +%FT%TZ), load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1a. Bare veth baseline (same offload settings as the emulator's host interfaces).
ip netns add "$ns_a"
ip netns add "$ns_b"
ip -n "$ns_a" link add v0 type veth peer name v1 netns "$ns_b"
for ns in "$ns_a" "$ns_b"; do
  dev=v0
  [ "$ns" = "$ns_b" ] && dev=v1
  ip -n "$ns" link set lo up
  ip netns exec "$ns" ethtool -K "$dev" tx off sg off tso off gso off gro off >/dev/null 2>&1 || true
done
ip -n "$ns_a" addr add 198.19.0.1/24 dev v0
ip -n "$ns_b" addr add 198.19.0.2/24 dev v1
ip -n "$ns_a" link set v0 up
ip -n "$ns_b" link set v1 up
ip netns exec "$ns_b" iperf3 -s -1 -D -I "$work/iperf3.pid"
sleep 0.3
echo "## bare veth, offloads off: TCP, 1 flow"
ip netns exec "$ns_a" iperf3 -c 198.19.0.2 -t "$secs" -f m | grep -E "sender|receiver"
ip netns del "$ns_a"
ip netns del "$ns_b"

run() {  # label, extra nicsim options..., -- command
  local label=$1
  shift
  "$nicsim" emulate "$@" 2>"$work/err" >"$work/out" || true
  echo "## $label"
  grep -E "receiver|sender|rtt min|timer error|release lateness|loop work|loop:|emulator CPU|emulated CPU" \
    "$work/out" "$work/err" | sed 's|^[^:]*:||' | grep -v "^\s*$" || cat "$work/err"
}

tcp="iperf3 -c \$NICSIM_PEER -t $secs -f m | grep -E 'sender|receiver'"
for io in "${ios[@]}"; do
  echo
  echo "=== frame I/O: $io"
  run "$io: TCP, 1 flow, 10 Gbit/s 20 us wire, NIC models (generic-10g)" "$work/fast.toml" \
    --io "$io" --server 'iperf3 -s -1' -- sh -c "$tcp"
  run "$io: TCP, 1 flow, 10 Gbit/s 20 us wire, --nic fifo" "$work/fast.toml" --nic fifo \
    --io "$io" --server 'iperf3 -s -1' -- sh -c "$tcp"
  run "$io: iperf3 TCP, 100 Mbit/s 5 ms, NIC models (generic-1g)" \
    "$src/scenarios/examples/100mbit-5ms.toml" --io "$io" --server 'iperf3 -s -1' -- sh -c "$tcp"
  run "$io: iperf3 TCP, 1 Gbit/s 5 ms, NIC models (generic-1g)" "$work/gbit.toml" --io "$io" \
    --server 'iperf3 -s -1' -- sh -c "$tcp"
done

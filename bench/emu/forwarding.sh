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
bench_name=bench
# shellcheck source=bench/emu/common.sh
source "$(dirname "$0")/common.sh"
scenario fast 10Gbit 20us generic-10g
scenario gbit 1Gbit 5ms generic-1g
cp -r "$src/presets" "$work/presets"
print_machine

# 1a. Bare veth baseline (same offload settings as the emulator's host interfaces).
bare_veth "offloads off: TCP, 1 flow" off

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

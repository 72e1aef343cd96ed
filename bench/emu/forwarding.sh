#!/usr/bin/env bash
# Emulator benchmarks (root; docs/emu.md "Measurements"): for each frame-I/O choice,
#   1. forwarding throughput: one iperf3 TCP flow and 64-byte UDP (iperf3 -u -b 0) through a
#      10 Gbit/s wire with 20 µs one-way delay (the emulator, not the wire, is the limit);
#   2. timer error and release lateness at 100 Mbit/s, 5 ms (scenarios/examples/100mbit-5ms):
#      idle (ping every 10 ms) and under one iperf3 TCP flow;
# with the emulator's own CPU time (getrusage, without its commands). Never run by CTest: speed is measured, not asserted.
# Usage: bench/emu/forwarding.sh NICSIM [SECONDS] [IO...]     (IO: packet tap; default both)
set -euo pipefail
nicsim=${1:?usage: forwarding.sh NICSIM [SECONDS] [IO...]}
secs=${2:-5}
shift 2 || shift $#
ios=("$@")
[ ${#ios[@]} -gt 0 ] || ios=(packet tap)
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cat > "$work/fast.toml" <<TOML
[scenario]
name = "forwarding benchmark: 10 Gbit/s, 20 us"
duration = "10s"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-10g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-10g"
[wire]
rate = "10Gbit"
delay = "20us"
TOML
cp "$src/presets" -r "$work/presets"

echo "machine: $(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), kernel $(uname -r)"
echo "date: $(date -u +%FT%TZ), load average: $(cut -d' ' -f1-3 /proc/loadavg)"

run() {  # label, extra nicsim options..., -- command
  local label=$1
  shift
  "$nicsim" emulate "$@" 2>"$work/err" >"$work/out" || true
  echo "## $label"
  grep -E "receiver|sender|rtt min|timer error|release lateness|loop:|port|emulator CPU" "$work/out" "$work/err" \
    | sed 's|^[^:]*:||' | grep -v "^\s*$" || cat "$work/err"
}

for io in "${ios[@]}"; do
  echo
  echo "=== frame I/O: $io"
  run "$io: TCP, 1 flow, 10 Gbit/s wire" "$work/fast.toml" --quiet --io "$io" \
    --server 'iperf3 -s -1' -- sh -c "iperf3 -c \$NICSIM_PEER -t $secs -f m | tail -4"
  run "$io: UDP 64-byte payload (iperf3 -u -b 0), 10 Gbit/s wire" "$work/fast.toml" --io "$io" \
    --server 'iperf3 -s -1' -- sh -c "iperf3 -c \$NICSIM_PEER -u -b 0 -l 64 -t $secs -f m | tail -4"
  run "$io: idle ping, 100 Mbit/s 5 ms" "$src/scenarios/examples/100mbit-5ms.toml" --io "$io" \
    -- sh -c "ping -q -c $((secs * 100)) -i 0.01 \$NICSIM_PEER"
  run "$io: ping under iperf3 TCP, 100 Mbit/s 5 ms" "$src/scenarios/examples/100mbit-5ms.toml" \
    --io "$io" --server 'iperf3 -s -1' \
    -- sh -c "ping -q -i 0.01 \$NICSIM_PEER & p=\$!; iperf3 -c \$NICSIM_PEER -t $secs -f m | tail -4; kill -INT \$p; wait \$p"
done

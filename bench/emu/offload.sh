#!/usr/bin/env bash
# Offload benchmark (issue 13 item 3; docs/emu.md "GSO/GRO through the emulator",
# docs/benchmarks.md), in one run, beside bare veth:
#   1. bare veth between two namespaces, offloads on (the kernel's own ceiling on this machine),
#      TCP CUBIC 1 flow and 4 flows; and offloads off, 1 flow (what the emulator's MTU path sees);
#   2. nicsim emulate, for each frame I/O given (default: packet tap-gso):
#      - 10 Gbit/s wire, 20 us, generic-10g on both ends, TCP CUBIC 1 flow (target >= 10 Gbit/s);
#      - 1 Gbit/s wire, 5 ms, generic-1g, TCP CUBIC 4 flows (target release lateness p99 <= 50 us);
#      - idle (a ping every 200 ms), 1 Gbit/s scenario (target timer error p99 <= 10 us);
#      each with the emulator's frames vs super-frames, its CPU time, timer error and lateness;
#   3. bench/emu/pps.sh: 64-byte frames from trafgen, bare veth vs nicsim (target >= 1 Mpps).
# Never run by CTest: speed is measured, not asserted. Needs root, iperf3, ethtool, flock,
# trafgen.
# Each emulation holds /tmp/nicsim-emu.lock (other emu tests wait).
# Usage: bench/emu/offload.sh NICSIM [SECONDS] [IO...]   (IO: packet tap tap-gso pull)
set -euo pipefail
nicsim=${1:?usage: offload.sh NICSIM [SECONDS] [IO...]}
nicsim=$(realpath "$nicsim")
secs=${2:-5}
shift 2 || shift $#
ios=("$@")
[ ${#ios[@]} -gt 0 ] || ios=(packet tap-gso)
bench_name=offl
# shellcheck source=bench/emu/common.sh
source "$(dirname "$0")/common.sh"
lock=/tmp/nicsim-emu.lock
scenario fast 10Gbit 20us generic-10g
scenario gbit 1Gbit 5ms generic-1g
cp -r "$src/presets" "$work/presets"
print_machine

# 1. Bare veth.
flock "$lock" true  # wait for other emulations before measuring the kernel alone
bare_veth "offloads on, TCP CUBIC 1 flow" on -C cubic
bare_veth "offloads on, TCP CUBIC 4 flows" on -C cubic -P 4
bare_veth "offloads off, TCP CUBIC 1 flow" off -C cubic

# 2. The simulator on the same scenarios (its TCP model, no real kernel): what the NIC and
#    CPU models alone allow, the reference a faithful emulation should match, not beat.
sim() {  # label scenario flows
  local label=$1 name=$2 flows=$3
  {
    sed 's/^duration = .*/duration = "'"$secs"'s"/' "$work/$name.toml"
    for _ in $(seq "$flows"); do printf '\n[[traffic.tcp]]\nfrom = "a"\nto = "b"\n'; done
  } > "$work/$name-sim.toml"
  echo "## simulator (nicsim run): $label"
  (cd "$work" && "$nicsim" run "$name-sim.toml") 2>&1 |
    grep -E "sender|receiver|^(qdisc|ring|wire|rx) " | grep -v "^\[ *[0-9]*\] *[0-9.]*-[0-9.]* *sec.*Cwnd" |
    sed 's/^/  /' | tail -8 || true
}
sim "10 Gbit/s 20 us, generic-10g, TCP 1 flow" fast 1
sim "1 Gbit/s 5 ms, generic-1g, TCP 4 flows" gbit 4

# 3. The emulator.
run() {  # label, nicsim emulate arguments...
  local label=$1
  shift
  echo "## $label"
  # /usr/bin/time: the whole run (emulator + the hosts' processes, its children): how much of
  # the 2 vCPUs it got, and how often the scheduler took a CPU away (involuntary switches).
  (cd "$work" && flock "$lock" /usr/bin/time -f "whole run: %e s elapsed, user %U s, system %S s, %c involuntary / %w voluntary context switches" \
    "$nicsim" emulate "$@") >"$work/out" 2>"$work/err" || true
  grep -hE "SUM.*(sender|receiver)|^\[ *[0-9]+\].*(sender|receiver)|packet loss|rtt min|frame I/O|^a->b|^b->a|timer error|release lateness|loop work|^port |emulator CPU|whole run|^  tx .*frames" \
    "$work/out" "$work/err" | grep -v "^\s*$" | awk '!seen[$0]++' | sed 's/^/  /' || cat "$work/err"
}
tcp1="iperf3 -c \$NICSIM_PEER -C cubic -t $secs -f m | grep -E 'sender|receiver'"
tcp4="iperf3 -c \$NICSIM_PEER -C cubic -P 4 -t $secs -f m | grep -E 'SUM.*(sender|receiver)'"
for io in "${ios[@]}"; do
  echo
  echo "=== frame I/O: $io"
  run "$io: 10 Gbit/s 20 us, generic-10g, TCP CUBIC 1 flow" fast.toml --io "$io" \
    --server 'iperf3 -s -1' -- sh -c "$tcp1"
  run "$io: 1 Gbit/s 5 ms, generic-1g, TCP CUBIC 4 flows" gbit.toml --io "$io" \
    --server 'iperf3 -s -1' -- sh -c "$tcp4"
  # Idle: a ping every 200 ms (the loop sleeps between them; each frame's deadlines are timed).
  run "$io: idle, 1 Gbit/s scenario, ping -i 0.2 for $secs s" gbit.toml --io "$io" \
    -- sh -c "ping -q -i 0.2 -w $secs \$NICSIM_PEER"
done

# 4. 64-byte frames: an iperf3 UDP sender cannot offer more than ~0.1 Mpps here; trafgen can.
echo
"$(dirname "$0")/pps.sh" "$nicsim" "$secs" "${ios[@]}"

#!/usr/bin/env bash
# CTest emu_ping: idle ping (iputils, the oracle) through the emulated 100 Mbit/s wire with
# 5 ms one-way delay (scenarios/examples/100mbit-5ms.toml) averages 10 ± 0.5 ms, with no loss,
# through both frame-I/O implementations; nicsim exits with ping's status.
# Expected RTT: 2 × (5 ms + 9.76 µs serialisation of a 98-byte frame) = 10.02 ms plus the
# emulator's wake-up and the kernels' own path (tens of µs).
# Both hosts run the example's generic-1g NIC models (49 us RX interrupt coalescing each way).
# The 10 ± 0.5 ms band is asserted for the default frame I/O (veth + AF_PACKET), whose reads
# carry the kernel's receive timestamp, so the emulator's own wake-up latency does not delay a
# frame into the model. The TAP variant (no receive timestamps) must carry every probe and can
# never beat the model's minimum (2 × 5,009,760 ns), but its average is only printed: a TAP
# frame enters the model when the loop wakes up, and on the shared CI VM that is ~1 ms late
# when the VM is idle (vCPUs descheduled; 2026-11-30: min 10.23, avg 10.57 ms) while
# `--busy-poll` — which fixed that — loses the CPU for 10+ ms at a time when the VM is loaded
# (2026-11-30, load average 8: avg 18–21 ms with and without the NIC models).
# 40 probes, so that one late scheduling of ping itself cannot move the average by more than a
# few tens of µs.
# Usage: ping_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools ping

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
for io in packet tap; do
  extra=()
  # On failure the emulator's own summary (timer error, lateness) is shown too.
  fail_io() { fail "$* -- emulator summary: $(grep -v '^nicsim: not emulated' "$summary")"; }
  out=$("$nicsim" emulate "$src/scenarios/examples/100mbit-5ms.toml" --io "$io" "${extra[@]}" \
          -- sh -c 'ping -q -n -c 40 -i 0.025 -W 2 "$NICSIM_PEER"' 2>"$summary") \
    || fail_io "[$io] nicsim emulate exited $? (ping's status): $out"
  echo "[$io] $out" | tail -2
  echo "$out" | grep -q " 0% packet loss" || fail_io "[$io] packets lost: $out"
  avg=$(echo "$out" | sed -n 's|^rtt min/avg/max/mdev = [0-9.]*/\([0-9.]*\)/.*|\1|p')
  [ -n "$avg" ] || fail_io "[$io] no rtt line in: $out"
  min=$(echo "$out" | sed -n 's|^rtt min/avg/max/mdev = \([0-9.]*\)/.*|\1|p')
  awk -v m="$min" 'BEGIN { exit !(m >= 10.019) }' \
    || fail_io "[$io] minimum RTT $min ms is below the model's 10.0195 ms: $out"
  if [ "$io" = packet ]; then
    awk -v a="$avg" 'BEGIN { exit !(a >= 9.5 && a <= 10.5) }' \
      || fail_io "[$io] average RTT $avg ms is outside 10 ± 0.5 ms: $out"
  fi
  echo "[$io] ok: average RTT $avg ms"
done

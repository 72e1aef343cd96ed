#!/usr/bin/env bash
# CTest emu_ping: idle ping (iputils, the oracle) through the emulated 100 Mbit/s wire with
# 5 ms one-way delay (scenarios/examples/100mbit-5ms.toml) averages 10 ± 0.5 ms (issue 5), with
# no loss, through the default frame I/O (veth + AF_PACKET); nicsim exits with ping's status.
# Expected RTT: 2 × (5 ms + 9.76 µs serialisation of a 98-byte frame) = 10.02 ms plus the
# emulator's wake-up and the kernels' own path (tens of µs), and the example's generic-1g NIC
# models on both hosts (49 µs RX interrupt coalescing each way, driver CPU costs: ~0.1 ms).
#
# The TAP variant is held to 10 ± 1.5 ms: a TAP read carries no kernel receive timestamp, so a
# frame's arrival is stamped when the emulator reads it, and on a VM whose idle vCPUs wake late
# that adds up to ~1 ms per direction (CI, 2026-11-30: min 10.23, avg 10.57 ms); AF_PACKET
# reads SO_TIMESTAMPNS and is not affected (docs/emu.md). --busy-poll would hide the wake-up
# but runs without real-time priority and is far worse on a loaded machine (avg 23 ms at load 12).
#
# A shared, noisy machine can deschedule ping itself between stamping and sending a probe (one
# 32 ms sample among 40 was seen at load 12): when the average misses but the fastest sample
# is inside the band (common.sh: the outlier signature), the variant gets a second attempt;
# both attempts are printed. A minimum outside the band fails at once.
# Usage: ping_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools ping

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT

# attempt IO TOLERANCE_MS: prints ping's summary; 0 when the average is within bounds, 2 on
# the outlier signature (minimum within bounds), 1 otherwise.
attempt() {
  local io=$1 tol=$2 out min avg lo hi
  lo=$(awk -v t="$tol" 'BEGIN { print 10 - t }')
  hi=$(awk -v t="$tol" 'BEGIN { print 10 + t }')
  out=$("$nicsim" emulate "$src/scenarios/examples/100mbit-5ms.toml" --io "$io" \
          -- sh -c 'ping -q -n -c 40 -i 0.025 -W 2 "$NICSIM_PEER"' 2>"$summary") \
    || { echo "[$io] nicsim emulate exited $? (ping's status): $out"; return 1; }
  echo "[$io] $(echo "$out" | tail -2 | tr '\n' ' ')"
  echo "$out" | grep -q " 0% packet loss" || { echo "[$io] packets lost"; return 1; }
  min=$(echo "$out" | sed -n 's|^rtt min/avg/max/mdev = \([0-9.]*\)/.*|\1|p')
  avg=$(echo "$out" | sed -n 's|^rtt min/avg/max/mdev = [0-9.]*/\([0-9.]*\)/.*|\1|p')
  [ -n "$avg" ] || { echo "[$io] no rtt line"; return 1; }
  if emu_in_band "$avg" "$lo" "$hi"; then
    echo "[$io] ok: average RTT $avg ms (10 ± $tol)"
    return 0
  fi
  echo "[$io] average RTT $avg ms is outside 10 ± $tol ms ($(emu_load)); emulator summary:"
  grep -v '^nicsim: not emulated' "$summary" || true
  emu_in_band "$min" "$lo" "$hi" && return 2
  return 1
}

for spec in packet:0.5 tap:1.5; do
  io=${spec%%:*}
  tol=${spec#*:}
  emu_retry_once "[$io] idle ping 10 ± $tol ms" attempt "$io" "$tol"
done

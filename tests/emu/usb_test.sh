#!/usr/bin/env bash
# CTest emu_usb: real frames cross the emulated USB adapters byte for byte. Host a is the USB
# host of seed S1 (SMSC LAN95xx, turbo on and off) and of seed S2 (ASIX AX88178, 2 KiB and 16 KiB
# RX bursts): every frame is encoded into bulk transfers with the chip's framing by the model
# and decoded on the other side. iputils ping fills each request with a pattern (-p) and checks
# every reply byte ("wrong data byte" otherwise); sizes from a 42-byte frame to a full
# 1514-byte one, including frames whose USB transfer length is a multiple of 512 (ZLP / ASIX
# dummy header cases). Required: no loss, no corrupted byte, and the emulator's counts agree
# (frames in = frames out, no malformed drops).
# Usage: usb_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools ping
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ICMP payload sizes: 0 (42-byte frame), 56, 466 (SMSC: 8 + 504 = 512-byte bulk-OUT transfer),
# 470 (ASIX: 4 + 508 = 512), 1000, 1472 (1514-byte frame).
pings='for s in 0 56 466 470 1000 1472; do
  ping -n -c 4 -i 0.05 -W 2 -s $s -p a55a0ff0 "$NICSIM_PEER" || exit 1
done'
for case in "smsc95xx-turbo turbo_mode=true" "smsc95xx-turbo turbo_mode=false" \
            "ax88178-burst rx_burst=2KiB" "ax88178-burst rx_burst=16KiB"; do
  set -- $case
  "$nicsim" emulate "$src/scenarios/seeds/$1.toml" --run "$2" -- sh -c "$pings" \
    > "$work/out" 2> "$work/summary" \
    || fail "[$case] nicsim emulate exited $?: $(grep -E 'loss|wrong|rtt' "$work/out") $(cat "$work/summary")"
  grep -q "wrong data byte" "$work/out" && fail "[$case] corrupted bytes: $(grep wrong "$work/out" | head -3)"
  [ "$(grep -c ' 0% packet loss' "$work/out")" = 6 ] \
    || fail "[$case] lost probes: $(grep 'packet loss' "$work/out")"
  for d in 'a->b' 'b->a'; do
    line=$(grep "^$d: " "$work/summary")
    in=$(echo "$line" | sed -n 's/^[^:]*: \([0-9]*\) frames in, \([0-9]*\) out.*/\1/p')
    out=$(echo "$line" | sed -n 's/^[^:]*: \([0-9]*\) frames in, \([0-9]*\) out.*/\2/p')
    [ -n "$in" ] && [ "$in" = "$out" ] && [ "$in" -ge 24 ] || fail "[$case] $d: $line"
  done
  grep -qE "rx [0-9]+ frames, 0 drops" <(grep -A1 "^NIC a" "$work/summary") \
    || fail "[$case] the USB NIC dropped frames: $(grep -A1 '^NIC a' "$work/summary")"
  echo "[$case] ok: $(grep '^a->b' "$work/summary" | cut -d, -f1-2)"
done

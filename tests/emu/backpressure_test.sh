#!/usr/bin/env bash
# CTest emu_backpressure (issue 13 item 1): with back pressure (`--io pull`,
# BusyPollPort) the sending host's own kernel holds the packets the emulated NIC has no room
# for. Seed S3's stmmac at 100 Mbit/s (BQL on); host a floods UDP (1472-byte datagrams, an
# 8 MiB socket buffer so the socket is not what stops it) for 2 s. Required:
#  - with back pressure: host a's own qdisc (pfifo_fast on nsim0) held packets: its device
#    queue was stopped (the veth's ring of 256 frames full: requeues > 0, a packet handed back
#    to the qdisc to wait there; its drops and ten backlog samples are printed — it reaches its
#    limit in most runs, not all), and the emulated NIC refused no frame (its qdisc never holds
#    more than a pull batch);
#  - without it (the default): host a has no qdisc (noqueue: nothing can wait there) and the
#    emulated NIC's own qdisc overflows (frames refused by the sending NIC > 0).
# Bounded: two emulations of ~4 s. Usage: backpressure_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools python3 tc
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

flood='python3 - "$NICSIM_PEER" <<PY &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 32, 8 << 20)  # SO_SNDBUFFORCE
end = time.time() + 2
while time.time() < end:
    try:
        s.sendto(b"x" * 1472, (sys.argv[1], 9))
    except OSError:
        pass
PY
f=$!
for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.15; tc -s qdisc show dev nsim0; done > "$OUT.tc"
wait $f'

run() {  # run BACKPRESSURE(0|1) -> $work/bpN.{out,tc}
  local io=packet
  [ "$1" = 1 ] && io=pull
  OUT="$work/bp$1" "$nicsim" emulate --io "$io" \
    "$src/scenarios/seeds/stmmac-bql.toml" --run bql=true,rate=100Mbit \
    -- sh -c "OUT=$work/bp$1; $flood" > "$work/bp$1.out" 2>&1 ||
    { cat "$work/bp$1.out" >&2; fail "emulation (back pressure $1) failed"; }
}
refused() { sed -n 's/^a->b: .*, \([0-9]*\) refused by the sending NIC.*/\1/p' "$1"; }

run 1
if grep -q "back pressure unavailable" "$work/bp1.out"; then
  cat "$work/bp1.out" >&2
  fail "a back-pressure port did not open (see the notice above)"
fi
# The last of ten samples over the flood's second half (the counters are cumulative).
requeues=$(sed -n 's/.* requeues \([0-9]*\)).*/\1/p' "$work/bp1.tc" | tail -1)
drops=$(sed -n 's/.*(dropped \([0-9]*\),.*/\1/p' "$work/bp1.tc" | tail -1)
backlogs=$(sed -n 's/.*backlog [0-9]*b \([0-9]*\)p.*/\1/p' "$work/bp1.tc" | tr '\n' ' ')
echo "back pressure: host $(grep -o 'qdisc [a-z_]*' "$work/bp1.tc" | head -1): requeues ${requeues:-?}, drops ${drops:-?}, backlog samples ${backlogs}; emulated NIC refused $(refused "$work/bp1.out")"
[ "${requeues:-0}" -gt 0 ] || { cat "$work/bp1.tc" >&2; fail "host a's device queue never stopped"; }
[ "$(refused "$work/bp1.out")" = 0 ] || fail "the emulated NIC refused frames with back pressure"

run 0
echo "no back pressure: host $(grep -o 'qdisc [a-z_]*' "$work/bp0.tc" | head -1); emulated NIC refused $(refused "$work/bp0.out")"
grep -q "qdisc noqueue" "$work/bp0.tc" || { cat "$work/bp0.tc" >&2; fail "host a has a qdisc without back pressure"; }
[ "$(refused "$work/bp0.out")" -gt 0 ] || fail "the emulated qdisc did not overflow without back pressure"
echo "PASS"

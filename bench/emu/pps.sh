#!/usr/bin/env bash
# Frame-rate benchmark (issue 13 item 3: >= 1 Mpps of 64-byte frames; docs/emu.md "Frame rate",
# docs/benchmarks.md). trafgen (Debian's netsniff-ng: a PACKET_MMAP TX ring, one process per
# CPU given) sends minimum-size UDP frames from host a as fast as it can -- 64 bytes on the wire
# without the FCS: 14 Ethernet + 20 IPv4 + 8 UDP + 22 payload -- for SECONDS, to a UDP socket in
# host b that never reads (the kernel drops at the full socket, cheaply, and sends no ICMP):
#   1. bare veth between two namespaces, trafgen on 1 and on 2 CPUs: the kernel's own ceiling on
#      this machine for one namespace sending to another;
#   2. nicsim emulate (10 Gbit/s wire, 20 us, generic-10g NIC models on both ends) for each frame
#      I/O given, trafgen on 1 and 2 CPUs, and with --nic fifo (no NIC models: the frame I/O and
#      the loop alone), trafgen on 1 CPU.
# Each row: frames offered per second (bare: trafgen's count; emulated: what host a's interface
# took, read by the emulator or dropped unread), frames delivered into host b per second (bare:
# its interface's rx_packets; emulated: what the emulator wrote into host b), the frames the
# emulator's input dropped unread (its port's queue was full: it fell behind), and its CPU time.
# Never run by CTest: speed is measured, not asserted. Needs root, trafgen, flock; each
# emulation holds /tmp/nicsim-emu.lock (other emu tests wait).
# Usage: bench/emu/pps.sh NICSIM [SECONDS] [IO...]   (IO: packet tap tap-gso; default packet tap-gso)
set -euo pipefail
nicsim=${1:?usage: pps.sh NICSIM [SECONDS] [IO...]}
nicsim=$(realpath "$nicsim")
secs=${2:-5}
shift 2 || shift $#
ios=("$@")
[ ${#ios[@]} -gt 0 ] || ios=(packet tap-gso)
command -v trafgen >/dev/null || {
  echo "pps.sh: trafgen not found (Debian package netsniff-ng; scripts/setup.sh installs it)" >&2
  exit 2
}
bench_name=pps
# shellcheck source=bench/emu/common.sh
source "$(dirname "$0")/common.sh"
lock=/tmp/nicsim-emu.lock
scenario fast 10Gbit 20us generic-10g
cp -r "$src/presets" "$work/presets"

# gen.sh DEV DST_IP DST_MAC SECONDS CPUS: trafgen from DEV's own MAC and address; prints the
# frames it sent. Runs inside the sending namespace.
cat > "$work/gen.sh" <<'GEN'
#!/bin/sh
dev=$1 dst=$2 dmac=$3 secs=$4 cpus=$5
src=$(ip -4 -o addr show dev "$dev" | awk '{split($4, a, "/"); print a[1]; exit}')
smac=$(cat "/sys/class/net/$dev/address")
cfg=$(mktemp)
echo "{ eth(da=$dmac, sa=$smac, type=0x0800), ipv4(saddr=$src, daddr=$dst, ttl=64)," \
  "udp(sp=4000, dp=9), fill(0x00, 22) }" > "$cfg"
timeout -s INT "$secs" trafgen --dev "$dev" --conf "$cfg" --cpus "$cpus" 2>&1 |
  awk '/packets outgoing/ {gsub(/\r/, ""); print "offered", $1}'
rm -f "$cfg"
GEN
# A UDP socket on port 9 that is never read: arrivals are dropped at its full buffer.
cat > "$work/sink.py" <<'SINK'
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 9))
time.sleep(3600)
SINK
chmod 755 "$work/gen.sh" "$work/sink.py"

print_machine
echo "trafgen: $(trafgen --version 2>&1 | head -1), $secs s per row"
printf '| %-68s | %8s | %10s | %10s | %s\n' "case" "offered" "into b" "unread" "emulator CPU"
row() {  # label offered delivered unread cpu
  awk -v l="$1" -v o="$2" -v d="$3" -v u="$4" -v c="$5" -v s="$secs" \
    'BEGIN { printf "| %-68s | %5.0f k/s | %7.0f k/s | %10s | %s\n", l, o / s / 1000, d / s / 1000, u, c }' 
}

bare() {  # cpus
  local cpus=$1 before after offered mac
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip -n "$ns_a" link add v0 type veth peer name v1 netns "$ns_b"
  ip -n "$ns_a" addr add 198.19.0.1/24 dev v0
  ip -n "$ns_b" addr add 198.19.0.2/24 dev v1
  ip -n "$ns_a" link set v0 up
  ip -n "$ns_b" link set v1 up
  ip netns exec "$ns_b" python3 "$work/sink.py" &
  local sink=$!
  sleep 0.3
  mac=$(ip netns exec "$ns_b" cat /sys/class/net/v1/address)
  before=$(ip netns exec "$ns_b" cat /sys/class/net/v1/statistics/rx_packets)
  offered=$(ip netns exec "$ns_a" "$work/gen.sh" v0 198.19.0.2 "$mac" "$secs" "$cpus" | awk '{print $2}')
  after=$(ip netns exec "$ns_b" cat /sys/class/net/v1/statistics/rx_packets)
  kill "$sink" 2>/dev/null || true
  wait "$sink" 2>/dev/null || true
  ip netns del "$ns_a"
  ip netns del "$ns_b"
  row "bare veth, trafgen on $cpus CPU(s)" "${offered:-0}" "$((after - before))" "-" "-"
}

emulated() {  # label cpus, nicsim emulate options...
  local label=$1 cpus=$2
  shift 2
  (cd "$work" && flock "$lock" "$nicsim" emulate fast.toml "$@" --server "python3 $work/sink.py" \
    -- sh -c "$work/gen.sh nsim0 \$NICSIM_PEER \$(ip neigh show \$NICSIM_PEER dev nsim0 | awk '{print \$3}') $secs $cpus") \
    >"$work/out" 2>"$work/err" || true
  local read wrote unread cpu
  read=$(sed -n 's/^port a: read \([0-9]*\) frames.*/\1/p' "$work/err" "$work/out" | head -1)
  wrote=$(sed -n 's/^port b: read [0-9]* frames in [0-9]* calls, wrote \([0-9]*\) in.*/\1/p' "$work/err" "$work/out" | head -1)
  unread=$(sed -n 's/^port a: .* \([0-9]*\) dropped unread$/\1/p' "$work/err" "$work/out" | head -1)
  cpu=$(sed -n 's/^emulator CPU: //p' "$work/err" "$work/out" | head -1)
  if [ -z "$wrote" ]; then
    echo "pps.sh: $label: no summary; the run said:" >&2
    tail -5 "$work/err" >&2
  fi
  # Offered: every frame host a's interface took, read or dropped unread (trafgen's own count
  # leaves out what a TAP device dropped on its full queue).
  row "$label, trafgen on $cpus CPU(s)" "$((${read:-0} + ${unread:-0}))" "${wrote:-0}" "${unread:-?}" "${cpu:-?}"
}

flock "$lock" true  # wait for other emulations before measuring the kernel alone
bare 1
bare 2
for io in "${ios[@]}"; do
  emulated "nicsim --io $io, generic-10g" 1 --io "$io"
  emulated "nicsim --io $io, generic-10g" 2 --io "$io"
  emulated "nicsim --io $io, --nic fifo (no NIC models)" 1 --io "$io" --nic fifo
done

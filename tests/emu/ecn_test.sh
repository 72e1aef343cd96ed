#!/usr/bin/env bash
# CTest emu_ecn: a CE mark set by an emulated qdisc reaches the receiving kernel. Host a runs
# fq_codel (ECN on by default, Linux's default) as its emulated qdisc — a qdisc this machine's
# kernel does not even have — and one iperf3 TCP flow with ECN negotiated (net.ipv4.tcp_ecn=1
# in both namespaces) crosses a 100 Mbit/s, 5 ms wire for 3 s. The standing queue makes CoDel
# mark; the emulator writes CE into each marked frame's IPv4 header (with the checksum
# updated, RFC 1624) and the receiving kernel echoes ECE, so the sender's kernel counts
# TcpExtTCPDeliveredCE > 0. A broken checksum would make the receiver drop the frame instead.
# Usage: ecn_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools iperf3 nstat
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cat > "$work/ecn.toml" <<'TOML'
[scenario]
name = "fq_codel with ECN on host a"
duration = "10s"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
qdisc = "fq_codel"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "5ms"
TOML
export NICSIM_PRESETS="$src/presets"
# iperf3's exit status is checked on its own (sh has no pipefail: `iperf3 | grep` would take
# grep's), then its summary lines are shown.
export ECN_IPERF3_OUT="$work/iperf3.out"
"$nicsim" emulate "$work/ecn.toml" \
  --server 'sysctl -qw net.ipv4.tcp_ecn=1 && exec iperf3 -s -1 > /dev/null' \
  -- sh -c 'sysctl -qw net.ipv4.tcp_ecn=1 || exit 1
            iperf3 -c "$NICSIM_PEER" -t 3 -f m > "$ECN_IPERF3_OUT" 2>&1 \
              || { echo "iperf3 exited $?"; cat "$ECN_IPERF3_OUT"; exit 1; }
            grep -E "sender|receiver" "$ECN_IPERF3_OUT" || exit 1
            nstat -az TcpExtTCPDeliveredCE | sed -n "s/^TcpExtTCPDeliveredCE *\([0-9]*\).*/delivered_ce \1/p"' \
  > "$work/out" 2> "$work/summary" || fail "nicsim emulate exited $?: $(cat "$work/out" "$work/summary")"
cat "$work/out"
marks=$(sed -n 's/^a->b: .*, \([0-9]*\) CE marks$/\1/p' "$work/summary")
delivered=$(sed -n 's/^delivered_ce \([0-9]*\)$/\1/p' "$work/out")
echo "emulated fq_codel marked $marks frames CE; the sender's kernel counted TCPDeliveredCE $delivered"
[ -n "$marks" ] && [ "$marks" -gt 0 ] || fail "no CE marks: $(cat "$work/summary")"
[ -n "$delivered" ] && [ "$delivered" -gt 0 ] \
  || fail "the sender's kernel saw no CE echo: $(cat "$work/out" "$work/summary")"
echo "ok"

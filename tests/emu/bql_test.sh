#!/usr/bin/env bash
# CTest emu_bql: seed S3 (scenarios/seeds/stmmac-bql.toml) at 100 Mbit/s under the emulator,
# with real Linux TCP: 4 iperf3 streams from the board (host a, the stmmac model with
# pfifo_fast) to the PC, and iputils ping under that load. The test prints the median ping
# RTT with BQL off and on and requires it to be lower with BQL on (issue 5 item 6).
#
# Why BQL lowers it here: the board's 256-descriptor TX ring holds ~128 full frames without
# BQL (~15 ms at 100 Mbit/s) and only BQL's limit with it; the rest of the queue sits in the
# qdisc either way, where ping shares the band with TCP. The hosts' kernels never see the
# emulated TX completions (veth frees skbs at transmit, docs/emu.md "TX completions"), so
# TCP Small Queues does not keep the qdisc short as on the real board: the absolute numbers
# are those of a full pfifo_fast, not the seed's 10 ms / 3 ms (the simulator reproduces those).
# Bounded: two emulations of ~6 s each.
# Usage: bql_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools iperf3 ping python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# Load for 5.5 s; 30 pings every 100 ms starting 1.5 s in (after slow start filled the queue).
load='iperf3 -c "$NICSIM_PEER" -P 4 -t 5.5 > /dev/null & i=$!
sleep 1.5
ping -n -c 30 -i 0.1 -W 3 "$NICSIM_PEER"
s=$?
wait $i || s=1
exit $s'

median_of() {  # ping output file -> median RTT in ms
  python3 -c '
import re, statistics, sys
rtts = [float(m.group(1)) for m in re.finditer(r"time=([0-9.]+) ms", open(sys.argv[1]).read())]
if len(rtts) < 20:
    sys.exit("only %d ping replies" % len(rtts))
print("%.2f" % statistics.median(rtts))' "$1"
}

declare -A med
for bql in false true; do
  "$nicsim" emulate "$src/scenarios/seeds/stmmac-bql.toml" --run "bql=$bql,rate=100Mbit" \
    --server 'iperf3 -s -1' -- sh -c "$load" > "$work/ping-$bql" 2> "$work/summary-$bql" \
    || fail "[bql=$bql] nicsim emulate exited $?: $(tail -3 "$work/ping-$bql")
$(cat "$work/summary-$bql")"
  med[$bql]=$(median_of "$work/ping-$bql") \
    || fail "[bql=$bql] $(tail -3 "$work/ping-$bql"); $(cat "$work/summary-$bql")"
  echo "bql=$bql: median ping RTT under load ${med[$bql]} ms ($(grep -E '^rtt' "$work/ping-$bql"))"
  grep -E "^NIC a|^  tx" "$work/summary-$bql" | head -2
done
awk -v off="${med[false]}" -v on="${med[true]}" 'BEGIN { exit !(on < off) }' \
  || fail "ping under load is not lower with BQL on (${med[true]} ms) than off (${med[false]} ms)
--- bql=false summary:
$(cat "$work/summary-false")
--- bql=true summary:
$(cat "$work/summary-true")"
echo "ok: BQL off ${med[false]} ms, on ${med[true]} ms"

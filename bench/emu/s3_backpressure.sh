#!/usr/bin/env bash
# Seed S3 under real TCP with and without back pressure (docs/emu.md "TX completions and back
# pressure", docs/seeds.md S3): the stmmac preset at 100 Mbit/s, `iperf3 -C cubic -P 4 -t 10`
# from host a (the board), and from 3 s on a TOS 0 and a TOS 0x10 ping of 40 each; prints the
# goodput, both pings, host a's qdisc (its backlog every 0.5 s) and the sockets' skmem.
# Usage (root, from the source tree, after building): bench/emu/s3_backpressure.sh BQL BP
#   BQL = true|false; BP = 1 (`--io pull`) | 0 (`--io packet`, the default: read at once)
set -euo pipefail
bql=${1:-false}
bp=${2:-1}
nicsim=${NICSIM:-build/tools/nicsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
chmod 755 "$out"
io=packet
[ "$bp" = 1 ] && io=pull
timeout 60 "$nicsim" emulate --io "$io" scenarios/seeds/stmmac-bql.toml \
  --run "bql=$bql,rate=100Mbit" --server 'iperf3 -s -1' -- sh -c "
iperf3 -c \$NICSIM_PEER -C cubic -P 4 -t 10 -f m > $out/iperf & i=\$!
sleep 3
ss -tinm > $out/ss
tc -s qdisc show dev nsim0 > $out/tc
ping -n -c 40 -i 0.1 \$NICSIM_PEER > $out/ping0 & p=\$!
for k in 1 2 3 4 5 6; do sleep 0.5; tc -s qdisc show dev nsim0 | grep backlog; done > $out/tcseries
ping -n -Q 0x10 -c 40 -i 0.1 \$NICSIM_PEER > $out/ping10
wait \$p; wait \$i" > "$out/emu" 2>&1
echo "S3 100 Mbit/s, bql=$bql, back pressure=$bp"
grep -E "SUM.*receiver" "$out/iperf"
echo "TOS 0    ping: $(tail -1 "$out/ping0")"
echo "TOS 0x10 ping: $(tail -1 "$out/ping10")"
head -1 "$out/tc"
echo "host qdisc backlog samples: $(tr '\n' ' ' < "$out/tcseries")"
echo "sockets: $(grep -oE 'skmem:[^ ]*|unacked:[0-9]+|cwnd:[0-9]+' "$out/ss" | tr '\n' ' ')"
grep -E "frame I/O|^a->b|^port a|emulator CPU" "$out/emu"

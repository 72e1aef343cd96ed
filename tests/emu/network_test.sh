#!/usr/bin/env bash
# CTest emu_network: a network in the emulator (docs/emu.md "Networks"): host a, router r in the
# emulator's data path, host b (tests/emu/network_a_r_b.toml: a - r.lan 1 Gbit/s 1 ms, r.wan - b
# 100 Mbit/s 5 ms, pfifo 100 on r.wan). The oracles are the hosts' real kernels:
#   1. addressing: a is 198.18.0.1/24 with a default route via r.lan (198.18.0.2), b is
#      198.18.1.2/24 via r.wan (198.18.1.1); $NICSIM_HOST_b is b's address;
#   2. ping a -> b crosses the router: no loss, replies arrive with TTL 63 (b sent 64, r
#      decremented it), the average RTT is 12.3 ms (2 x (1 + 5 ms) + serialisation + the four
#      generic-1g NIC receive paths, ~0.2 ms) within 12-13.5 ms (outlier retry as emu_ping);
#   3. TTL a -> b: ping -t 1 dies at the router (the summary counts 3 expired), ping -t 2 passes;
#   4. iperf3 (4 CUBIC flows, 5 s) a -> b: receiver goodput 85-100 Mbit/s (100 Mbit/s
#      bottleneck, ceiling 94.1), and the router's egress queue fills: the pfifo drops (the
#      summary's "NIC r.wan" line) and a ping under load waits >= 5 ms more than idle;
#   5. nothing leaks: after normal exits and after SIGKILL + `nicsim emulate --cleanup`, no
#      namespace, link or process of these emulators is left.
# Usage: network_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools ping iperf3
scenario="$src/tests/emu/network_a_r_b.toml"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
links_before=$(ip -o link | wc -l)

# 1. addresses, routes and the environment.
out=$("$nicsim" emulate "$scenario" --quiet -- sh -c \
  'ip -4 -o addr show nsim0; ip route show default; echo "b=$NICSIM_HOST_b peer=$NICSIM_PEER"') \
  || fail "addressing: nicsim emulate exited $?: $out"
echo "$out"
grep -q "inet 198.18.0.1/24" <<<"$out" || fail "host a is not 198.18.0.1/24"
grep -q "default via 198.18.0.2 dev nsim0" <<<"$out" || fail "host a has no default route via r.lan"
grep -q "b=198.18.1.2 peer=198.18.1.2" <<<"$out" || fail "NICSIM_HOST_b / NICSIM_PEER"

# 2. idle ping through the router.
attempt_idle() {
  local out min avg
  out=$("$nicsim" emulate "$scenario" -- sh -c 'ping -n -c 40 -i 0.025 -W 2 "$NICSIM_HOST_b"' \
          2>"$work/idle") || { echo "ping exited $?: $out"; return 1; }
  echo "$out" | tail -2
  echo "$out" | grep -q " 0% packet loss" || { echo "packets lost"; return 1; }
  [ "$(grep -c 'ttl=63 ' <<<"$out")" = 40 ] || { echo "replies without ttl=63"; return 1; }
  min=$(sed -n 's|^rtt min/avg/max/mdev = \([0-9.]*\)/.*|\1|p' <<<"$out")
  avg=$(sed -n 's|^rtt min/avg/max/mdev = [0-9.]*/\([0-9.]*\)/.*|\1|p' <<<"$out")
  echo "$avg" >"$work/idle_avg"
  grep -q "^router r: 80 forwarded" "$work/idle" || { grep '^router' "$work/idle"; return 1; }
  emu_in_band "$avg" 12 13.5 && { echo "ok: idle RTT $avg ms (12-13.5) across r"; return 0; }
  echo "idle RTT $avg ms outside 12-13.5 ms ($(emu_load))"
  emu_in_band "$min" 12 13.5 && return 2
  return 1
}
emu_retry_once "idle ping a -> b" attempt_idle
idle=$(cat "$work/idle_avg")

# 3. TTL: 1 expires at the router, 2 arrives.
"$nicsim" emulate "$scenario" -- sh -c 'ping -n -c 3 -i 0.05 -W 1 -t 1 "$NICSIM_HOST_b"' \
  >/dev/null 2>"$work/ttl1" && fail "ping -t 1 was answered"
grep -q "^router r: 0 forwarded, 0 without a route, 3 TTL expired" "$work/ttl1" \
  || fail "ping -t 1: $(grep '^router' "$work/ttl1")"
"$nicsim" emulate "$scenario" --quiet -- sh -c 'ping -n -c 3 -i 0.05 -W 2 -t 2 "$NICSIM_HOST_b"' \
  >/dev/null || fail "ping -t 2 did not cross the router"
echo "ok: TTL 1 expired at r (3 counted), TTL 2 crossed"

# 4. iperf3 + ping under load.
attempt_load() {
  local out bps mbit loaded drops
  out=$(cd "$work" && "$nicsim" emulate "$scenario" --server 'iperf3 -s -1' -- sh -c '
      iperf3 -c "$NICSIM_PEER" -C cubic -P 4 -t 5 -J >iperf.json & sleep 2
      ping -n -c 20 -i 0.1 "$NICSIM_PEER" | tail -1; wait; cat iperf.json' 2>"$work/load") \
    || { echo "iperf3 run exited $?"; cat "$work/load"; return 1; }
  bps=$(sed -n '/"sum_received"/,/}/s/.*"bits_per_second":[[:space:]]*\([0-9.e+]*\).*/\1/p' <<<"$out" | head -1)
  mbit=$(awk -v b="$bps" 'BEGIN { printf "%.1f", b / 1e6 }')
  loaded=$(sed -n 's|^rtt min/avg/max/mdev = [0-9.]*/\([0-9.]*\)/.*|\1|p' <<<"$out")
  drops=$(grep -A1 '^NIC r.wan' "$work/load" | sed -n 's/.*frames, \([0-9]*\) qdisc drops.*/\1/p')
  echo "iperf3 $mbit Mbit/s, ping under load $loaded ms (idle $idle), r.wan pfifo drops $drops"
  [ "${drops:-0}" -gt 0 ] || { echo "r.wan's pfifo never overflowed"; return 1; }
  awk -v l="$loaded" -v i="$idle" 'BEGIN { exit !(l != "" && l >= i + 5) }' \
    || { echo "the ping under load did not wait in r.wan's queue"; return 1; }
  emu_in_band "$mbit" 85 100 && return 0
  echo "goodput $mbit Mbit/s outside 85-100 ($(emu_load))"
  return 2
}
emu_retry_once "iperf3 a -> b through r" attempt_load

# 5. leaks: a SIGKILLed emulator's namespaces are removed by --cleanup; nothing else is left.
"$nicsim" emulate "$scenario" --quiet --duration 30s &
pid=$!
emu_wait_for_namespaces "$pid"
for _ in $(seq 1 50); do
  [ "$(emu_namespaces_of "$pid" | wc -l)" -ge 3 ] && break
  sleep 0.1
done
n=$(emu_namespaces_of "$pid" | wc -l)
[ "$n" = 3 ] || fail "expected 3 namespaces (h0, h1, sw) of $pid, found $n"
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
"$nicsim" emulate --cleanup 2>/dev/null
[ -z "$(emu_namespaces_of "$pid")" ] || fail "leftover namespaces: $(emu_namespaces_of "$pid")"
[ "$(ip -o link | wc -l)" = "$links_before" ] || fail "links in the root namespace changed"
echo "ok: no namespace or link left"

#!/usr/bin/env bash
# CTest emu_networks: issue 10's four network scenario groups through `nicsim emulate` (real kernels
# in the hosts, routers in the emulator's data path; docs/emu.md "Networks"), with the scenario's
# own traffic, on short [vary]-free copies of scenarios/networks/ (tests/emu/*_short.toml: same
# networks, shorter phases). Properties that must hold whatever the machine's load, not timings:
#   1. rtt_fair (client, four servers at 6.2 / 21.2 / 50.2 / 100.2 ms base RTT, one 100 Mbit/s
#      bottleneck; 8 flows for 10 s): every pair carries traffic (an upload and a download per
#      server), and the four pings' minimum RTTs are ordered as configured, each within
#      [base, base + 3 ms];
#   2. the overbuffered cable modem alone (120/12 Mbit/s, 1.6 MB bfifos; rrul, 14 s of load):
#      the loaded RTT is hundreds of ms (mean >= 300 ms) and bounded by the buffers (max <= 1.5 s);
#   3. behind the home router (HTB + fq_codel at 110/11 on the emulated Cortex-A5): the loaded RTT
#      mean is tens of ms (<= 60 ms) and below 1/5 of the modem alone's, the download >= 60 Mbit/s;
#   4. the dumbbell (two senders, two receivers, two routers; pfifo 1000 at the 100 Mbit/s, 20.4 ms
#      base RTT bottleneck; 4 uploads): both pairs carry traffic, the ping under load never beats
#      the base RTT (min >= 20.4 ms) and its mean is >= 50 ms (the uploads' queue in the left
#      router's pfifo);
#   5. no namespace of any of these emulators and no link in the root namespace is left.
# A timing band missed while the structural checks hold gets one more attempt (common.sh).
# Usage: networks_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
py=/usr/bin/python3 # Debian's interpreter (json), not a pyenv/venv python3
[ -x "$py" ] || emu_skip "$py is not installed"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
links_before=$(ip -o link | wc -l)

# emulate NAME: runs tests/emu/NAME_short.toml's own traffic into $work/NAME.json; checks that
# the emulator left no namespace behind.
emulate() {
  local name=$1 pid rc=0
  "$nicsim" emulate "$src/tests/emu/${name}_short.toml" --json "$work/$name.json" \
    >"$work/$name.txt" 2>"$work/$name.err" &
  pid=$!
  wait "$pid" || rc=$?
  [ "$rc" = 0 ] || { echo "nicsim emulate ${name}_short.toml exited $rc"; tail -5 "$work/$name.err"; return 1; }
  [ -z "$(emu_namespaces_of "$pid")" ] || { echo "leftover namespaces: $(emu_namespaces_of "$pid")"; return 1; }
}

# facts NAME: the values the checks need from $work/NAME.json, as shell words KEY=VALUE.
facts() {
  "$py" - "$work/$1.json" <<'PY'
import json, shlex, sys
r = json.load(open(sys.argv[1]))["runs"][0]
pairs = r["pairs"]
print("pairs=" + shlex.quote(" ".join("%s:%.1f" % (k, v["receiver"]["bits_per_second"] / 1e6)
                                      for k, v in pairs.items())))
print("npairs=%d" % len(pairs))
print("idle_pairs=%d" % sum(v["receiver"]["bytes"] == 0 for v in pairs.values()))
pings = sorted(p for p in r["latency_ms"] if p.startswith("ping"))
print("ping_mins=" + ",".join("%.2f" % r["latency_ms"][p]["min"] for p in pings))
print("ping_mean=%.2f" % r["latency_ms"]["ping"]["mean"])
lul = r.get("latency_under_load")
if lul:
    print("loaded_mean=%.1f" % lul["loaded_rtt"]["mean"])
    print("loaded_max=%.1f" % lul["loaded_rtt"]["max"])
    print("download=%.1f" % (lul["goodput_bps"]["b->a"] / 1e6))
PY
}

attempt_rtt_fair() {
  emulate rtt_fair || return 1
  local pairs npairs idle_pairs ping_mins
  eval "$(facts rtt_fair)"
  echo "rtt_fair goodput per pair (Mbit/s): $pairs"
  [ "$npairs" = 8 ] || { echo "expected 8 pairs, got $npairs"; return 1; }
  [ "$idle_pairs" = 0 ] || { echo "$idle_pairs pair(s) carried no traffic"; return 1; }
  echo "rtt_fair ping min RTTs (ms): $ping_mins (base 6.2 21.2 50.2 100.2)"
  # Ordered as configured, and each within 3 ms of its base RTT (the min of 70 pings).
  awk -v m="$ping_mins" 'BEGIN { if (split(m, v, ",") != 4) exit 1; split("6.2 21.2 50.2 100.2", b, " ")
      for (i = 1; i <= 4; i++) { if (v[i] < b[i] || (i > 1 && v[i] <= v[i-1])) exit 1 }
      for (i = 1; i <= 4; i++) if (v[i] > b[i] + 3) exit 2 }' || return $?
  echo "ok: rtt_fair: 8 pairs carry traffic, ping RTTs ordered as configured"
}

attempt_cable_modem() {
  emulate cable_modem || return 1
  emulate cable_modem_sqm || return 1
  local loaded_mean loaded_max download modem modem_max sqm down
  eval "$(facts cable_modem)"
  modem=$loaded_mean modem_max=$loaded_max
  eval "$(facts cable_modem_sqm)"
  sqm=$loaded_mean down=$download
  echo "cable modem: loaded RTT mean $modem ms, max $modem_max ms; behind the home router:" \
       "$sqm ms, download $down Mbit/s; $(grep '^router home' "$work/cable_modem_sqm.err")"
  emu_in_band "$modem" 300 1500 && emu_in_band "$modem_max" 0 1500 \
    || { echo "the modem's loaded RTT is not hundreds of ms within its buffers"; return 1; }
  awk -v s="$sqm" -v m="$modem" 'BEGIN { exit !(s * 5 < m) }' \
    || { echo "the home router does not collapse the loaded RTT"; return 1; }
  if emu_in_band "$sqm" 0 60 && emu_in_band "$down" 60 1000; then
    echo "ok: cable modem: loaded RTT hundreds of ms alone, tens of ms behind the home router"
    return 0
  fi
  echo "home router: loaded RTT or download outside its band ($(emu_load))"
  return 2
}

attempt_dumbbell() {
  emulate dumbbell || return 1
  local pairs npairs idle_pairs ping_mins ping_mean
  eval "$(facts dumbbell)"
  echo "dumbbell goodput per pair (Mbit/s): $pairs; ping min $ping_mins ms, mean $ping_mean ms"
  [ "$npairs" = 2 ] && [ "$idle_pairs" = 0 ] || { echo "expected 2 pairs with traffic"; return 1; }
  emu_in_band "$ping_mins" 20.4 1000 || { echo "a ping faster than the base RTT"; return 1; }
  emu_in_band "$ping_mean" 50 1000 || { echo "no queue in the bottleneck pfifo"; return 2; }
  echo "ok: dumbbell: both pairs carry traffic, the ping waits in the router's pfifo"
}

emu_retry_once "dumbbell through the emulator" attempt_dumbbell
emu_retry_once "rtt_fair through the emulator" attempt_rtt_fair
emu_retry_once "cable modem with and without the home router" attempt_cable_modem
[ "$(ip -o link | wc -l)" = "$links_before" ] || fail "links in the root namespace changed"
echo "ok: no namespace or link left"

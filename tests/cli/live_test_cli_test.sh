#!/usr/bin/env bash
# CTest cli_live_test: `nicsim test NAME HOST` (docs/live.md, issue 12 item 6) against real
# `nicsim server`s on 127.0.0.1 / 127.0.0.2. Pins: --list names every preset; usage errors
# (unknown test, rtt_fair with one HOST, a second HOST for a one-server test) exit 2 with one
# line; tcp_nup and rrul_var run live with flent's series names and test parameters, their JSON
# validates (backend "live", flent_test set) and Debian's flent draws their default plot (when
# python3-matplotlib is there: cli_flent_test requires it); rtt_fair against two servers runs
# four uploads and downloads (the two repeated, flent's HOSTS of four) and names HOSTS (root:
# the engine enters this namespace again with setns); voip runs live (its VoIP::delay series has
# values).
# Usage: live_test_cli_test.sh NICSIM SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
source "$(dirname "$0")/live_server.sh"

list=$("$nicsim" test --list)
for t in rrul rrul_be tcp_nup tcp_ndown tcp_bidirectional cubic_bbr cubic_reno cubic_dctcp \
  udp_flood voip bursts rrul_var rtt_fair; do
  grep -q "^$t " <<<"$list" || fail "test --list lacks $t"
done
usage() {  # EXPECTED-MESSAGE ARGS...
  local want=$1
  shift
  set +e
  "$nicsim" test "$@" 2>"$work/usage"
  local rc=$?
  set -e
  [ $rc = 2 ] || fail "nicsim test $*: exit $rc"
  grep -q "$want" "$work/usage" || fail "nicsim test $*: $(head -1 "$work/usage")"
}
usage "unknown flent test 'voipx' (presets: rrul" voipx 127.0.0.1
usage "rtt_fair needs 2 to 4 HOSTs (flent's HOSTS), got 1" rtt_fair 127.0.0.1
usage "HOST" tcp_nup 127.0.0.1 127.0.0.2
usage "markings: 'XX' is neither" rrul_var 127.0.0.1 --markings CS1,XX

start_server
port1=$port
pid1=$server_pid
short=(--idle 0.3s --duration 1.5s --probe-interval 50ms --quiet)
"$nicsim" test tcp_nup "127.0.0.1:$port1" --streams 2 "${short[@]}" --json "$work/nup.json" \
  --flent "$work/nup.flent.gz" >/dev/null 2>"$work/nup.err" || fail "tcp_nup: $(cat "$work/nup.err")"
"$nicsim" test rrul_var "127.0.0.1:$port1" --streams 2 --markings CS1,EF "${short[@]}" \
  --json "$work/var.json" --flent "$work/var.flent.gz" >/dev/null 2>"$work/var.err" \
  || fail "rrul_var: $(cat "$work/var.err")"
for j in nup var; do
  python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
    "$work/$j.json" >/dev/null || fail "$j: JSON does not validate"
done
python3 - "$work" <<'PY' || fail "live results"
import gzip, json, sys
w = sys.argv[1]
r = json.load(open(w + "/nup.json"))["runs"][0]
assert r["backend"] == "live" and r["flent_test"] == "tcp_nup", (r["backend"], r["flent_test"])
ups = r["transfer"]["a->b"]["flows"]
assert [f["name"] for f in ups] == ["TCP upload::1", "TCP upload::2"], ups
assert all(f["receiver"]["bytes"] > 0 for f in ups), ups
d = json.load(gzip.open(w + "/var.flent.gz", "rt"))
assert d["metadata"]["NAME"] == "rrul_var"
assert d["metadata"]["TEST_PARAMETERS"] == {"bidir_streams": "2", "markings": "CS1,EF"}
for s in ["TCP upload::0 (CS1)", "TCP download::1 (EF)", "Ping (ms)::UDP 0 (CS1)"]:
    assert any(v for v in d["results"][s] if v), (s, d["results"][s])
v = json.load(open(w + "/var.json"))["runs"][0]
dscp = {f["name"]: f["dscp"] for f in v["transfer"]["b->a"]["flows"]}
assert dscp == {"TCP download::0 (CS1)": 8, "TCP download::1 (EF)": 46}, dscp
PY
flent_python=$(sed -n '1s/^#!//p' "$(command -v flent 2>/dev/null || echo /dev/null)" 2>/dev/null || true)
if [ -n "$flent_python" ] && "$flent_python" -c 'import matplotlib' 2>/dev/null; then
  for x in "nup totals" "var all_scaled"; do
    set -- $x
    "$flent_python" "$src/tests/cli/flent_plot_check.py" "$work/$1.flent.gz" "$2" "$work/$1.png" \
      >"$work/$1.plot" 2>&1 || { cat "$work/$1.plot"; fail "flent cannot draw the live $1"; }
  done
fi

"$nicsim" test voip "127.0.0.1:$port1" --duration 1s --quiet --flent "$work/voip.flent.gz" \
  >/dev/null 2>"$work/voip.err" || fail "voip live: exit $?: $(cat "$work/voip.err")"
python3 - "$work/voip.flent.gz" <<'PY' || fail "voip live: series"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1], "rt"))
assert d["metadata"]["NAME"] == "voip"
assert any(v is not None for v in d["results"]["VoIP::delay"]), d["results"]["VoIP::delay"]
PY

if [ "$(id -u)" = 0 ]; then
  "$nicsim" server --listen 127.0.0.2:0 2>"$work/server2.log" &
  pid2=$!
  port2=
  for _ in $(seq 1 50); do
    # Not yet created by the background job on a loaded machine: not an error (set -e).
    port2=$(sed -n 's/.*listening on 127\.0\.0\.2:\([0-9]*\).*/\1/p' "$work/server2.log" \
      2>/dev/null || true)
    [ -n "$port2" ] && break
    sleep 0.1
  done
  [ -n "$port2" ] || fail "second server did not start"
  "$nicsim" test rtt_fair "127.0.0.1:$port1" "127.0.0.2:$port2" "${short[@]}" \
    --json "$work/rtt.json" --flent "$work/rtt.flent.gz" >/dev/null 2>"$work/rtt.err" \
    || { kill $pid2; fail "rtt_fair: $(cat "$work/rtt.err")"; }
  kill $pid2
  wait $pid2 2>/dev/null || true
  python3 - "$work" "127.0.0.1:$port1" "127.0.0.2:$port2" <<'PY' || fail "rtt_fair live"
import gzip, json, sys
w, h1, h2 = sys.argv[1:4]
d = json.load(gzip.open(w + "/rtt.flent.gz", "rt"))
assert d["metadata"]["HOSTS"] == [h1, h2, h1, h2], d["metadata"]["HOSTS"]
for s in ["TCP upload BE1 " + h1, "TCP download BE2 " + h2, "TCP upload BK2 " + h2]:
    assert any(v for v in d["results"][s] if v), (s, d["results"][s])
PY
else
  echo "note: not root: rtt_fair against two servers (setns) not run"
fi
echo ok

#!/usr/bin/env bash
# `nicsim flent-test` (CTest: cli_flent_test):
#  1. --list names the presets;
#  2. tcp_nup (3 streams) and cubic_reno over scenarios/examples/100mbit-5ms.toml: Debian's flent
#     reads each --flent file as that test (metadata NAME, the test's series, upload_streams)
#     and derives the series the test's own plots draw (tcp_nup's "totals": TCP upload sum and
#     Ping (ms) ICMP; the duels' sums and Ping (ms) avg). Drawing needs matplotlib, which the
#     machine may lack, so the check is on the series the plots read;
#  3. an unknown test is a usage error (exit 2) naming the presets;
#  4. every preset, short, over 100mbit-5ms (rtt_fair over scenarios/networks/rtt-fair.toml):
#     Debian's flent loads each .flent.gz (-f stats) and draws the test's default plot (flent's
#     DEFAULTS['PLOT']; udp_flood also 'ping') with its own plotter (flent_plot_check.py: fails
#     when flent fails, a series the plot reads has no value, or a drawn axes is empty); the
#     flood series (UDP upload, VoIP::delay/jitter/loss) carry values; the JSON validates;
#  5. rtt_fair on a two-host scenario fails naming the entry and what it needs (exit 2).
# Needs flent and python3-matplotlib (scripts/setup.sh).
# Usage: flent_test_cli_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v flent >/dev/null || fail "flent not installed (run scripts/setup.sh)"
flent_python=$(sed -n '1s/^#!//p' "$(command -v flent)")
"$flent_python" -c 'import matplotlib' 2>/dev/null \
  || fail "python3-matplotlib not installed (run scripts/setup.sh): flent cannot draw"
cd "$work"

# 1.
list=$("$nicsim" flent-test --list)
for t in rrul rrul_be tcp_nup tcp_ndown tcp_bidirectional cubic_bbr cubic_reno cubic_dctcp \
  udp_flood voip bursts rrul_var rtt_fair; do
  grep -q "^$t " <<<"$list" || fail "--list lacks $t: $list"
done

# 2.
scen="$src/scenarios/examples/100mbit-5ms.toml"
"$nicsim" flent-test tcp_nup "$scen" --streams 3 --length 3s --delay 1s --json nup.json \
  --flent nup.flent.gz >nup.txt 2>&1 || { cat nup.txt; fail "flent-test tcp_nup"; }
"$nicsim" flent-test cubic_reno "$scen" --length 3s --delay 1s --flent duel.flent.gz \
  >duel.txt 2>&1 || { cat duel.txt; fail "flent-test cubic_reno"; }
python3 - nup.flent.gz duel.flent.gz <<'PY' || fail "flent files"
import gzip, json, sys
nup = json.load(gzip.open(sys.argv[1], "rt"))
assert nup["metadata"]["NAME"] == "tcp_nup", nup["metadata"]["NAME"]
assert nup["metadata"]["TEST_PARAMETERS"] == {"upload_streams": "3"}, nup["metadata"]["TEST_PARAMETERS"]
assert set(nup["results"]) == {"TCP upload::1", "TCP upload::2", "TCP upload::3", "Ping (ms) ICMP"}, nup["results"].keys()
duel = json.load(gzip.open(sys.argv[2], "rt"))
assert duel["metadata"]["NAME"] == "cubic_reno"
for s in ["TCP upload Cubic BE", "TCP upload Reno CS1", "TCP download Reno BE",
          "Ping (ms) UDP BE", "Ping (ms) UDP CS1", "Ping (ms) UDP CS6", "Ping (ms) ICMP"]:
    assert s in duel["results"], (s, sorted(duel["results"]))
PY
for f in nup duel; do
  flent -i $f.flent.gz -f stats -o $f.stats >$f.log 2>&1 || { cat $f.log; fail "flent -i $f"; }
done
for s in "TCP upload sum" "Ping (ms) ICMP"; do
  grep -q "^ $s:" nup.stats || fail "flent has no '$s' for tcp_nup: $(cat nup.stats)"
done
for s in "TCP upload sum" "TCP download sum" "Ping (ms) avg" "TCP upload Reno CS1"; do
  grep -q "^ $s:" duel.stats || fail "flent has no '$s' for cubic_reno: $(cat duel.stats)"
done
python3 -c "import json; r=json.load(open('nup.json'))['runs'][0]; assert r['flent_test']=='tcp_nup'; \
  f=r['latency_under_load']['fairness']['a->b']; assert 1 / 3 < f <= 1.0, f" \
  || fail "Jain's index of 3 uploads"

# 3.
set +e
err=$("$nicsim" flent-test voipx "$scen" 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "unknown test: exit $rc"
grep -q "unknown flent test 'voipx' (presets: rrul, rrul_be" <<<"$err" || fail "unknown test: $err"

# 4.
plot_check="$src/tests/cli/flent_plot_check.py"
declare -A default_plot=(
  [rrul]=all_scaled [rrul_be]=all_scaled [tcp_nup]=totals [tcp_ndown]=totals
  [tcp_bidirectional]=totals [cubic_bbr]=all_scaled [cubic_reno]=all_scaled
  [cubic_dctcp]=all_scaled [udp_flood]="totals ping" [voip]=voip_delay [bursts]=ping
  [rrul_var]=all_scaled [rtt_fair]=all_scaled)
for t in "${!default_plot[@]}"; do
  args=(--length 3s --delay 1s --step 200ms)
  s_file=$scen
  case $t in
    bursts) args=(--length 7s --delay 1s --rate 20Mbit) ;;  # one 5 s burst from 1 s
    udp_flood) args+=(--rate 20Mbit) ;;
    rrul_var) args+=(--streams 2 --markings CS1,EF) ;;
    rtt_fair) s_file="$src/scenarios/networks/rtt-fair.toml" ;;
  esac
  "$nicsim" flent-test "$t" "$s_file" "${args[@]}" --json "all-$t.json" \
    --flent "all-$t.flent.gz" >"all-$t.txt" 2>&1 || { cat "all-$t.txt"; fail "flent-test $t"; }
  f="all-$t.flent.gz"
  [ "$t" = rtt_fair ] && f=$(ls all-rtt_fair-1-*.flent.gz)
  flent -i "$f" -f stats -o "all-$t.stats" >"all-$t.log" 2>&1 || { cat "all-$t.log"; fail "flent -i $t"; }
  for p in ${default_plot[$t]}; do
    "$flent_python" "$plot_check" "$f" "$p" "all-$t-$p.png" >"all-$t-$p.log" 2>&1 \
      || { grep -v "tight layout" "all-$t-$p.log"; fail "flent cannot draw $t's $p"; }
    [ -s "all-$t-$p.png" ] || fail "flent wrote no $t $p plot"
  done
  python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
    "all-$t.json" >/dev/null || fail "$t: JSON does not validate"
done
python3 - <<'PY' || fail "the floods' series"
import glob, gzip, json
def load(t):
    return json.load(gzip.open(sorted(glob.glob("all-%s*.flent.gz" % t))[0], "rt"))
def values(d, s):
    return [v for v in d["results"][s] if v is not None]
d = load("udp_flood")
up = values(d, "UDP upload")
assert up and abs(sum(up) / len(up) - 20) < 1, up  # 20 Mbit/s offered, the link carries it
assert d["metadata"]["NAME"] == "udp_flood" and d["metadata"]["LENGTH"] == 3
d = load("voip")
assert d["metadata"]["NAME"] == "voip"
delay = values(d, "VoIP::delay")
assert delay and all(4 < v < 50 for v in delay), delay  # 5 ms wire + serialisation
assert values(d, "VoIP::jitter") and values(d, "VoIP::loss") and values(d, "VoIP::bitrate")
assert "Burst 0" not in load("bursts")["results"]  # silent in flent
d = load("rrul_var")
assert d["metadata"]["TEST_PARAMETERS"] == {"bidir_streams": "2", "markings": "CS1,EF"}
assert {"TCP upload::0 (CS1)", "TCP download::1 (EF)", "Ping (ms)::ICMP",
        "Ping (ms)::UDP 1 (EF)"} <= set(d["results"]), sorted(d["results"])
d = load("rtt_fair")
assert d["metadata"]["HOSTS"] == ["s1", "s2", "s3", "s4"], d["metadata"]["HOSTS"]
assert {"TCP upload BE1 s1", "TCP download BK2 s4", "Ping (ms) ICMP3 s3"} <= set(d["results"])
PY
python3 -c "import json; r=json.load(open('all-voip.json'))['runs'][0]; \
  assert r['flent_test']=='voip' and r['voip']['VoIP']['codec']=='g711', r['voip']" \
  || fail "voip results"

# 5.
set +e
err=$("$nicsim" flent-test rtt_fair "$scen" --length 1s --delay 1s 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "rtt_fair on two hosts: exit $rc"
grep -q "traffic.flent\[0\]: rtt_fair needs one client and at least two servers" <<<"$err" \
  || fail "rtt_fair on two hosts: $err"
echo ok

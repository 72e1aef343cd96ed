#!/usr/bin/env bash
# `nicsim flent-test` (CTest: cli_flent_test):
#  1. --list names the presets;
#  2. tcp_nup (3 streams) and cubic_reno over scenarios/examples/100mbit-5ms.toml: Debian's flent
#     reads each --flent file as that test (metadata NAME, the test's series, upload_streams)
#     and derives the series the test's own plots draw (tcp_nup's "totals": TCP upload sum and
#     Ping (ms) ICMP; the duels' sums and Ping (ms) avg). Drawing needs matplotlib, which the
#     machine may lack, so the check is on the series the plots read;
#  3. an unknown test is a usage error (exit 2) naming the presets.
# Usage: flent_test_cli_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v flent >/dev/null || fail "flent not installed (run scripts/setup.sh)"
cd "$work"

# 1.
list=$("$nicsim" flent-test --list)
for t in rrul rrul_be tcp_nup tcp_ndown tcp_bidirectional cubic_bbr cubic_reno cubic_dctcp; do
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
echo ok

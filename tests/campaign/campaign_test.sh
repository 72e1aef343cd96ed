#!/usr/bin/env bash
# Campaigns end to end (CTest: cli_campaign; docs/campaigns.md), on tests/campaign/small.toml
# (2 combinations x 3 repetitions of 1 s):
#  1. --jobs 3 writes the same file as --jobs 1, byte for byte outside meta; it validates and
#     has the repetitions, their statistics and the mean ± half-width table;
#  2. --shard 1/3, 2/3, 3/3 + nicsim merge (parts in any order) give that file too; a missing
#     part is named;
#  3. --until-ci stops at the same repetition for 1 and 3 jobs;
#  4. Ctrl-C (SIGINT) stops cleanly: exit 130 and the runs that finished written, in order (a
#     prefix of the serial file's runs);
#  5. usage errors exit 2.
# Usage: campaign_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NICSIM_PRESETS="$src/presets"
scenario="$src/tests/campaign/small.toml"
same="$src/tests/campaign/same_outside_meta.py"

"$nicsim" run "$scenario" --jobs 1 --json "$work/serial.json" > "$work/serial.txt"
"$nicsim" run "$scenario" --jobs 3 --json "$work/threads.json" > "$work/threads.txt"
python3 "$same" "$work/serial.json" "$work/threads.json" || fail "--jobs 3 differs from --jobs 1"
cmp -s "$work/serial.txt" "$work/threads.txt" || fail "--jobs 3 printed something else"
python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/serial.json" || fail "schema validation"
python3 - "$work/serial.json" <<'PY' || fail "repetitions or statistics"
import json, sys
r = json.load(open(sys.argv[1]))
labels = [x["label"] for x in r["runs"]]
assert labels == [f"rate={rate} rep={i}" for rate in ("100Mbit", "200Mbit") for i in range(3)], labels
assert [x["repetition"] for x in r["runs"]] == [0, 1, 2, 0, 1, 2]
assert r["runs"][0]["seed"] == 5 and len({x["seed"] for x in r["runs"][:3]}) == 3
s = r["statistics"]
assert [x["label"] for x in s] == ["rate=100Mbit", "rate=200Mbit"], s
g = s[1]["metrics"]["goodput_mbit.a->b"]
assert g["ci"]["method"] == "student-t" and g["ci"]["low"] <= g["mean"] <= g["ci"]["high"]
assert s[0]["metrics"]["ping.rtt_p99_ms"]["ci"]["method"] == "order-statistic"
assert 150 < g["mean"] < 200, g
PY
grep -q "^run rate=200Mbit: 3 repetitions (95 % confidence intervals)" "$work/serial.txt" \
  || fail "no statistics table"
grep -Eq "goodput_mbit.a->b +mean +[0-9.]+ ± [0-9.e+-]+ +Mbit/s" "$work/serial.txt" \
  || fail "no 'mean ± half-width' row: $(cat "$work/serial.txt")"

# 2. shards and merge
for k in 1 2 3; do
  "$nicsim" run "$scenario" --shard "$k/3" --jobs 1 --quiet --json "$work/part$k.json" > /dev/null
done
"$nicsim" merge "$work/part3.json" "$work/part1.json" "$work/part2.json" -o "$work/merged.json" \
  2> /dev/null
python3 "$same" "$work/serial.json" "$work/merged.json" || fail "merged shards differ"
if "$nicsim" merge "$work/part1.json" "$work/part3.json" -o "$work/m2.json" 2> "$work/err.txt"; then
  fail "merge without part 2 succeeded"
fi
grep -q "part 2/3 is missing" "$work/err.txt" || fail "merge error: $(cat "$work/err.txt")"

# 3. --until-ci: the same stop for any number of jobs
for j in 1 3; do
  "$nicsim" run "$scenario" --until-ci 1% --max-repeat 5 --ci-metric 'goodput_mbit.a->b' \
    --jobs $j --quiet --json "$work/ci$j.json" > /dev/null
done
python3 "$same" "$work/ci1.json" "$work/ci3.json" || fail "--until-ci depends on --jobs"

# 4. Ctrl-C: a long campaign (40 repetitions, one at a time), interrupted after its first runs.
"$nicsim" run "$scenario" --repeat 40 --jobs 1 --quiet --json "$work/int.json" \
  > "$work/int.txt" 2> "$work/int.err" &
pid=$!
for _ in $(seq 600); do
  [ "$(grep -c '^run ' "$work/int.txt" || true)" -ge 2 ] && break
  sleep 0.1
done
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 130 ] || fail "Ctrl-C: exit $status, expected 130 ($(cat "$work/int.err"))"
grep -q "interrupted: [0-9]* of 80 runs finished, writing their results" "$work/int.err" \
  || fail "no interruption note: $(cat "$work/int.err")"
python3 - "$work/int.json" <<'PY' || fail "interrupted file"
import json, sys
r = json.load(open(sys.argv[1]))
n = len(r["runs"])
assert 2 <= n < 80, n
assert [x["label"] for x in r["runs"]] == [f"rate=100Mbit rep={i}" for i in range(n)]
PY

# 5. usage errors
for bad in "--shard 0/2" "--shard 3/2" "--until-ci 5" "--until-ci 5% --shard 1/2" \
           "--ci-metric x"; do
  # shellcheck disable=SC2086
  if "$nicsim" run "$scenario" $bad > /dev/null 2> "$work/err.txt"; then
    fail "'$bad' accepted"
  fi
  [ -s "$work/err.txt" ] || fail "'$bad': no message"
done
echo "campaign: ok"

#!/usr/bin/env bash
# CTest cli_live: `nicsim server` and `nicsim rrul` on 127.0.0.1 (no privileges needed; ICMP is
# left out with a notice when neither a raw nor a ping socket is allowed). Pins: usage errors
# exit 2 with one line; a refused connection exits 1 naming the address; a short rrul against a
# server on an ephemeral port writes a valid JSON document (backend "live") with 8 flows and
# the UDP probes; a run stopped by SIGTERM exits 143 with results cut at the stop; the server
# logs a refused garbage client and exits 0 on SIGTERM.
# Usage: live_cli_test.sh NICSIM SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
source "$(dirname "$0")/live_server.sh"

set +e
"$nicsim" rrul 2>"$work/e1"; rc=$?
set -e
[ $rc = 2 ] || fail "rrul without HOST exited $rc"
grep -q "^nicsim rrul: missing HOST" "$work/e1" || fail "message: $(head -1 "$work/e1")"
set +e
"$nicsim" rrul 127.0.0.1 --probe-interval 0.5ms 2>"$work/e2"; rc=$?
set -e
[ $rc = 2 ] || fail "bad --probe-interval exited $rc"
grep -q "^nicsim rrul: --probe-interval: at least 1ms, got '0.5ms'" "$work/e2" || fail "$(head -1 "$work/e2")"
set +e
"$nicsim" server --listen 127.0.0.1:99999 2>"$work/e3"; rc=$?
set -e
[ $rc = 2 ] || fail "bad --listen exited $rc"
grep -q "port '99999' is not 0..65535" "$work/e3" || fail "$(head -1 "$work/e3")"

# Find a port nobody listens on: bind one, note it, close it.
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
set +e
"$nicsim" rrul "127.0.0.1:$closed" --idle 0s --duration 1s --quiet >/dev/null 2>"$work/e4"; rc=$?
set -e
[ $rc = 1 ] || fail "rrul to a closed port exited $rc: $(cat "$work/e4")"
grep -q "connect 127.0.0.1:$closed: Connection refused" "$work/e4" || fail "$(cat "$work/e4")"

start_server --request-timeout 1s
python3 - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"\x00\x00\x00\x02\x07\x01")  # version 7
data = s.recv(512)
assert data[5] == 3 and b"frame.version: 7, this nicsim speaks 1" in data, data
PY
"$nicsim" rrul "127.0.0.1:$port" --idle 0.5s --duration 1s --probe-interval 20ms \
  --json "$work/r.json" >"$work/out.txt" 2>"$work/rrul.err" || fail "rrul: $(cat "$work/rrul.err")"
python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/r.json" || fail "JSON does not validate"
python3 - "$work/r.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["backend"] == "live"
assert [len(run["transfer"][d]["flows"]) for d in ("a->b", "b->a")] == [4, 4]
for p in ("udp_ef", "udp_bk", "udp_be"):
    assert run["latency_ms"][p]["count"] > 0, p
PY
# A run stopped early (SIGTERM) reports over what ran and exits 128 + 15.
"$nicsim" rrul "127.0.0.1:$port" --idle 0s --duration 30s --json "$work/stopped.json" --quiet \
  >/dev/null 2>&1 &
rrul_pid=$!
sleep 1.5
kill -TERM "$rrul_pid"
set +e
wait "$rrul_pid"; rc=$?
set -e
[ $rc = 143 ] || fail "rrul stopped by SIGTERM exited $rc"
python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/stopped.json" || fail "the stopped run's JSON does not validate"
python3 - "$work/stopped.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert 0 < run["duration_s"] < 30, run["duration_s"]
for f in run["transfer"]["a->b"]["flows"]:
    assert f["receiver"]["end_s"] == run["duration_s"], f
assert run["phases"][-1]["end_s"] == run["duration_s"], run["phases"]
PY
kill "$server_pid"
wait "$server_pid" || fail "server exited $? on SIGTERM"
server_pid=
grep -q "rejected: frame.version: 7" "$work/server.log" || fail "log: $(cat "$work/server.log")"
grep -q "stopped:" "$work/server.log" || fail "no stop line: $(cat "$work/server.log")"
echo "ok"

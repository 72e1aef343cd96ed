#!/usr/bin/env bash
# CTest emu_live_rrul: `nicsim server` and `nicsim rrul HOST` between two network namespaces
# this test creates (a veth pair, no emulator), with short phases (1 s idle, 2 s load, 1 s
# idle), then hostile clients against the same server: garbage, an oversize length, a
# slowloris that never completes its request, and one client too many (the per-address limit
# raised to the client limit, so that this one address can reach it). Pins: the rrul JSON
# validates (backend "live"), 4 flows per direction named and marked as flent's rrul with
# traffic in each, the four probes answered without loss with their series, no one-way delays
# (unsynchronised clocks on a real network), the three phases and a latency_under_load with a
# grade and RPM; the server logs each hostile client with its reason, stays up, and serves a
# normal client afterwards. Namespaces "nslive-PID-{a,b}" are removed on exit (trap).
# Usage: live_rrul_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools ip python3
work=$(mktemp -d)
a="nslive-$$-a"
b="nslive-$$-b"
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"

ip netns add "$a"
ip netns add "$b"
ip -n "$a" link add va type veth peer name vb netns "$b"
ip -n "$a" addr add 198.18.7.1/24 dev va
ip -n "$b" addr add 198.18.7.2/24 dev vb
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set va up
ip -n "$b" link set vb up

ip netns exec "$b" "$nicsim" server --listen 198.18.7.2:5270 --max-clients 20 --max-per-peer 20 \
  --request-timeout 1s 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 50); do
  grep -q "listening on" "$work/server.log" && break
  sleep 0.1
done
grep -q "listening on 198.18.7.2:5270" "$work/server.log" || fail "server did not start: $(cat "$work/server.log")"

ip netns exec "$a" "$nicsim" rrul 198.18.7.2 --idle 1s --duration 2s --probe-interval 50ms \
  --interval 100ms --json "$work/rrul.json" >"$work/rrul.txt" 2>"$work/rrul.err" \
  || fail "nicsim rrul exited $?: $(cat "$work/rrul.err") -- server: $(cat "$work/server.log")"
python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/rrul.json" || fail "rrul JSON does not validate"
grep -q "receiver$" "$work/rrul.txt" || fail "no iperf3-style table: $(cat "$work/rrul.txt")"
python3 - "$work/rrul.json" <<'PY' || fail "rrul results (above); server: $(cat "$work/server.log")"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["backend"] == "live", run["backend"]
assert abs(run["duration_s"] - 4.0) < 1e-9, run["duration_s"]
for d in ("a->b", "b->a"):
    flows = run["transfer"][d]["flows"]
    assert [f["id"] for f in flows] == [5, 7, 9, 11], flows
    for f in flows:
        assert f["receiver"]["bytes"] > 0, (d, f)
        assert f["receiver"]["start_s"] == 1.0 and f["receiver"]["end_s"] == 3.0, f
    assert run["goodput_bps"][d] > 0
lat = run["latency_ms"]
assert sorted(lat) == ["ping", "udp_be", "udp_bk", "udp_ef"], sorted(lat)
for name, p in lat.items():
    # 80 probes each over 4 s; those of the last second may still be unanswered at the end.
    assert p["count"] >= 60 and p["lost"] == 0, (name, p)
    assert "one_way" not in p, name
names = [f["name"] for d in ("a->b", "b->a") for f in run["transfer"][d]["flows"]]
assert names == ["TCP upload BE", "TCP upload BK", "TCP upload CS5", "TCP upload EF",
                 "TCP download BE", "TCP download BK", "TCP download CS5",
                 "TCP download EF"], names
assert [f["dscp"] for f in run["transfer"]["b->a"]["flows"]] == [0, 8, 40, 46]
assert [(p["name"], p["start_s"], p["end_s"]) for p in run["phases"]] == [
    ("idle_before", 0.0, 1.0), ("load", 1.0, 3.0), ("idle_after", 3.0, 4.0)], run["phases"]
assert lat["udp_ef"]["dscp"] == 46 and lat["udp_bk"]["dscp"] == 8, lat["udp_ef"]
for name, p in lat.items():
    s = p["series"]
    assert len(s["time_s"]) == len(s["rtt_ms"]) == p["count"] + p["lost"], name
    assert "one_way_a_to_b_ms" not in s and "one_way_b_to_a_ms" not in s, name
lul = run["latency_under_load"]
assert lul["grade"] in ("A+", "A", "B", "C", "D", "F"), lul
assert lul["rpm"] > 0 and lul["loaded_rtt"]["count"] > 0 and lul["idle_rtt"]["count"] > 0
assert "idle_one_way" not in lul or lul["idle_one_way"] is None, lul.get("idle_one_way")
# Intervals: 100 ms bins over 4 s, the first second idle (no TCP bytes).
iv = run["intervals"]
assert len(iv) == 40, len(iv)
assert all(i["directions"]["a->b"]["bytes"] == 0 for i in iv[:10]), "traffic during idle"
print("rrul ok: goodput a->b %.0f Mbit/s, b->a %.0f Mbit/s, ping mean %.3f ms, grade %s, "
      "%.0f RPM" % (run["goodput_bps"]["a->b"] / 1e6, run["goodput_bps"]["b->a"] / 1e6,
                    lat["ping"]["mean"], lul["grade"], lul["rpm"]))
PY

# Hostile clients (python3 in host a), then a normal client again.
ip netns exec "$a" python3 - <<'PY' || fail "hostile-input checks failed; server log: $(cat "$work/server.log")"
import socket, struct, time
def conn():
    s = socket.create_connection(("198.18.7.2", 5270), timeout=5)
    return s
def reject_reason(s):
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    # Reject frame: u32 len | v1 | type 3 | u8 n | reason
    assert len(data) >= 7 and data[4] == 1 and data[5] == 3, data
    return data[7:7 + data[6]].decode()
s = conn(); s.sendall(b"GET / HTTP/1.1\r\n\r\n")
r = reject_reason(s); assert r.startswith("frame.length: 1195725856 exceeds"), r
s = conn(); s.sendall(struct.pack(">I", 0xFFFFFFFF))
r = reject_reason(s); assert r == "frame.length: 4294967295 exceeds the largest frame (131074)", r
s = conn(); s.sendall(struct.pack(">IBB", 13, 1, 1) + bytes([9, 0]) + struct.pack(">II", 1000, 100) + b"\0")
r = reject_reason(s); assert r == "request.kind: 9 is not 1 (sink), 2 (source), 3 (echo), 4 (udp sink), 5 (udp source) or 6 (transfer)", r
# Slowloris: one byte at a time, slower than the 1 s request timeout allows.
s = conn(); s.sendall(b"\0")
t0 = time.monotonic()
r = reject_reason(s); assert r == "no complete request within 1000 ms", r
# Many idle connections: the 21st of 20 is refused, the rest are cut by the timeout.
idle = [conn() for _ in range(20)]
extra = conn()
r = reject_reason(extra); assert r == "server busy: 20 clients", r
for s in idle:
    assert reject_reason(s) == "no complete request within 1000 ms"
print("hostile ok")
PY
for reason in "rejected: frame.length: 1195725856" "rejected: frame.length: 4294967295" \
              "rejected: request.kind: 9" "no complete request within 1000 ms" "server busy"; do
  grep -q "$reason" "$work/server.log" || fail "server log lacks '$reason': $(cat "$work/server.log")"
done
kill -0 "$server_pid" || fail "the server died: $(cat "$work/server.log")"
ip netns exec "$a" "$nicsim" rrul 198.18.7.2 --idle 0s --duration 1s --probe-interval 100ms \
  --quiet >/dev/null 2>"$work/rrul2.err" || fail "rrul after hostile clients: $(cat "$work/rrul2.err")"
kill "$server_pid"
wait "$server_pid" || fail "server exited $? on SIGTERM"
server_pid=
grep -q "stopped:" "$work/server.log" || fail "no stop line: $(cat "$work/server.log")"
echo "ok"

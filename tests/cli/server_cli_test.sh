#!/usr/bin/env bash
# CTest cli_server: `nicsim server --max-duration` (docs/live.md, "Bounds": a flow lasts at most
# --max-duration; longer requests are cut). A server on 127.0.0.1 with --max-duration 1s gets
# a raw protocol client asking for a 60 s source: the server must log the flow as 1000 ms and
# end it with End after about 1 s of data, not 60 s — End's elapsed time is the server's own
# count (at least the 1 s cap, far below the 60 s asked; the client gives up after 15 s on a
# server that ignores the cap). A 0.5 s request below the cap is served as asked. Then
# --secret-file: refused when others may read it; rrul with the secret is served, without it
# refused with a reason naming --secret-file.
# Usage: server_cli_test.sh NICSIM SOURCE_DIR
set -euo pipefail
nicsim=$1
source "$(dirname "$0")/live_server.sh"
start_server --max-duration 1s

# Protocol (nicsim/live/protocol.h): frame = u32 length (2 + payload) | u8 version 1 | u8 type;
# Request (type 1) = u8 kind (2 = source) | u8 dscp | u32 duration_ms | u32 stats_interval_ms |
# u8 n | cc; End (type 6) = u64 elapsed_us | u64 bytes | ... . Prints "elapsed_us bytes".
source_flow() {  # duration_ms -> "elapsed_us bytes" from the server's End
  python3 - "$port" "$1" <<'PY'
import socket, struct, sys, time
port, duration_ms = int(sys.argv[1]), int(sys.argv[2])
give_up = time.monotonic() + 15  # a bound for a server that ignores the cap, not a measurement
s = socket.create_connection(("127.0.0.1", port), timeout=20)
payload = struct.pack(">BBIIB", 2, 0, duration_ms, 1000, 0)
s.sendall(struct.pack(">IBB", 2 + len(payload), 1, 1) + payload)
buf = b""
while True:
    while len(buf) >= 6:
        length, version, kind = struct.unpack(">IBB", buf[:6])
        if len(buf) < 4 + length:
            break
        body, buf = buf[6:4 + length], buf[4 + length:]
        if kind == 3:
            sys.exit("rejected: " + body[1:].decode())
        if kind == 6:
            elapsed_us, sent = struct.unpack(">QQ", body[:16])
            print(elapsed_us, sent)
            sys.exit(0)
    if time.monotonic() > give_up:
        sys.exit("no End within 15 s: the flow was not cut")
    chunk = s.recv(65536)
    if not chunk:
        sys.exit("connection closed without End")
    buf += chunk
PY
}

out=$(source_flow 60000) || fail "60 s request against --max-duration 1s: no End"
read -r elapsed bytes <<<"$out"
echo "60 s source with --max-duration 1s: End after ${elapsed} us, ${bytes} bytes"
[ "$elapsed" -ge 1000000 ] && [ "$elapsed" -lt 30000000 ] \
  || fail "60 s request against --max-duration 1s ended after ${elapsed} us (want >= 1 s, < 30 s)"
[ "$bytes" -gt 0 ] || fail "the capped source sent nothing"
grep -q ": source for 1000 ms, dscp 0" "$work/server.log" \
  || fail "server did not log the capped duration: $(cat "$work/server.log")"

out=$(source_flow 500) || fail "0.5 s request: no End"
read -r elapsed bytes <<<"$out"
[ "$elapsed" -ge 500000 ] && [ "$elapsed" -lt 30000000 ] \
  || fail "0.5 s request ended after ${elapsed} us (want at least the 0.5 s asked)"
grep -q ": source for 500 ms, dscp 0" "$work/server.log" \
  || fail "server did not log the 500 ms flow: $(cat "$work/server.log")"
kill "$server_pid"
wait "$server_pid" || fail "server exited $? on SIGTERM"
server_pid=

# --secret-file (docs/security.md): a file others may read is a usage error; a server with a
# secret serves `nicsim rrul --secret-file` with the same secret and refuses one without it,
# each with a reason that says what to do.
printf 'correct horse\n' > "$work/secret"
chmod 644 "$work/secret"
set +e
"$nicsim" server --listen 127.0.0.1:0 --secret-file "$work/secret" 2>"$work/s1"; rc=$?
set -e
[ $rc = 2 ] || fail "world-readable --secret-file exited $rc"
grep -q "group or others may read it (chmod 600" "$work/s1" || fail "$(cat "$work/s1")"
chmod 600 "$work/secret"
start_server --secret-file "$work/secret"
grep -q "shared secret)" "$work/server.log" || fail "banner: $(head -1 "$work/server.log")"
"$nicsim" rrul "127.0.0.1:$port" --secret-file "$work/secret" --idle 0s --duration 0.5s \
  --probe-interval 50ms --quiet --json "$work/auth.json" >/dev/null 2>"$work/a1" \
  || fail "rrul with the secret: $(cat "$work/a1")"
set +e
"$nicsim" rrul "127.0.0.1:$port" --idle 0s --duration 0.5s --quiet >/dev/null 2>"$work/a2"; rc=$?
set -e
[ $rc = 1 ] || fail "rrul without the secret exited $rc"
grep -q "requires a shared secret: give it with --secret-file" "$work/a2" || fail "$(cat "$work/a2")"
kill "$server_pid"
wait "$server_pid" || fail "server with a secret exited $? on SIGTERM"
server_pid=
grep -q "failed authentication" "$work/server.log" || fail "no summary: $(tail -2 "$work/server.log")"
echo "ok"

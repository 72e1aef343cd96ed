# Shared by the `nicsim server` CLI tests (sourced after nicsim=...): fail, a work directory
# removed on exit together with the server, and start_server ARGS..., which starts
# `nicsim server --listen 127.0.0.1:0 ARGS` (log in $work/server.log) and sets $server_pid
# and $port (the ephemeral port it logs).
fail() { echo "FAIL: $* [load average $(cut -d" " -f1-3 /proc/loadavg)]" >&2; exit 1; }
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

start_server() {
  "$nicsim" server --listen 127.0.0.1:0 "$@" 2>"$work/server.log" &
  server_pid=$!
  port=
  for _ in $(seq 1 50); do
    # The background job may not have created the log yet (a loaded machine): not an error.
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log" 2>/dev/null || true)
    [ -n "$port" ] && return 0
    sleep 0.1
  done
  fail "server did not start: $(cat "$work/server.log")"
}

#!/usr/bin/env bash
# CTest emu_cleanup: nothing is left behind — no namespace (ip netns list), no link in the
# caller's namespace, no process — after a normal exit, after SIGTERM mid-run (exit status
# 143), and after SIGKILL: at once for processes (the command's and the server's background
# children that ignore SIGTERM and SIGHUP included: each runs in a PID namespace whose init dies
# with the emulator), and for namespaces once the next start (`nicsim emulate --cleanup`) ran.
# Usage: cleanup_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
scenario="$src/scenarios/examples/100mbit-5ms.toml"
# Only what the test's own emulators could have added is compared: a link that appeared in
# the caller's namespace (the emulator's are a0, b0 and nsim0, created in its namespaces), not
# the whole list, which other software (or an earlier killed run) may change meanwhile.
links_of_caller() { ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }
links_before=$(mktemp)
trap 'rm -f "$links_before"; pkill -f "^sleep 600\.${$}" || true' EXIT
links_of_caller > "$links_before"
# The commands' markers are unique to this run (a killed earlier run's `sleep` may still live).
s2=20.${$}5
# Steps 3's markers are also their durations: long enough that a slow machine's checks end
# well before they would (on a loaded 2-core machine a pgrep takes up to a second).
s3=600.${$}7
s4=600.${$}9

check_clean() {  # $1: emulator pid, $2: marker of its command
  [ -z "$(emu_namespaces_of "$1")" ] || fail "$3: namespaces left: $(emu_namespaces_of "$1")"
  added=$(links_of_caller | comm -13 "$links_before" -)
  [ -z "$added" ] || fail "$3: links left in the caller's namespace: $added"
  ! pgrep -f "^sleep $2\$" >/dev/null || fail "$3: command 'sleep $2' still running"
}

# Whether a process whose command line starts with "sleep $1" is still there 3 s from now
# (the kernel kills a PID namespace's processes within milliseconds of its init's death).
survivors() {
  local deadline=$((SECONDS + 3))
  while [ $SECONDS -lt $deadline ]; do
    pgrep -f "^sleep $1" >/dev/null || return 1
    sleep 0.2
  done
  pgrep -af "^sleep $1"
}

# 1. Normal exit.
"$nicsim" emulate "$scenario" --quiet -- sleep 0.3 &
pid=$!
wait $pid || fail "normal run exited $?"
check_clean $pid 0.3 "normal exit"
echo "ok: normal exit"

# 2. SIGTERM mid-run.
"$nicsim" emulate "$scenario" --quiet -- sleep $s2 &
pid=$!
emu_wait_for_namespaces $pid
[ "$(emu_namespaces_of $pid | wc -l)" -eq 3 ] || fail "expected 3 namespaces: $(emu_namespaces_of $pid)"
ip netns list | grep -q "^nicsim-$pid-a" || fail "ip netns list does not show nicsim-$pid-a"
sleep 0.3
kill -TERM $pid
status=0
wait $pid || status=$?
[ $status -eq 143 ] || fail "SIGTERM: exit status $status, expected 143"
check_clean $pid $s2 "SIGTERM"
echo "ok: SIGTERM (exit 143)"

# 3. SIGKILL: namespaces stay until the next start removes them; no process of the session
#    stays — not the command, not the server, not their background children that ignore
#    SIGTERM and SIGHUP (before this build, those ran on until --cleanup).
stubborn() {  # $1: marker; a shell that ignores TERM/HUP with a detached child that does too
  echo "trap '' TERM HUP; (trap '' TERM HUP; exec sleep ${1}1) & exec sleep $1"
}
"$nicsim" emulate "$scenario" --quiet --server-wait 1s --server "$(stubborn $s4)" \
  -- sh -c "$(stubborn $s3)" &
pid=$!
emu_wait_for_namespaces $pid
for _ in $(seq 1 50); do
  pgrep -f "^sleep $s3\$" >/dev/null && break
  sleep 0.1
done
pgrep -f "^sleep ${s3}1\$" >/dev/null || fail "SIGKILL: the command's background child never started"
pgrep -f "^sleep ${s4}1\$" >/dev/null || fail "SIGKILL: the server's background child never started"
kill -KILL $pid
wait $pid 2>/dev/null || true
[ -n "$(emu_namespaces_of $pid)" ] || fail "SIGKILL: expected leftovers to clean up"
if left=$(survivors $s3) || left=$(survivors $s4); then
  fail "SIGKILL: processes of the session outlived the emulator: $left"
fi
echo "ok: SIGKILL, every process of the session died with the emulator"
cleanup_out=$("$nicsim" emulate --cleanup 2>&1) || fail "--cleanup exited $?: $cleanup_out"
echo "$cleanup_out" | grep -q "removed leftover namespace nicsim-$pid-a" \
  || fail "--cleanup did not report removing nicsim-$pid-a: $cleanup_out"
check_clean $pid $s3 "SIGKILL + next start"
echo "ok: SIGKILL, then the next start removed the leftovers"

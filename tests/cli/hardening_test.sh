#!/usr/bin/env bash
# Hostile inputs and failing outputs (issue 16 items 1-4; CTest: cli_hardening). Each case was
# a reproduction that failed before the fix: a read that never ends or never starts, a stack
# overflow in the TOML parser, a seed nicsim could not write back, a silently ignored preset
# path, a megabyte echoed in one error line, writes to a full device that exited 0, and a
# truncated results file left under its real name.
# Usage: hardening_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NICSIM_PRESETS="$src/presets"

# expect STATUS PATTERN CMD...: runs CMD (at most 20 s, standard output to $OUT or /dev/null),
# checks its exit status and that its standard error is one line matching PATTERN (with USAGE=1:
# a usage error, whose message is followed by the synopsis and a pointer to --help).
expect() {
  local want=$1 pattern=$2
  shift 2
  local rc=0
  timeout 20 "$@" > "${OUT:-/dev/null}" 2> "$work/err" || rc=$?
  [ "$rc" -eq "$want" ] || fail "$*: exit $rc, want $want: $(head -c 300 "$work/err")"
  [ -n "${USAGE:-}" ] || [ "$(wc -l < "$work/err")" -eq 1 ] || fail "$*: want one line on stderr, got: $(head -c 600 "$work/err")"
  grep -qE -- "$pattern" "$work/err" || fail "$*: stderr does not match '$pattern': $(cat "$work/err")"
}

cat > "$work/s.toml" <<TOML
[scenario]
name = "hardening"
duration = "1s"
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"
[wire]
rate = "100Mbit"
delay = "100us"
[[traffic.tcp]]
from = "a"
to = "b"
TOML

# 1. Files that are not regular files, or too large, or nested too deep.
expect 2 '^nicsim: /dev/zero: cannot read the file: it is a device' "$nicsim" run /dev/zero
mkfifo "$work/fifo"
expect 2 'fifo: cannot read the file: it is a FIFO' "$nicsim" run "$work/fifo"
expect 2 ': cannot read the file: it is a directory$' "$nicsim" run "$work"
expect 2 'missing.toml: cannot read the file: no such file$' "$nicsim" run "$work/missing.toml"
head -c 5000000 /dev/zero | tr '\0' '#' > "$work/big.toml"
expect 2 'big.toml: cannot read the file: larger than 4194304 bytes' "$nicsim" run "$work/big.toml"
python3 -c 'print("scenario" + ".a" * 35000 + " = 1")' > "$work/deep.toml"
expect 2 'deep.toml:1:[0-9]+: nested deeper than 64 levels' "$nicsim" run "$work/deep.toml"
expect 2 'deep.toml:1:[0-9]+: nested deeper than 64 levels' "$nicsim" topology "$work/deep.toml"

# 2. Bounds: a seed that does not fit the scenario's integer, a wrong $NICSIM_PRESETS, a
#    megabyte-long unknown key (echoed cut), a probe every nanosecond.
USAGE=1 expect 2 'at most 9223372036854775807' "$nicsim" run "$work/s.toml" --seed 9223372036854775808
USAGE=1 expect 2 'at most 9223372036854775807' "$nicsim" run "$work/s.toml" --seed 18446744073709551616
"$nicsim" run "$work/s.toml" --seed 9223372036854775807 --quiet > /dev/null \
  || fail "the largest seed is refused"
NICSIM_PRESETS=/nonexistent expect 2 "NICSIM_PRESETS: '/nonexistent' does not exist" \
  "$nicsim" run "$work/s.toml"
{ cat "$work/s.toml"; python3 -c 'print("k" * 1000000 + " = 1")'; } > "$work/longkey.toml"
expect 2 'unknown key' "$nicsim" run "$work/longkey.toml"
[ "$(wc -c < "$work/err")" -lt 2000 ] || fail "the unknown key is echoed in full ($(wc -c < "$work/err") bytes)"
{ cat "$work/s.toml"; printf '[[traffic.ping]]\nfrom = "a"\nto = "b"\ninterval = "1ns"\n'; } > "$work/ping.toml"
expect 2 'traffic.ping\[0\].interval: must be at least 100us, got 1ns' "$nicsim" run "$work/ping.toml"

# 3. No silent loss: a failed write to standard output or to a file is an error, and a results
#    file is complete or absent.
"$nicsim" run "$work/s.toml" --quiet --json "$work/r.json" > /dev/null
[ -s "$work/r.json" ] || fail "no results file"
[ -z "$(find "$work" -name '*.partial-*')" ] || fail "a temporary file was left behind"
if [ -w /dev/full ]; then
  OUT=/dev/full expect 1 '^nicsim: cannot write to standard output' \
    "$nicsim" run "$work/s.toml" --quiet
  OUT=/dev/full expect 1 '^nicsim: cannot write to standard output' "$nicsim" compare "$work/r.json"
  OUT=/dev/full expect 1 '^nicsim: cannot write to standard output' "$nicsim" help
  OUT=/dev/full expect 1 '^nicsim: cannot write to standard output' "$nicsim" run --help
  OUT=/dev/full expect 1 '^nicsim: cannot write to standard output' "$nicsim" topology "$work/s.toml"
  expect 1 'cannot write /dev/full' "$nicsim" run "$work/s.toml" --quiet --json /dev/full
else
  echo "no writable /dev/full here: the full-device cases are skipped" >&2
fi
# A write that fails into a regular file leaves the old complete file, not a truncated one, and
# no temporary file: a file-size limit of 1 KiB (SIGXFSZ ignored, so write() fails with EFBIG)
# makes the results write fail half-way.
cp "$work/r.json" "$work/keep.json"
rc=0
( trap '' XFSZ; ulimit -f 1; exec "$nicsim" run "$work/s.toml" --quiet --json "$work/r.json" ) \
  > /dev/null 2> "$work/err" || rc=$?
[ "$rc" -eq 1 ] || fail "a failed results write exited $rc: $(cat "$work/err")"
# (With the run streamed through a temporary spool, the spool's write may be the one that fails.)
grep -Eq "cannot write ($work/r.json|the temporary results file): File too large" "$work/err" \
  || fail "no message: $(cat "$work/err")"
cmp -s "$work/r.json" "$work/keep.json" || fail "the existing results file was changed by a failed write"
[ -z "$(find "$work" -name '*.partial-*')" ] || fail "a temporary file was left behind"

# 4. A plot killed by SIGTERM removes its scratch directory and leaves no gnuplot behind. The
#    fake gnuplot records its pid and blocks; SIGTERM goes to nicsim once gnuplot is running.
mkdir -p "$work/bin" "$work/tmp"
cat > "$work/bin/gnuplot" <<'SH'
#!/bin/sh
echo $$ > "$NICSIM_TEST_MARK.tmp" && mv "$NICSIM_TEST_MARK.tmp" "$NICSIM_TEST_MARK"
exec sleep 60
SH
chmod +x "$work/bin/gnuplot"
NICSIM_TEST_MARK="$work/gnuplot.pid" TMPDIR="$work/tmp" PATH="$work/bin:$PATH" \
  "$nicsim" plot "$work/r.json" -o "$work/p.png" 2> /dev/null &
plot_pid=$!
for _ in $(seq 200); do [ -s "$work/gnuplot.pid" ] && break; sleep 0.05; done
[ -s "$work/gnuplot.pid" ] || { kill -9 $plot_pid; fail "the fake gnuplot never started"; }
kill -TERM $plot_pid
rc=0
wait $plot_pid || rc=$?
[ "$rc" -eq 143 ] || fail "nicsim plot after SIGTERM exited $rc, want 143 (killed by SIGTERM)"
gp=$(cat "$work/gnuplot.pid")
if kill -0 "$gp" 2> /dev/null; then kill -9 "$gp"; fail "gnuplot ($gp) was left running"; fi
[ -z "$(ls -A "$work/tmp")" ] || fail "the scratch directory was left: $(ls "$work/tmp")"
[ ! -e "$work/p.png" ] || fail "an interrupted plot wrote its output"

echo "hardening: all cases passed"

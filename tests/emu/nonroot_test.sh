#!/usr/bin/env bash
# CTest emu_nonroot: without root, `nicsim emulate` exits 2 with exactly one line on stderr
# and creates nothing. As root the test drops to `nobody` with setpriv (all capabilities
# gone); as any other user it runs nicsim directly.
# Usage: nonroot_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cp "$src/scenarios/examples/100mbit-5ms.toml" "$work/s.toml"
chmod 644 "$work/s.toml"
# `nobody` may not be able to read the checkout (e.g. under /root): give it its own presets.
cp -r "$src/presets" "$work/presets"
chmod -R a+rX "$work/presets"
export NICSIM_PRESETS="$work/presets"
# Nor the build tree: run a copy of the binary (it links only system libraries dynamically).
cp "$nicsim" "$work/nicsim"
chmod 755 "$work/nicsim"
run=("$work/nicsim" emulate "$work/s.toml" -- true)
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || emu_skip "setpriv (util-linux) is not installed"
  run=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "${run[@]}")
fi
status=0
"${run[@]}" >"$work/out" 2>"$work/err" || status=$?
[ $status -eq 2 ] || fail "exit status $status, expected 2; stderr: $(cat "$work/err")"
[ "$(wc -l < "$work/err")" -eq 1 ] || fail "expected one line on stderr, got: $(cat "$work/err")"
grep -q "needs root" "$work/err" || fail "unexpected message: $(cat "$work/err")"
[ ! -s "$work/out" ] || fail "unexpected stdout: $(cat "$work/out")"
echo "ok: $(cat "$work/err")"

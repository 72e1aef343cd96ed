#!/usr/bin/env bash
# CTest emu_usage: usage errors of `nicsim emulate` exit 2 with one line on stderr, before any
# privilege check (so this runs as any user) and before anything is created:
#   a [vary] scenario without --run lists its runs; a --run that matches nothing says so;
#   bad --nic / --pcap values are named (option errors: the error line, then the usage text).
# Usage: usage_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

expect_usage_error() {  # one-line|with-usage, expected-substring, nicsim args...
  local form=$1 want=$2
  shift 2
  local status=0
  "$nicsim" emulate "$@" >"$work/out" 2>"$work/err" || status=$?
  [ $status -eq 2 ] || fail "nicsim emulate $*: exit $status, expected 2: $(cat "$work/err")"
  if [ "$form" = one-line ]; then
    [ "$(wc -l < "$work/err")" -eq 1 ] || fail "nicsim emulate $*: expected one line: $(cat "$work/err")"
  else
    sed -n 2p "$work/err" | grep -q "^usage: nicsim emulate" || fail "no usage text: $(cat "$work/err")"
  fi
  head -1 "$work/err" | grep -qF -- "$want" || fail "nicsim emulate $*: no '$want' in: $(cat "$work/err")"
  [ ! -s "$work/out" ] || fail "unexpected stdout: $(cat "$work/out")"
  echo "ok: $(head -1 "$work/err")"
}

s3="$src/scenarios/seeds/stmmac-bql.toml"
expect_usage_error one-line "bql=false rate=100Mbit; bql=false rate=1Gbit; bql=true rate=100Mbit; bql=true rate=1Gbit" \
  "$s3" -- true
expect_usage_error one-line "has 2 runs ([vary]) that match" "$s3" --run bql=true -- true
expect_usage_error one-line "--run bql=maybe matches none" "$s3" --run bql=maybe -- true
expect_usage_error with-usage "--nic: expected 'model' or 'fifo', got 'x'" "$s3" --nic x -- true
expect_usage_error with-usage "--pcap: empty file name" "$s3" --pcap "" -- true

#!/usr/bin/env bash
# `nicsim topology` (CTest: cli_topology):
#  1. the dumbbell (nicsim/config/testdata/dumbbell.toml): nodes with CPU, interfaces with NIC
#     and qdisc, the asymmetric bottleneck per direction, the computed routes;
#  2. a two-host file (scenarios/examples/100mbit-5ms.toml) shows its [wire] as the one link;
#  3. --dot output renders with Graphviz (`dot -Tsvg`, Debian graphviz from scripts/setup.sh;
#     the check is skipped, exit 77, only when dot is missing);
#  4. a bad file exits 2 with one line naming file:line:col and the key.
# Usage: topology_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
has() { grep -qF -- "$2" <<<"$1" || fail "$3: no line '$2' in:"$'\n'"$1"; }

# 1. the dumbbell
t=$("$nicsim" topology "$src/nicsim/config/testdata/dumbbell.toml")
has "$t" "network dumbbell: 4 hosts, 2 routers, 5 links" dumbbell
has "$t" "  router r1  cpu arm-cortex-a5" dumbbell
has "$t" "    r1.wan  nic generic-1g  qdisc pfifo limit = 100" dumbbell
has "$t" "    s1  nic generic-1g  qdisc pfifo_fast" dumbbell
has "$t" "  2: r1.wan <-> r2.wan" dumbbell
has "$t" "    r1.wan -> r2.wan  rate 100Mbit, delay 5ms, loss 0%, jitter 0s" dumbbell
has "$t" "    r2.wan -> r1.wan  rate 10Mbit, delay 5ms, loss 0%, jitter 0s" dumbbell
has "$t" "  r1: s1 via s1, s2 via s2, d1 via wan, d2 via wan" dumbbell
has "$t" "  s1: s2 via s1, d1 via s1, d2 via s1" dumbbell

# 2. two hosts
t=$("$nicsim" topology "$src/scenarios/examples/100mbit-5ms.toml")
has "$t" ": 2 hosts, 0 routers, 1 links" two-host
has "$t" "  0: a <-> b" two-host
has "$t" "  a: b via a" two-host

# 4. a bad file
printf '[scenario]\nname = "x"\nduration = "1s"\n[hosts.a]\ncpu = "x86-desktop"\nnic = "nope"\n' \
  >"$work/bad.toml"
set +e
err=$("$nicsim" topology "$work/bad.toml" 2>&1 >/dev/null)
rc=$?
set -e
[ "$rc" = 2 ] || fail "bad file: exit $rc"
[[ "$err" == "nicsim: $work/bad.toml:6:1: hosts.a.nic: unknown nic preset 'nope'"* ]] \
  || fail "bad file: '$err'"

# 3. --dot renders
"$nicsim" topology --dot "$src/nicsim/config/testdata/dumbbell.toml" >"$work/d.dot"
grep -q '^graph "dumbbell" {$' "$work/d.dot" || fail "--dot: no graph header"
grep -qF '"r1" -- "r2" [label="r1 > r2: 100Mbit 5ms\nr2 > r1: 10Mbit 5ms"' "$work/d.dot" \
  || fail "--dot: no bottleneck edge: $(cat "$work/d.dot")"
"$nicsim" topology --dot "$src/scenarios/examples/100mbit-5ms.toml" >"$work/t.dot"
if ! command -v dot >/dev/null; then
  echo "SKIP: dot (graphviz) is not installed; run scripts/setup.sh" >&2
  exit 77
fi
for g in d t; do
  dot -Tsvg "$work/$g.dot" >"$work/$g.svg" 2>"$work/$g.err" || fail "dot -Tsvg $g: $(cat "$work/$g.err")"
  [ ! -s "$work/$g.err" ] || fail "dot -Tsvg $g warned: $(cat "$work/$g.err")"
  grep -q "<svg" "$work/$g.svg" || fail "dot -Tsvg $g: no svg"
done
grep -qF ">r1.wan" "$work/d.svg" 2>/dev/null || grep -qF ">wan<" "$work/d.svg" \
  || fail "svg lacks the interface labels"
echo "topology ok"

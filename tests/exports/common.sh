# Shared by the export/plot/compare CLI tests: a small two-run scenario (3 s, b->a TCP, ping and
# a UDP probe), simulated once into $work/r.json (+ --csv/--flent from `nicsim run`).
# Usage: source common.sh NICSIM_BINARY SOURCE_DIR
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# flent and numpy are Debian packages: use Debian's interpreter, not a pyenv/venv python3.
py=/usr/bin/python3
export NICSIM_PRESETS="$src/presets"

cat > "$work/s.toml" <<TOML
[scenario]
name = "export test"
duration = "3s"
seed = 5
[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"
[hosts.b]
cpu = "arm-cortex-a5"
nic = "stmmac"
[wire]
rate = "100Mbit"
delay = "200us"
[[traffic.tcp]]
from = "b"
to = "a"
streams = 2
[[traffic.tcp]]
from = "a"
to = "b"
streams = 1
[[traffic.ping]]
from = "a"
to = "b"
interval = "20ms"
[[traffic.udp_probe]]
from = "a"
to = "b"
interval = "5ms"
[vary]
"hosts.b.nic.bql" = [false, true]
TOML

# Runs CMD (exit status must be WANT), stderr must be exactly one line containing TEXT.
expect_error() {
  local want=$1 text=$2
  shift 2
  set +e
  msg=$("$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq "$want" ] || fail "$*: exit $rc, want $want ($msg)"
  # bash string tests, no pipes: with pipefail, `printf | grep -q` can fail on SIGPIPE
  [[ "$msg" != *$'\n'* ]] || fail "$*: not one line: $msg"
  [[ "$msg" == *"$text"* ]] || fail "$*: '$msg' lacks '$text'"
}
# Same for usage errors, which print the usage after the one-line message.
expect_usage_error() {
  local text=$1
  shift
  set +e
  msg=$("$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$*: exit $rc, want 2"
  local first=${msg%%$'\n'*}
  [[ "$first" == *"$text"* ]] || fail "$*: first line '$first' lacks '$text'"
}

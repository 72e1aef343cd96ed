# Shared by the emulator CLI tests (sourced). Usage in a test:
#   source "$(dirname "$0")/common.sh"; emu_require_root; emu_require_tools ping
# A test that cannot run here exits 77 (CTest SKIP_RETURN_CODE) with the reason on stderr —
# unless NICSIM_REQUIRE_EMU=1 (CI), where it fails instead.
set -euo pipefail

emu_skip() {
  if [ "${NICSIM_REQUIRE_EMU:-0}" = 1 ]; then
    echo "FAIL: NICSIM_REQUIRE_EMU=1 but: $*" >&2
    exit 1
  fi
  echo "SKIP: $*" >&2
  exit 77
}

# Every failure names the machine's load: the timed tests measure real traffic on a shared
# machine, and a miss at load 14 on 2 CPUs reads differently from one on an idle machine.
emu_load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"; }
fail() { echo "FAIL: $* [$(emu_load)]" >&2; exit 1; }

# The timed tests (docs/emu.md "Timed tests") retry once, and only on an outlier signature:
# the measurement missed its band, yet its best sample (fastest RTT, highest rate) is inside
# it — the emulated path is right and some samples were delayed by a descheduled process.
# A path that is wrong shifts every sample, the best one too, and fails at once.
# emu_in_band VALUE LO HI: true when LO <= VALUE <= HI.
emu_in_band() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }
# emu_retry_once NAME FUNCTION [ARGS]: runs FUNCTION; its status 2 (outlier signature) gets
# one more attempt; any other non-zero status, or a second miss, fails the test.
emu_retry_once() {
  local name=$1 rc=0
  shift
  "$@" || rc=$?
  if [ "$rc" = 2 ]; then
    echo "$name: outlier signature ($(emu_load)); second attempt"
    rc=0
    "$@" || rc=$?
  fi
  [ "$rc" = 0 ] || fail "$name (see above)"
}

emu_require_root() {
  [ "$(id -u)" = 0 ] || emu_skip "emulator tests need root (network namespaces)"
  unshare -n true 2>/dev/null || emu_skip "network namespaces are not available here"
}

emu_require_tools() {
  for t in "$@"; do
    command -v "$t" >/dev/null || emu_skip "$t is not installed (run scripts/setup.sh)"
  done
}

# Namespaces under /run/netns that belong to emulator process $1.
emu_namespaces_of() {
  ls /run/netns 2>/dev/null | grep -E "^nicsim-$1-" || true
}

# Waits (up to 10 s) until emulator $1 has created its namespaces.
emu_wait_for_namespaces() {
  for _ in $(seq 1 100); do
    [ "$(emu_namespaces_of "$1" | wc -l)" -ge 2 ] && return 0
    sleep 0.1
  done
  fail "emulator $1 did not create its namespaces within 10 s"
}

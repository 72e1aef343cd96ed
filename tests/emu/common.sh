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

fail() { echo "FAIL: $*" >&2; exit 1; }

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

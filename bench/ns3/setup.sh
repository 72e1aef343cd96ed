#!/usr/bin/env bash
# Installs what bench/ns3 needs from Debian 12 packages: ns-3 3.37 (libns3-dev) and the build
# tools. Kept apart from scripts/setup.sh on purpose: nicsim's build and tests do not need ns-3.
# libgsl-dev and libsqlite3-dev are listed because the ns3-core / ns3-stats pkg-config files of
# libns3-dev link /usr/lib/x86_64-linux-gnu/libgsl.so, libgslcblas.so and libsqlite3.so, which
# libns3-dev does not pull in; time and valgrind are side_by_side.sh's /usr/bin/time -v and
# --callgrind. Idempotent: does nothing when everything is installed.
# Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libns3-dev libgsl-dev libsqlite3-dev
  time valgrind
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bench/ns3/setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "bench/ns3/setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Wait for another apt/dpkg run instead of failing on its lock.
apt=("${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600)
"${apt[@]}" update -qq
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

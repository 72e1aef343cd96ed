#!/usr/bin/env bash
# The Debian packages on a brand-new Debian 12 (issue 15's "done when"). Run it as root from
# the project root inside a fresh Debian 12 system (a debootstrap minbase chroot, a new VM or
# container). Not part of CTest (slow); the fast version is tests/install/install_test.sh.
# Usage: scripts/package_test.sh [DEB_DIR]
#   DEB_DIR  the .deb files of scripts/package.sh, built elsewhere: the new system gets only
#            them and what they declare (the packager's build machine is not the user's);
#            without it the script installs the build dependencies and builds them here.
# Then, from outside the source tree: nicsim --version, man nicsim, nicsim run on an installed
# example scenario, examples/consumer built with find_package(nicsim) against /usr, pkg-config,
# and the S3 seed run through the installed Python module.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
apt-get update -qq
if [ $# -ge 1 ]; then
  debs=$(cd "$1" && pwd)
else
  ./scripts/setup.sh
  ./scripts/package.sh build-package
  debs=$src/build-package
fi
# apt resolves the packages' Depends and Recommends (man-db, cmake, g++, pkg-config, ...).
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$debs"/*.deb >/dev/null
work=$(mktemp -d)
cd "$work"
step() { echo "== $*"; }
step "nicsim --version"
nicsim --version
step "man nicsim"
MANWIDTH=80 man nicsim | head -12
step "nicsim run /usr/share/nicsim/scenarios/examples/100mbit-5ms.toml --quiet"
nicsim run /usr/share/nicsim/scenarios/examples/100mbit-5ms.toml --quiet
step "bash completion"
grep '^complete -F _nicsim nicsim' /usr/share/bash-completion/completions/nicsim
step "examples/consumer with find_package(nicsim)"
cmake -S "$src/examples/consumer" -B consumer >/dev/null
cmake --build consumer >/dev/null
./consumer/consumer /usr/share/nicsim/scenarios/examples/100mbit-5ms.toml
step "pkg-config --modversion nicsim"
pkg-config --modversion nicsim
step "python3 -c \"import nicsim; print(nicsim.run('scenarios/seeds/stmmac-bql.toml'))\""
(cd "$src" && python3 -c "import nicsim; print(nicsim.__file__); print(nicsim.run('scenarios/seeds/stmmac-bql.toml'))")
echo "package_test: ok"

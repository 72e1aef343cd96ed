#!/usr/bin/env bash
# Builds the Debian packages from the tree (CPack, cmake/NicsimInstall.cmake):
#   nicsim_<version>_<arch>.deb         the nicsim binary, presets, scenarios, nicsim(1), completion
#   nicsim-dev_<version>_<arch>.deb     headers, libraries, find_package(nicsim), nicsim.pc
#   python3-nicsim_<version>_<arch>.deb the Python module (when pybind11-dev is installed)
# Usage: scripts/package.sh [BUILD_DIR [extra cmake args...]]  (default build-package; the .deb
# files land there). A build with prefix /usr, no tests, benchmarks or examples;
# NICSIM_BUILD_TYPE chooses the build type (default Release). docs/install.md.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-package}
shift || true
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${NICSIM_BUILD_TYPE:-Release}" \
  -DCMAKE_INSTALL_PREFIX=/usr -DNICSIM_TESTS=OFF -DNICSIM_BENCH=OFF -DNICSIM_EXAMPLES=OFF \
  "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir"
(cd "$dir" && cpack -G DEB >/dev/null)
ls "$dir"/*.deb

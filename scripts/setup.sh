#!/usr/bin/env bash
# Installs every build and test dependency of nicsim from Debian 12 packages.
# Idempotent: does nothing when everything is already installed. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev   # unit tests, benchmarks
  clang libclang-rt-14-dev                     # libFuzzer targets, sanitizer runtimes
  nlohmann-json3-dev python3-jsonschema       # results JSON + its schema test (nicsim/report)
  libtomlplusplus-dev                          # TOML scenario and preset files (nicsim/config)
  libcli11-dev                                 # command-line parsing, help, completion (tools/)
  libssl-dev                                   # HMAC-SHA256 of nicsim server's shared secret (nicsim/live/auth.h)
  iproute2 iputils-ping iperf3                 # emulator tests: ip netns, ping/iperf3 oracles
  tshark                                       # emulator pcap export test (tests/emu/pcap_test.sh)
  ethtool                                      # bench/emu/forwarding.sh: the bare-veth baseline
  netsniff-ng                                  # bench/emu/pps.sh: trafgen, the 64-byte frame generator
  zlib1g-dev gnuplot-nox                       # flent .flent.gz export (gzip), nicsim plot
  flent python3-numpy python3-matplotlib       # flent reads our files (stats need numpy) and draws the tests' plots (cli_flent_test)
  graphviz                                     # nicsim topology --dot checked with dot -Tsvg
  pybind11-dev python3-dev python3-pytest python3-pandas  # the Python module (python/), its tests
  man-db                                       # tests/install: the installed man page renders
  file                                         # scripts/package.sh: CPack DEB's shared-library dependency scan
  libjs-dygraphs                               # nicsim report: the chart library, embedded at build time
  chromium chromium-driver python3-selenium fonts-dejavu-core  # nicsim report's browser test (headless)
  libopenmpi-dev openmpi-bin                   # campaigns over MPI ranks (docs/campaigns.md)
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
  command -v sudo >/dev/null || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
# env: sudo drops DEBIAN_FRONTEND (tshark's wireshark-common asks a debconf question).
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Sets up, builds and runs the main job: the seed scenarios (S1-S3 in scenarios/seeds, S4's cable
# modem alone and behind the home router in scenarios/networks; docs/seeds.md) through the
# simulator, printing simulated vs published numbers with the relative error.
# (`./build/tools/nicsim demo` still tours the algorithm library.)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if ! log=$(cmake --build build --target nicsim 2>&1); then
  echo "$log" >&2
  exit 1
fi
for s in seeds/smsc95xx-turbo seeds/ax88178-burst seeds/stmmac-bql networks/cable-modem \
         networks/cable-modem-sqm; do
  echo "=== scenarios/$s.toml"
  ./build/tools/nicsim run "scenarios/$s.toml" --quiet
  echo
done
echo "Why the numbers agree or differ, seed by seed: docs/seeds.md"

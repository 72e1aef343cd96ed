#!/usr/bin/env bash
# Scenario test (CTest: seeds): runs the seed scenarios expected.toml names (S1-S3 in
# scenarios/seeds, S4 and its sweep in scenarios/networks) with `nicsim run --json` and
# `--quiet` (the printed published comparison), then tests/seeds/check_seeds.py checks
# (docs/seeds.md, "The seeds, simulated"): every number of docs/seeds.md's result tables
# exactly as tests/seeds/expected.toml pins it (the simulator is deterministic for a seed), the
# published directions and bands beside them, the JSON and printed comparison rows against the
# runs' own metrics, and that docs/seeds.md's tables are rendered from expected.toml.
# Usage: seeds_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export NICSIM_PRESETS="$src/presets"
# Debian's interpreter (tomllib, Python 3.11), not a pyenv/venv python3.
check="/usr/bin/python3 $src/tests/seeds/check_seeds.py"
# The scenarios expected.toml names: seeds/<name> (S1-S3), networks/<name> (S4).
for path in $($check --scenarios "$src"); do
  s=$(basename "$path")
  "$nicsim" run "$src/scenarios/$path.toml" --quiet --json "$work/$s.json" > "$work/$s.txt"
done
$check "$work" "$src"

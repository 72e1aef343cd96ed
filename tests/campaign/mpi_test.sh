#!/usr/bin/env bash
# A campaign over 4 MPI ranks on this machine (CTest: campaign_mpi; docs/campaigns.md): rank 0
# writes one results file, byte-identical outside meta to the serial run, and prints the same
# text. Usage: mpi_test.sh NICSIM_BINARY SOURCE_DIR MPIEXEC
set -euo pipefail
nicsim=$1
src=$2
mpiexec=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NICSIM_PRESETS="$src/presets"
scenario="$src/tests/campaign/small.toml"

"$nicsim" run "$scenario" --jobs 1 --json "$work/serial.json" > "$work/serial.txt"
"$mpiexec" --allow-run-as-root --oversubscribe -np 4 \
  "$nicsim" run "$scenario" --json "$work/mpi.json" > "$work/mpi.txt"
python3 "$src/tests/campaign/same_outside_meta.py" "$work/serial.json" "$work/mpi.json" \
  || fail "4 ranks differ from the serial run"
cmp -s "$work/serial.txt" "$work/mpi.txt" || fail "4 ranks printed something else"
echo "campaign_mpi: ok"

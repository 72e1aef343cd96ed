#!/usr/bin/env bash
# CTest emu_gso: `--io tap-gso` carries the hosts' TCP super-frames (issue 13 item 3): one
# iperf3 TCP flow for 5 s through the 100 Mbit/s, 5 ms example delivers data, host a's kernel
# handed the emulator super-frames (TSO through the TAP's virtio-net header), host b was given
# super-frames back (GRO), and the kernel refused none of the writes. Asserts what was carried,
# not how fast (docs/emu.md "GSO/GRO through the emulator"; speed: bench/emu/offload.sh).
# And where the segmentation happens: a TSO NIC (generic-1g) completes one descriptor per
# super-frame (a->b TX completions <= frames in); a NIC without TSO (stmmac) is handed the
# segments by its driver model, so it completes more frames than the host handed over.
# Usage: gso_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools iperf3 python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

"$nicsim" emulate "$src/scenarios/examples/100mbit-5ms.toml" --io tap-gso \
  --server 'iperf3 -s -1' \
  -- sh -c "iperf3 -c \"\$NICSIM_PEER\" -t 5 -J > $work/iperf3.json" 2>"$work/summary" \
  || fail "nicsim emulate --io tap-gso exited $?: $(cat "$work/summary")"
bytes=$(python3 -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["end"]["sum_received"]["bytes"]))' \
  "$work/iperf3.json") || fail "no iperf3 result: $(head -c 2000 "$work/iperf3.json")"
echo "iperf3 receiver: $bytes bytes"
grep -E "frame I/O|super-frames|^port " "$work/summary"
[ "$bytes" -gt 1000000 ] || fail "only $bytes bytes reached the receiver"
read_a=$(sed -n 's/^port a super-frames: read \([0-9]*\) .*/\1/p' "$work/summary")
wrote_b=$(sed -n 's/^port b super-frames: .*, wrote \([0-9]*\),.*/\1/p' "$work/summary")
[ "${read_a:-0}" -gt 0 ] || fail "host a handed over no super-frames: $(cat "$work/summary")"
[ "${wrote_b:-0}" -gt 0 ] || fail "host b was given no super-frames: $(cat "$work/summary")"
if grep -E "^port .*[1-9][0-9]* write errors" "$work/summary"; then
  fail "the kernel refused frames written with a virtio-net header"
fi
# a->b: "N frames in, ... C TX completions" from the summary in $1.
completions_vs_in() {
  sed -n 's/^a->b: \([0-9]*\) frames in, .*, \([0-9]*\) TX completions.*/\1 \2/p' "$1"
}
read -r in_tso done_tso < <(completions_vs_in "$work/summary")
echo "TSO NIC: a->b $in_tso frames in, $done_tso TX completions"
[ "${done_tso:-1}" -le "${in_tso:-0}" ] || fail "a TSO NIC completed more frames than it was given"

"$nicsim" emulate "$src/tests/emu/stmmac_100mbit_short.toml" --io tap-gso \
  --server 'iperf3 -s -1' -- sh -c 'iperf3 -c "$NICSIM_PEER" -t 3 > /dev/null' 2>"$work/summary2" \
  || fail "nicsim emulate --io tap-gso (stmmac) exited $?: $(cat "$work/summary2")"
read -r in_seg done_seg < <(completions_vs_in "$work/summary2")
super=$(sed -n 's/^port a super-frames: read \([0-9]*\) .*/\1/p' "$work/summary2")
echo "NIC without TSO: a->b $in_seg frames in ($super super-frames), $done_seg TX completions"
[ "${super:-0}" -gt 0 ] || fail "host a handed over no super-frames (stmmac): $(cat "$work/summary2")"
[ "${done_seg:-0}" -gt "${in_seg:-0}" ] \
  || fail "the NIC without TSO was not handed segments: $(cat "$work/summary2")"
echo "ok"

#!/usr/bin/env bash
# CTest emu_pcap: `nicsim emulate --pcap FILE` writes the frames crossing the emulated wire in
# both directions; tshark (the oracle) reads the file: it holds exactly the frames the
# emulator reports, the 5 ICMP echo requests (a -> b) and their 5 replies (b -> a), and each
# reply enters the wire at least the one-way delay (5 ms) after its request (timestamps are
# taken at wire entry). An unwritable path is a usage error (exit 2) before anything starts.
# Usage: pcap_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools ping tshark
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

set +e
"$nicsim" emulate "$src/scenarios/examples/100mbit-5ms.toml" --pcap /nonexistent-dir/x.pcap \
  -- true 2> "$work/err"
st=$?
set -e
[ "$st" = 2 ] || fail "unwritable --pcap: exit $st, expected 2: $(cat "$work/err")"
grep -q "nonexistent-dir/x.pcap" "$work/err" || fail "the error does not name the file: $(cat "$work/err")"

"$nicsim" emulate "$src/scenarios/examples/100mbit-5ms.toml" --pcap "$work/out.pcap" \
  -- sh -c 'ping -q -n -c 5 -i 0.2 -W 2 "$NICSIM_PEER"' > "$work/ping" 2> "$work/summary" \
  || fail "nicsim emulate exited $?: $(cat "$work/ping" "$work/summary")"
written=$(sed -n 's/^pcap: \([0-9]*\) frames written$/\1/p' "$work/summary")
[ -n "$written" ] || fail "no pcap line in the summary: $(cat "$work/summary")"
# Frames that entered the wires = frames the NICs put on them (summary "NIC x:  tx N frames").
on_wires=$(sed -n 's/^  tx \([0-9]*\) frames.*/\1/p' "$work/summary" | awk "{ s += \$1 } END { print s }")

tshark -r "$work/out.pcap" -T fields -e frame.number -e icmp.type -e icmp.resptime \
  > "$work/fields" 2> "$work/tshark.err" || fail "tshark cannot read the file: $(cat "$work/tshark.err")"
frames=$(wc -l < "$work/fields")
requests=$(awk -F'\t' '$2 == "8"' "$work/fields" | wc -l)
replies=$(awk -F'\t' '$2 == "0"' "$work/fields" | wc -l)
echo "pcap: $frames frames (emulator: $written written, $on_wires put on the wires), $requests echo requests, $replies replies"
[ "$frames" = "$written" ] || fail "tshark read $frames frames, the emulator wrote $written"
[ "$frames" = "$on_wires" ] || fail "$frames frames in the file, $on_wires entered the wires"
[ "$requests" = 5 ] || fail "expected 5 echo requests, tshark saw $requests"
[ "$replies" = 5 ] || fail "expected 5 echo replies, tshark saw $replies"
# icmp.resptime is in milliseconds.
awk -F'\t' '$2 == "0" { n++; if ($3 < 5.0) bad = bad " " $3 } END { if (bad != "" || n != 5) { print "replies earlier than 5 ms after their requests:" bad; exit 1 } }' \
  "$work/fields" || fail "timestamps: $(cat "$work/fields")"
echo "ok: reply - request at wire entry (ms): $(awk -F'\t' '$2 == "0" { printf "%s ", $3 }' "$work/fields")"

#!/usr/bin/env bash
# CTest emu_replay: `nicsim emulate --record FILE` and `[[traffic.replay]]` (docs/emu.md
# "Replay"). tests/emu/replay_stmmac.toml (stmmac board -> PC, 100 Mbit/s, 2 TCP flows + ping,
# 3 s of its own traffic) is emulated with --record and --json; tshark (the oracle for the
# format) reads the recording: one interface per host, named after it, every frame the summary
# counted, each with its nicsim comment. The recording is then replayed by `nicsim run` twice:
#  * the two replays give identical queue series (deterministic);
#  * the replay's queue series of both NICs (qdisc and ring, packets and bytes) equal the
#    emulation's, sample by sample (every 10 ms of model time), within a tolerance derived from
#    the emulation's measured timer error (p99: the bytes the wire carries in that time, plus
#    one frame), and at least 95 % of the samples exactly;
#  * a control: the same recording with every timestamp moved 2 ms later must NOT match (the
#    comparison can fail).
# The comparison is on recorded data only; nothing is timed against the wall clock.
# An unwritable --record path is a usage error (exit 2). Usage: replay_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools tshark
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
export NICSIM_PRESETS="$src/presets"
scenario=$src/tests/emu/replay_stmmac.toml

set +e
"$nicsim" emulate "$scenario" --record /nonexistent-dir/x.pcapng --json "$work/x.json" \
  2> "$work/err" > /dev/null
st=$?
set -e
[ "$st" = 2 ] || fail "unwritable --record: exit $st, expected 2: $(cat "$work/err")"
grep -q "nonexistent-dir/x.pcapng" "$work/err" || fail "the error does not name the file: $(cat "$work/err")"

"$nicsim" emulate "$scenario" --record "$work/rec.pcapng" --json "$work/emu.json" \
  > /dev/null 2> "$work/summary" || fail "nicsim emulate exited $?: $(cat "$work/summary")"
written=$(sed -n 's/^record: \([0-9]*\) frames written$/\1/p' "$work/summary")
[ -n "$written" ] || fail "no record line in the summary: $(cat "$work/summary")"
timer=$(grep '^timer error' "$work/summary")
echo "$timer"

# tshark reads the file: frames, interface names, comments.
tshark -r "$work/rec.pcapng" -T fields -e frame.interface_name -e frame.comment \
  > "$work/fields" 2> "$work/tshark_err" || fail "tshark cannot read the recording: $(cat "$work/tshark_err")"
frames=$(wc -l < "$work/fields")
[ "$frames" = "$written" ] || fail "tshark reads $frames frames, the summary says $written"
board=$(awk -F'\t' '$1 == "board"' "$work/fields" | wc -l)
pc=$(awk -F'\t' '$1 == "pc"' "$work/fields" | wc -l)
[ "$board" -gt 1000 ] && [ "$pc" -gt 100 ] && [ $((board + pc)) = "$frames" ] \
  || fail "frames by interface: board $board, pc $pc of $frames"
[ "$(grep -c $'\tnicsim to=' "$work/fields")" = "$frames" ] || fail "frames without the nicsim comment"

# The replay scenario: the emulated scenario's hosts and wire, the recording as its traffic.
sed '/^\[\[traffic\./,$d' "$scenario" > "$work/replay.toml"
printf '[[traffic.replay]]\nfile = "rec.pcapng"\n' >> "$work/replay.toml"
# The control: every frame 2 ms later.
/usr/bin/python3 - "$work/rec.pcapng" "$work/shifted.pcapng" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
at = 0
while at < len(b):
    kind, n = struct.unpack_from("<II", b, at)
    if kind == 6:  # enhanced packet block: timestamp (high, low) after the interface id
        hi, lo = struct.unpack_from("<II", b, at + 12)
        t = ((hi << 32) | lo) + 2_000_000
        struct.pack_into("<II", b, at + 12, t >> 32, t & 0xffffffff)
    at += n
open(sys.argv[2], "wb").write(b)
PY
sed 's/rec\.pcapng/shifted.pcapng/' "$work/replay.toml" > "$work/shifted.toml"
for r in sim1 sim2; do
  "$nicsim" run "$work/replay.toml" --quiet --json "$work/$r.json" > /dev/null 2> "$work/run_err" \
    || fail "nicsim run of the replay exited $?: $(cat "$work/run_err")"
done
"$nicsim" run "$work/shifted.toml" --quiet --json "$work/shifted.json" > /dev/null \
  || fail "nicsim run of the shifted replay exited $?"

/usr/bin/python3 - "$work" "$timer" <<'PY'
import json, math, re, sys
work, timer = sys.argv[1], sys.argv[2]
p99_us = float(re.search(r"p99 ([0-9.]+) us", timer).group(1))
rate_bps = 100e6
tol_bytes = math.ceil(rate_bps * p99_us * 1e-6 / 8) + 1538  # the wire in p99 timer error + a frame
tol_packets = math.ceil(tol_bytes / 84)                      # ... counted in minimum frames
load = lambda n: json.load(open(f"{work}/{n}.json"))["runs"][0]["queues"]
emu, sim1, sim2, shifted = load("emu"), load("sim1"), load("sim2"), load("shifted")
if sim1 != sim2:
    sys.exit("FAIL: two replays of one recording gave different queue series")
cols = ["qdisc_packets", "qdisc_bytes", "ring_packets", "ring_bytes"]
extra = ["bql_limit_bytes", "device_fifo_bytes"]  # where the NIC has them

def compare(sim):
    samples = exact = 0
    worst = {c: 0 for c in cols + extra}
    for host in ("a", "b"):
        e, s = emu[host], sim[host]
        present = cols + [c for c in extra if c in e and c in s]
        n = min(len(e["time_s"]), len(s["time_s"]))
        for i in range(n):
            if abs(e["time_s"][i] - s["time_s"][i]) > 1e-9:
                sys.exit(f"FAIL: {host} sample {i}: times {e['time_s'][i]} vs {s['time_s'][i]}")
            samples += 1
            d = {c: abs(e[c][i] - s[c][i]) for c in present}
            exact += all(v == 0 for v in d.values())
            for c in present:
                worst[c] = max(worst[c], d[c])
    return samples, exact, worst

def within(worst):
    return all(v <= (tol_packets if c.endswith("packets") else tol_bytes) for c, v in worst.items())

if max(emu["a"]["qdisc_packets"]) < 100:
    sys.exit(f"FAIL: the emulated board's qdisc never held 100 frames (max {max(emu['a']['qdisc_packets'])}): no queue to compare")
samples, exact, worst = compare(sim1)
print(f"replay vs emulation: {exact}/{samples} samples identical, largest differences {worst}; "
      f"tolerance {tol_packets} packets / {tol_bytes} bytes (timer error p99 {p99_us} us)")
if samples < 500 or exact < 0.95 * samples or not within(worst):
    sys.exit("FAIL: the replay's queue series differ from the emulation's")
s2, e2, w2 = compare(shifted)
print(f"control (every frame 2 ms later): {e2}/{s2} samples identical, largest differences {w2}")
if e2 >= 0.95 * s2 and within(w2):
    sys.exit("FAIL: the comparison cannot tell a shifted recording from the real one")
print("ok: the replay reproduces the emulated queue series")
PY

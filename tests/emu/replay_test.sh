#!/usr/bin/env bash
# CTest emu_replay: `nicsim emulate --record FILE` and `[[traffic.replay]]` (docs/emu.md
# "Replay"). Three emulations, 3 s of their own traffic each, are recorded (--record) with their
# results (--json): tests/emu/replay_stmmac.toml (stmmac board -> PC, 100 Mbit/s, 2 TCP flows
# + ping), tests/emu/replay_smsc95xx.toml (PC -> SMSC LAN95xx USB adapter, TCP + ping) and
# tests/emu/network_a_r_b.toml (a - router - b, TCP + ping). tshark (the oracle for
# the format) reads each recording: one interface per host, named after it, every frame the
# summary counted, each with its nicsim comment. Each recording is replayed by `nicsim run`:
#  * the two replays give identical queue series (deterministic);
#  * the replay's queue series of every NIC (qdisc and ring, packets and bytes) equal the
#    emulation's, sample by sample (every 10 ms of model time), at least 95 % of the samples
#    exactly and every sample within a tolerance derived from the emulation's measured timer
#    error (its maximum: the bytes the wire carries in that time, plus one frame). The maximum,
#    not the p99: with two plain NICs the emulator runs overdue events in one pass (docs/emu.md
#    "Replay"), so one late wake-up can let the frames of that lateness in before a sample (seen
#    once: 2 frames at one sample of 602 with p99 10.3 us, max 1644 us);
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

set +e
"$nicsim" emulate "$src/tests/emu/replay_stmmac.toml" --record /nonexistent-dir/x.pcapng \
  --json "$work/x.json" \
  2> "$work/err" > /dev/null
st=$?
set -e
[ "$st" = 2 ] || fail "unwritable --record: exit $st, expected 2: $(cat "$work/err")"
grep -q "nonexistent-dir/x.pcapng" "$work/err" || fail "the error does not name the file: $(cat "$work/err")"

# check NAME SCENARIO RATE_BPS QUEUE [EMULATE ARGS...]: record, replay, compare. QUEUE is the
# interface whose qdisc must have held >= 50 frames (there is a queue to compare).
check() {
  local name=$1 scenario=$2 rate=$3 queue=$4
  shift 4
  local w=$work/$name
  mkdir -p "$w"
  chmod 755 "$w"
  "$nicsim" emulate "$scenario" --record "$w/rec.pcapng" --json "$w/emu.json" "$@" \
    > /dev/null 2> "$w/summary" || fail "$name: nicsim emulate exited $?: $(cat "$w/summary")"
  local written timer frames
  written=$(sed -n 's/^record: \([0-9]*\) frames written$/\1/p' "$w/summary")
  [ -n "$written" ] || fail "$name: no record line in the summary: $(cat "$w/summary")"
  timer=$(grep '^timer error' "$w/summary")
  echo "$name: $timer"
  # tshark reads the file: frames, interface names, comments.
  tshark -r "$w/rec.pcapng" -T fields -e frame.interface_name -e frame.comment \
    > "$w/fields" 2> "$w/tshark_err" || fail "$name: tshark cannot read the recording: $(cat "$w/tshark_err")"
  frames=$(wc -l < "$w/fields")
  [ "$frames" = "$written" ] || fail "$name: tshark reads $frames frames, the summary says $written"
  /usr/bin/python3 - "$w/fields" "$scenario" <<'PY' || fail "$name: interfaces or comments"
import re, sys
hosts = re.findall(r"^\[hosts\.([A-Za-z0-9_-]+)\]", open(sys.argv[2]).read(), re.M)
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
seen = {r[0] for r in rows}
if seen != set(hosts) or not all(len(r) == 2 and r[1].startswith("nicsim to=") for r in rows):
    sys.exit(f"interfaces {sorted(seen)} (hosts {hosts}) or a frame without its nicsim comment")
PY
  # The replay scenario: the emulated scenario's nodes and links, the recording as traffic.
  sed '/^\[\[traffic\./,$d' "$scenario" > "$w/replay.toml"
  printf '[[traffic.replay]]\nfile = "rec.pcapng"\n' >> "$w/replay.toml"
  # The control: every frame 2 ms later.
  /usr/bin/python3 - "$w/rec.pcapng" "$w/shifted.pcapng" <<'PY'
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
  sed 's/rec\.pcapng/shifted.pcapng/' "$w/replay.toml" > "$w/shifted.toml"
  local r
  for r in sim1 sim2; do
    "$nicsim" run "$w/replay.toml" --quiet --json "$w/$r.json" > /dev/null 2> "$w/run_err" \
      || fail "$name: nicsim run of the replay exited $?: $(cat "$w/run_err")"
  done
  "$nicsim" run "$w/shifted.toml" --quiet --json "$w/shifted.json" > /dev/null \
    || fail "$name: nicsim run of the shifted replay exited $?"
  /usr/bin/python3 - "$w" "$timer" "$rate" "$queue" <<'PY' || fail "$name: see above"
import json, math, re, sys
work, timer, rate_bps, queue = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
p99_us = float(re.search(r"p99 ([0-9.]+) us", timer).group(1))
max_us = float(re.search(r"max ([0-9.]+) us", timer).group(1))
tol_bytes = math.ceil(rate_bps * max_us * 1e-6 / 8) + 1538  # the wire in the max timer error + a frame
tol_packets = math.ceil(tol_bytes / 84)                      # ... counted in minimum frames
load = lambda n: json.load(open(f"{work}/{n}.json"))["runs"][0]["queues"]
emu, sim1, sim2, shifted = load("emu"), load("sim1"), load("sim2"), load("shifted")
if sim1 != sim2:
    sys.exit("FAIL: two replays of one recording gave different queue series")
if sorted(emu) != sorted(sim1):
    sys.exit(f"FAIL: interfaces {sorted(emu)} emulated, {sorted(sim1)} replayed")
cols = ["qdisc_packets", "qdisc_bytes", "ring_packets", "ring_bytes"]
extra = ["bql_limit_bytes", "device_fifo_bytes"]  # where the NIC has them

def compare(sim):
    samples = exact = 0
    worst = {}
    for iface in emu:
        e, s = emu[iface], sim[iface]
        present = cols + [c for c in extra if c in e and c in s]
        n = min(len(e["time_s"]), len(s["time_s"]))
        for i in range(n):
            if abs(e["time_s"][i] - s["time_s"][i]) > 1e-9:
                sys.exit(f"FAIL: {iface} sample {i}: times {e['time_s'][i]} vs {s['time_s'][i]}")
            samples += 1
            d = {c: abs(e[c][i] - s[c][i]) for c in present}
            exact += all(v == 0 for v in d.values())
            for c in present:
                worst[c] = max(worst.get(c, 0), d[c])
    return samples, exact, worst

def within(worst):
    return all(v <= (tol_packets if c.endswith("packets") else tol_bytes) for c, v in worst.items())

if max(emu[queue]["qdisc_packets"]) < 50:
    sys.exit(f"FAIL: the emulated {queue} qdisc never held 50 frames: no queue to compare")
samples, exact, worst = compare(sim1)
print(f"replay vs emulation: {exact}/{samples} samples identical, largest differences {worst}; "
      f"tolerance {tol_packets} packets / {tol_bytes} bytes (timer error p99 {p99_us} us, max {max_us} us)")
if samples < 500 or exact < 0.95 * samples or not within(worst):
    sys.exit("FAIL: the replay's queue series differ from the emulation's")
s2, e2, w2 = compare(shifted)
print(f"control (every frame 2 ms later): {e2}/{s2} samples identical, largest differences {w2}")
if e2 >= 0.95 * s2 and within(w2):
    sys.exit("FAIL: the comparison cannot tell a shifted recording from the real one")
PY
}

check stmmac "$src/tests/emu/replay_stmmac.toml" 100e6 a
# A USB NIC (SMSC LAN95xx, S1): the PC's qdisc fills.
check usb "$src/tests/emu/replay_smsc95xx.toml" 100e6 b
# A network: the router's interfaces too (a - r.lan 1 Gbit/s, r.wan - b 100 Mbit/s, pfifo 100).
check network "$src/tests/emu/network_a_r_b.toml" 1e9 r.wan --duration 3s
echo "ok: the replays reproduce the emulated queue series"

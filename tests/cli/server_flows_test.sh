#!/usr/bin/env bash
# CTest cli_server_flows: `nicsim server` on 127.0.0.1 answers issue 12's kinds (docs/live.md,
# "The control protocol") to a client written here from the documented byte layout alone — an
# independent implementation of the wire format, not nicsim's codec:
#   - transfer (kind 6) of 100,000 B: Data payload adds up to exactly 100,000 B, then End;
#   - udp source (kind 5), 2 Mbit/s of 500 B for 500 ms: datagrams carry "NSFL", sequence
#     numbers 0..n-1 with none missing (loopback), and End counts the n sent;
#   - udp sink (kind 4): 100 datagrams from the registered port are reported one by one in
#     Arrivals frames (sequence numbers 0..99) and counted by End; 5 from another port and 1
#     without the magic are not;
#   - a udp source of 10-byte datagrams is refused with the reason naming request.size.
# Usage: server_flows_test.sh NICSIM SOURCE_DIR
set -euo pipefail
nicsim=$1
source "$(dirname "$0")/live_server.sh"
start_server

python3 - "$port" <<'PY' || fail "protocol client failed"
import socket, struct, sys, threading, time

port = int(sys.argv[1])

def frame(kind, payload):
    return struct.pack(">IBB", 2 + len(payload), 1, kind) + payload

def request(kind, duration_ms, extra, dscp=0):
    # u8 kind | u8 dscp | u32 duration_ms | u32 stats_interval_ms | u8 n (no cc) | kind's fields
    return frame(1, struct.pack(">BBIIB", kind, dscp, duration_ms, 1000, 0) + extra)

class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
    def frames(self):
        """Yields (type, body) until the server closes; Data payloads are read and counted."""
        while True:
            while len(self.buf) >= 6:
                length, version, kind = struct.unpack(">IBB", self.buf[:6])
                assert version == 1, version
                if len(self.buf) < 4 + length:
                    break
                body, self.buf = self.buf[6:4 + length], self.buf[4 + length:]
                yield kind, body
            chunk = self.s.recv(1 << 16)
            if not chunk:
                return
            self.buf += chunk

def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)

# transfer: 100,000 bytes of Data payload, then End
c = Conn()
c.s.sendall(request(6, 5000, struct.pack(">Q", 100_000)))
payload, end = 0, None
for kind, body in c.frames():
    check(kind != 3, "transfer refused: %r" % body)
    if kind == 5:
        payload += len(body)
    if kind == 6:
        end = struct.unpack(">QQ", body[:16])
check(end is not None, "transfer: no End")
check(payload == 100_000, "transfer: %d B of payload, want 100000" % payload)
print("transfer: 100000 B in %d B of Data payload, End bytes %d" % (payload, end[1]))

# udp source: 2 Mbit/s of 500 B for 500 ms to our UDP port
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
u.settimeout(2.0)  # ends the reader 2 s after the last datagram
seqs, bad = [], []
def receive():  # beside the control connection: the socket's buffer holds ~170 of them
    while True:
        try:
            d = u.recv(2048)
        except socket.timeout:
            return
        if len(d) != 500 or d[:4] != b"NSFL":
            bad.append(d[:8])
        seqs.append(struct.unpack(">I", d[4:8])[0])
reader = threading.Thread(target=receive)
reader.start()
c = Conn()
c.s.sendall(request(5, 500, struct.pack(">HQI", u.getsockname()[1], 2_000_000, 500)))
sent = None
for kind, body in c.frames():
    check(kind != 3, "udp source refused: %r" % body)
    if kind == 6:
        sent = struct.unpack(">QQ", body[:16])[1]
reader.join()
check(not bad, "udp source: datagrams without the flood header: %r" % bad[:3])
check(sent is not None and sent > 0, "udp source: no End with a count")
check(seqs == list(range(sent)), "udp source: %d datagrams, End says %d sent" % (len(seqs), sent))
# 500 ms at one datagram per 2 ms: 250 (the schedule's last slot may fall at the end).
check(240 <= sent <= 251, "udp source: %d datagrams sent in 500 ms at 2 ms each" % sent)
print("udp source: %d datagrams, sequence 0..%d complete" % (sent, sent - 1))

# udp sink: registered port counted and reported, others not
mine = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
mine.bind(("127.0.0.1", 0))
other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
other.bind(("127.0.0.1", 0))
c = Conn()
c.s.sendall(request(4, 5000, struct.pack(">HQI", mine.getsockname()[1], 1_000_000, 100)))
kind, body = next(c.frames())
check(kind == 2, "udp sink: expected Accept, got type %d %r" % (kind, body))
sink = ("127.0.0.1", struct.unpack(">H", body)[0])
def datagram(seq):
    return (b"NSFL" + struct.pack(">IqQ", seq, time.monotonic_ns(), 0)).ljust(100, b"\0")
for seq in range(100):
    mine.sendto(datagram(seq), sink)
    if seq % 20 == 0:
        other.sendto(datagram(seq), sink)
mine.sendto(b"\1" * 100, sink)
time.sleep(0.2)
c.s.shutdown(socket.SHUT_WR)
got, counted = [], None
for kind, body in c.frames():
    if kind == 9:
        n = body[0]
        check(len(body) == 1 + 12 * n, "arrivals: %d bytes for %d" % (len(body), n))
        got += [struct.unpack(">Iq", body[1 + 12 * i:13 + 12 * i])[0] for i in range(n)]
    if kind == 6:
        counted = struct.unpack(">QQ", body[:16])[1]
check(got == list(range(100)), "udp sink reported %r" % got[:10])
check(counted == 100, "udp sink End counts %r" % counted)
print("udp sink: 100 arrivals reported, End counts 100")

# a udp source of 10-byte datagrams: refused, the reason names the field
c = Conn()
c.s.sendall(request(5, 500, struct.pack(">HQI", 40000, 1_000_000, 10)))
kind, body = next(c.frames())
check(kind == 3 and b"request.size: 10 is not in 24..1472" in body, "bad size: %d %r" % (kind, body))
PY
grep -q "rejected: request.size: 10 is not in 24..1472" "$work/server.log" \
  || fail "server did not log the refusal: $(cat "$work/server.log")"
grep -q "transfer for 5000 ms, dscp 0, 100000 B" "$work/server.log" \
  || fail "server did not log the transfer: $(cat "$work/server.log")"
kill "$server_pid"
wait "$server_pid" || fail "server exited $? on SIGTERM"
server_pid=
echo "PASS"

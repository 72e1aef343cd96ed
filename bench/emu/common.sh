# Shared set-up of the emulator benchmarks (sourced by forwarding.sh and offload.sh; not run on
# its own). Before sourcing, set `bench_name` (a short word: namespace names and the scenario
# title). Gives:
#   $src, $work (a scratch directory removed on exit with the namespaces below), $ns_a, $ns_b;
#   scenario NAME RATE DELAY NIC   writes $work/NAME.toml: two x86-desktop hosts with NIC on a
#                                  wire of RATE and DELAY, 10 s, no traffic;
#   print_machine                  the machine and its load, for the benchmark record;
#   bare_veth LABEL on|off IPERF3_CLIENT_ARGS...
#                                  a veth pair between $ns_a and $ns_b with every offload on or
#                                  off (tx checksum, sg, tso, gso, gro), iperf3 through it for
#                                  $secs seconds, then the pair removed: the kernel's own figure.
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
ns_a="ns${bench_name}-$$-a"
ns_b="ns${bench_name}-$$-b"
cleanup() {
  # The baseline's iperf3 server (-1: it exits after one test, but not if the client failed).
  [ -s "$work/iperf3.pid" ] && kill "$(cat "$work/iperf3.pid")" 2>/dev/null || true
  ip netns del "$ns_a" 2>/dev/null || true
  ip netns del "$ns_b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"

scenario() {  # name rate delay nic
  cat > "$work/$1.toml" <<TOML
[scenario]
name = "$bench_name benchmark: $2, $3"
duration = "10s"
[hosts.a]
cpu = "x86-desktop"
nic = "$4"
[hosts.b]
cpu = "x86-desktop"
nic = "$4"
[wire]
rate = "$2"
delay = "$3"
TOML
}

print_machine() {
  echo "machine: $(nproc) vCPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), kernel $(uname -r)"
  echo "date: $(date -u +%FT%TZ), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
}

bare_veth() {  # label, offloads on|off, iperf3 client options...
  local label=$1 setting=$2
  shift 2
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip -n "$ns_a" link add v0 type veth peer name v1 netns "$ns_b"
  ip netns exec "$ns_a" ethtool -K v0 tx "$setting" sg "$setting" tso "$setting" gso "$setting" \
    gro "$setting" >/dev/null 2>&1 || true
  ip netns exec "$ns_b" ethtool -K v1 tx "$setting" sg "$setting" tso "$setting" gso "$setting" \
    gro "$setting" >/dev/null 2>&1 || true
  ip -n "$ns_a" addr add 198.19.0.1/24 dev v0
  ip -n "$ns_b" addr add 198.19.0.2/24 dev v1
  for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_a" link set v0 up
  ip -n "$ns_b" link set v1 up
  ip netns exec "$ns_b" iperf3 -s -1 -D -I "$work/iperf3.pid"
  sleep 0.3
  echo "## bare veth, $label"
  /usr/bin/time -f "  (iperf3 client: %e s elapsed, %U s user, %S s system)" \
    ip netns exec "$ns_a" iperf3 -c 198.19.0.2 -t "$secs" -f m "$@" 2>&1 |
    grep -E "SUM.*(sender|receiver)|^\[ *[0-9]+\].*(sender|receiver)|iperf3 client" | tail -3
  ip netns del "$ns_a"
  ip netns del "$ns_b"
  rm -f "$work/iperf3.pid"
}

#!/usr/bin/env bash
# Prints a Markdown table from result lines of bench/ns3/stmmac_bql (or any program printing the
# same flat JSON keys, e.g. nicsim's run of the same case): one row per JSON line, so ns-3 and
# nicsim results for the same case can be shown side by side.
# Usage: bench/ns3/table.sh [FILE...]   (reads stdin without files; lines not starting with '{'
# are ignored). Missing keys print as "-".
set -euo pipefail
cat "$@" | awk '
function get(key,   m) {
  if (match($0, "\"" key "\":(\"[^\"]*\"|[^,}]*)")) {
    m = substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    gsub(/"/, "", m)
    return m
  }
  return "-"
}
function fmt(v, f) { return (v == "-" || v == "null") ? "-" : sprintf(f, v) }
function mega(v) { return (v == "-" || v == "null") ? v : v / 1e6 }
BEGIN {
  print "| tool | case | link | qdisc | BQL | goodput Mbit/s | probe RTT mean ms | events | wall s | CPU s | M events/s | sim/wall |"
  print "|---|---|---|---|---|---|---|---|---|---|---|---|"
}
/^\{/ {
  rate = get("rate_mbit")
  link = (rate == "-") ? "-" : (rate >= 1000 ? rate / 1000 " Gbit/s" : rate " Mbit/s")
  tool = get("tool"); if (get("tool_version") != "-") tool = tool " " get("tool_version")
  bql = get("bql"); bql = (bql == "true") ? "on" : (bql == "false" ? "off" : bql)
  printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
    tool, get("case"), link, get("qdisc"), bql,
    fmt(get("goodput_mbit"), "%.1f"), fmt(get("probe_rtt_mean_ms"), "%.2f"),
    fmt(mega(get("events")), "%.3f M"), fmt(get("wall_s"), "%.2f"), fmt(get("cpu_s"), "%.2f"),
    fmt(mega(get("events_per_s")), "%.3f"), fmt(get("sim_per_wall"), "%.2f")
}'

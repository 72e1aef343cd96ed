#!/usr/bin/python3
"""Exits 0 when this process may open an ICMP socket (a raw one with CAP_NET_RAW, else a ping
socket within net.ipv4.ping_group_range), 1 otherwise: what `nicsim rrul` needs for its ping
probe (docs/live.md). The live tests use it to know whether the ping probe must be there."""
import socket
import sys

for kind in (socket.SOCK_RAW, socket.SOCK_DGRAM):
    try:
        socket.socket(socket.AF_INET, kind, socket.IPPROTO_ICMP).close()
        sys.exit(0)
    except OSError:
        pass
sys.exit(1)

"""Which addresses a local port listens on: a serving process must not be reachable from the LAN.

Vertex's contract lets a serving container listen on 0.0.0.0, where only Vertex's front end
can reach it. Locally that would put the user's model, and whatever else the server answers,
on every network the machine is on. Linux lists listening sockets in /proc/net/tcp{,6}.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
PROC_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
LISTEN = "0A"


def decode_address(hex_address: str) -> IPAddress:
    """/proc's address: IPv4 as one little-endian word, IPv6 as four little-endian words."""
    raw = bytes.fromhex(hex_address)
    words = [raw[i : i + 4][::-1] for i in range(0, len(raw), 4)]
    return ipaddress.ip_address(b"".join(words))


def listening_addresses(port: int, tables: tuple[Path, ...] = PROC_TABLES) -> list[IPAddress]:
    """The local addresses of sockets listening on `port`."""
    found: list[IPAddress] = []
    for table in tables:
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            local, _remote, state = line.split()[1:4]
            address, hex_port = local.split(":")
            if state == LISTEN and int(hex_port, 16) == port:
                found.append(decode_address(address))
    return found


def is_loopback(address: IPAddress) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def exposed_addresses(port: int) -> list[IPAddress]:
    """Addresses other than loopback that `port` listens on (0.0.0.0 and :: included)."""
    return [address for address in listening_addresses(port) if not is_loopback(address)]

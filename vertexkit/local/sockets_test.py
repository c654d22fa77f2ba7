from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from vertexkit.local.sockets import (
    decode_address,
    exposed_addresses,
    is_loopback,
    listening_addresses,
)

needs_proc = pytest.mark.skipif(
    not Path("/proc/net/tcp").exists(), reason="this system has no /proc/net/tcp (not Linux)"
)


@pytest.mark.parametrize(
    ("hex_address", "expected"),
    [
        ("0100007F", "127.0.0.1"),
        ("00000000", "0.0.0.0"),
        ("1401A8C0", "192.168.1.20"),
        ("00000000000000000000000001000000", "::1"),
        ("00000000000000000000000000000000", "::"),
        ("0000000000000000FFFF00000100007F", "::ffff:127.0.0.1"),
    ],
)
def test_decode_address(hex_address: str, expected: str) -> None:
    assert decode_address(hex_address) == ipaddress.ip_address(expected)


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.3", False),
    ],
)
def test_is_loopback(address: str, loopback: bool) -> None:
    assert is_loopback(ipaddress.ip_address(address)) is loopback


def listener(host: str) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((host, 0))
    sock.listen()
    return sock


@needs_proc
def test_a_socket_on_every_interface_is_exposed() -> None:
    with listener("0.0.0.0") as sock:
        port = sock.getsockname()[1]
        assert exposed_addresses(port) == [ipaddress.ip_address("0.0.0.0")]


@needs_proc
def test_a_loopback_socket_is_not_exposed() -> None:
    with listener("127.0.0.1") as sock:
        port = sock.getsockname()[1]
        assert listening_addresses(port) == [ipaddress.ip_address("127.0.0.1")]
        assert exposed_addresses(port) == []

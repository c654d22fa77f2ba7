"""A pytest plugin the harness adds (`-p connection_guard`), not the user's code: records every
connection attempt and name lookup that would leave this machine (and any use of the
unreachable proxy the harness sets), into $CONNECTIONS_FILE, and refuses it."""

import ipaddress
import os
import socket
from collections.abc import Callable

LOCAL_NAMES = {"localhost", "127.0.0.1", "::1", "", None}
PROXY_PORT = int(os.environ.get("GUARD_PROXY_PORT", "9"))
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_getaddrinfo = socket.getaddrinfo


def _record(what: str) -> None:
    with open(os.environ["CONNECTIONS_FILE"], "a", encoding="utf-8") as out:
        out.write(what + "\n")


def _leaves(address: object) -> bool:
    if not isinstance(address, tuple):
        return False  # a Unix socket
    host, port = address[0], address[1]
    try:
        return not ipaddress.ip_address(host).is_loopback or port == PROXY_PORT
    except ValueError:
        return host not in LOCAL_NAMES


def connect(self: socket.socket, address: object) -> None:
    if _leaves(address):
        _record(f"connect {address}")
        raise OSError(f"connection_guard: {address} would leave this machine")
    return _connect(self, address)


def connect_ex(self: socket.socket, address: object) -> int:
    if _leaves(address):
        _record(f"connect {address}")
        return 111
    return _connect_ex(self, address)


def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
    if host not in LOCAL_NAMES and not str(host).startswith("127."):
        _record(f"lookup {host}")
        raise socket.gaierror(f"connection_guard: looking up {host}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo


def _guard_grpc() -> None:
    """gRPC dials from C, past the socket patch: record a channel to any non-local target."""
    import grpc
    import grpc.aio

    def guarded(create: Callable[..., object]) -> Callable[..., object]:
        def channel(target: str, *args: object, **kwargs: object) -> object:
            if not target.split(":")[0].lstrip("[").startswith(("127.", "localhost", "::1")):
                _record(f"grpc {target}")
                raise OSError(f"connection_guard: a gRPC channel to {target}")
            return create(target, *args, **kwargs)

        return channel

    for module in (grpc, grpc.aio):
        module.secure_channel = guarded(module.secure_channel)
        module.insecure_channel = guarded(module.insecure_channel)


_guard_grpc()

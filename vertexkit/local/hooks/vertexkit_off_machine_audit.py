"""An audit of the seal: with `VERTEXKIT_OFF_MACHINE_LOG=<file>` set, every Python process the
local cloud starts (and `vertexkit local exec`'s) records into that file, and refuses, every
connection or name lookup that would leave this machine. The test suite sets it for every test
and fails a test whose processes recorded anything (conftest.py); a user can set it on
`vertexkit local up` to see whether a trainer of theirs reaches for the network.

It sees what Python's sockets do: a C library's own sockets (gRPC's core, google-cloud-cpp) pass
it by, which is why the seal points those at the local cloud by their own settings. pip is not
audited: a task's `packages_to_install` reaches the package index the user configured, as it
does from a Vertex VM; that is no Google API and no part of the seal.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import sys
from typing import Any

LOG_ENV = "VERTEXKIT_OFF_MACHINE_LOG"
_PIP = re.compile(r"pip(\d+(\.\d+)?)?|__pip-runner__\.py")  # pip, pip3, pip3.11, pip's runner
_LOCAL_NAMES = {"localhost", "", None, socket.gethostname()}
_installed = False


def off_machine(host: Any) -> bool:
    """Whether connecting to `host` (a name or an address) leaves this machine."""
    if isinstance(host, bytes):
        host = host.decode()
    if host in _LOCAL_NAMES:
        return False
    try:
        return not ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return not str(host).endswith(".localhost")


def _is_address(host: Any) -> bool:
    try:
        ipaddress.ip_address(host.decode() if isinstance(host, bytes) else str(host))
    except ValueError:
        return False
    return True


def record(what: str) -> None:
    with open(os.environ[LOG_ENV], "a", encoding="utf-8") as log:
        log.write(f"pid {os.getpid()}: {what}\n")


def install() -> None:
    """Patches the socket module once: off-machine connects and lookups are recorded, refused."""
    global _installed
    if _installed:
        return
    _installed = True
    connect, connect_ex, getaddrinfo = (
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
    )  # fmt: skip

    def leaves(address: object) -> bool:
        return isinstance(address, tuple) and off_machine(address[0])  # not a Unix socket

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if leaves(address):
            record(f"connect {address}")
            raise OSError(f"{LOG_ENV}: a connection to {address} would leave this machine")
        return connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        if leaves(address):
            record(f"connect {address}")
            return 111  # ECONNREFUSED
        return connect_ex(self, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if off_machine(host) and not _is_address(host):  # an address is no lookup: see connect
            record(f"lookup {host}")
            raise socket.gaierror(f"{LOG_ENV}: looking up {host} would leave this machine")
        return getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = guarded_getaddrinfo


def install_from_env() -> None:
    if os.environ.get(LOG_ENV) and not _is_pip():
        install()


def _is_pip() -> bool:
    """`pip ...`, `python -m pip ...` (whose argv[0] is still "-m" here), or pip's own runner
    (`python .../pip/__pip-runner__.py`: how `pip --python ENV` runs in the target)."""
    argv = list(getattr(sys, "orig_argv", sys.argv))
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1] == "pip"
    programs = [os.path.basename(word) for word in argv[:2]]
    return any(_PIP.fullmatch(name) for name in programs)

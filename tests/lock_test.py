"""The venv holds exactly requirements.lock's versions (`make install`, .ci/run), package by
package: no package the lock does not name, none at another version, none of the lock's missing.

The lock's last section (after TORCH_SECTION) is the torch extra that .ci/run adds where a local
CPU wheel exists; it is checked when torch is installed and may be absent otherwise.
`make test-latest` runs the suite against the newest versions on purpose and says so with
VERTEXKIT_UNLOCKED, the one case where no lock applies.
"""

from __future__ import annotations

import os
import re
from importlib import metadata
from pathlib import Path

import pytest

LOCK = Path(__file__).resolve().parents[1] / "requirements.lock"
TORCH_SECTION = "# -- the torch extra"
OURS = {"vertexkit", "tabular-trainer"}  # installed editable from this checkout, never locked

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("VERTEXKIT_UNLOCKED")),
    reason="make test-latest: the newest versions the ranges allow, not the lock",
)


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def read_lock(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """The lock's pins: (the base section, the torch section), name -> version."""
    base: dict[str, str] = {}
    torch: dict[str, str] = {}
    section = base
    for line in text.splitlines():
        if line.startswith(TORCH_SECTION):
            section = torch
        elif line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            section[canonical(name)] = version.strip()
    return base, torch


def installed() -> dict[str, str]:
    found = {canonical(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}
    return {name: version for name, version in found.items() if name not in OURS}


def test_read_lock_splits_the_torch_section() -> None:
    base, torch = read_lock(f"# header\nPyYAML==6.0.2\n{TORCH_SECTION} --\ntorch==2.13.0+cpu\n")
    assert base == {"pyyaml": "6.0.2"}
    assert torch == {"torch": "2.13.0+cpu"}


def test_every_installed_package_is_the_locked_version() -> None:
    base, torch = read_lock(LOCK.read_text())
    locked = {**base, **torch}
    have = installed()
    drift = {name: (version, locked.get(name)) for name, version in have.items()
             if locked.get(name) != version}  # fmt: skip
    assert not drift, (
        "installed (version, locked version) differ from requirements.lock; "
        f"`rm -rf .venv && make install` reinstalls from the lock: {drift}"
    )


def test_every_locked_package_is_installed() -> None:
    base, torch = read_lock(LOCK.read_text())
    expected = {**base, **torch} if "torch" in installed() else base
    missing = sorted(set(expected) - set(installed()))
    assert not missing, f"requirements.lock names packages the venv lacks: {missing}"
